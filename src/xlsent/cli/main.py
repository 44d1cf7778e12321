"""Entry point: ``xlsent <group> <command>``. User errors print one line and exit 2."""

from __future__ import annotations

import errno
import sys

import typer
from rich.markup import escape

from xlsent.cli import align, data, demo, embed, export, gloss, mine, models, perturb, serve, train
from xlsent.cli import eval as evaluate
from xlsent.cli.common import XlsentGroup, err_console
from xlsent.utils.errors import XlsentError

app = typer.Typer(cls=XlsentGroup, help="Cross-lingual sentence embeddings for low-resource languages — offline.",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)


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
    from xlsent.utils.progress import show_progress_bars

    show_progress_bars(True)  # the CLI shows progress (with an ETA) wherever work takes long; the service turns it off


for group in (models, data, evaluate, train):
    app.add_typer(group.app, name=group.__name__.rsplit(".", 1)[1])
for command in (align.align_command, embed.embed_command, export.export_command, demo.demo_command,
                gloss.gloss_command, mine.mine_command, perturb.perturb_command, serve.serve_command):
    app.command(command.__module__.rsplit(".", 1)[1])(command)  # named as the module it lives in


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
    except OSError as exc:  # a full disk under a writer of a library's own: one line, never a traceback
        from xlsent.utils.io import WriteFailed, free_space

        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        where = exc.filename or exc.filename2
        failure = WriteFailed(where or "a file", "a file", "no space left on the device", full=True,
                              free=free_space(where) if where else None)
        err_console.print(f"[bold red]error:[/bold red] {escape(str(failure))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
