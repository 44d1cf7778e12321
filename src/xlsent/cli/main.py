"""Entry point: ``xlsent <group> <command>``. User errors print one line and exit 2."""

from __future__ import annotations

import sys

import typer
from rich.markup import escape

from xlsent.cli import align as align_cmd
from xlsent.cli import data as data_cmd
from xlsent.cli import demo as demo_cmd
from xlsent.cli import embed as embed_cmd
from xlsent.cli import eval as eval_cmd
from xlsent.cli import export as export_cmd
from xlsent.cli import gloss as gloss_cmd
from xlsent.cli import mine as mine_cmd
from xlsent.cli import models as models_cmd
from xlsent.cli import perturb as perturb_cmd
from xlsent.cli import serve as serve_cmd
from xlsent.cli import train as train_cmd
from xlsent.cli.common import XlsentGroup, err_console
from xlsent.utils.errors import XlsentError

app = typer.Typer(
    cls=XlsentGroup,
    help="Cross-lingual sentence embeddings for low-resource languages — offline.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("xlsent")
        except PackageNotFoundError:  # run from a source tree that was never installed
            from xlsent import __version__ as v
        typer.echo(f"xlsent {v}")
        raise typer.Exit()


@app.callback()
def _root(
    _: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    pass


app.add_typer(models_cmd.app, name="models")
app.add_typer(data_cmd.app, name="data")
app.add_typer(eval_cmd.app, name="eval")
app.add_typer(train_cmd.app, name="train")
app.command("align")(align_cmd.align_command)
app.command("embed")(embed_cmd.embed_command)
app.command("export")(export_cmd.export_command)
app.command("demo")(demo_cmd.demo_command)
app.command("gloss")(gloss_cmd.gloss_command)
app.command("mine")(mine_cmd.mine_command)
app.command("perturb")(perturb_cmd.perturb_command)
app.command("serve")(serve_cmd.serve_command)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    err_console.print(f"[yellow]warning:[/yellow] {escape(str(message))}", highlight=False, soft_wrap=True)


def main() -> None:
    import warnings

    from xlsent.models.registry import quiet_libraries

    quiet_libraries()
    warnings.showwarning = _show_warning
    try:
        app()
    except XlsentError as exc:
        err_console.print(f"[bold red]error:[/bold red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
