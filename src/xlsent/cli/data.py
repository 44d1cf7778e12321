"""``xlsent data``: bundled datasets and corpus statistics."""

from __future__ import annotations

import json

import typer
from rich.markup import escape
from rich.table import Table

from xlsent.cli.common import console
from xlsent.data.bundled import BUNDLED, data_dir
from xlsent.data.loading import load_pairs

app = typer.Typer(help="Bundled datasets and corpus statistics.", no_args_is_help=True)


@app.command("list")
def list_data() -> None:
    """The datasets shipped with xlsent (usable as --dataset NAME)."""
    t = Table(title=f"bundled datasets ({data_dir()})")
    for c in ("name", "file", "description"):
        t.add_column(c)
    for d in BUNDLED.values():
        t.add_row(d.name, d.file, d.description)
    console.print(t)


@app.command("stats")
def stats(
    source: str = typer.Argument(..., help="dataset name (e.g. udhr, bible-en-ny:train) or pairs file"),
    model: str = typer.Option(None, "--model", "-m", help="also report this model's tokenizer: unk rate, pieces/word"),
    on_bad_lines: str = typer.Option("error", help="error | skip"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Pairs, languages, length distribution; with --model, tokenizer coverage per language."""
    from xlsent.data.stats import corpus_stats

    loaded = load_pairs(source, on_bad_lines=on_bad_lines, dedupe=False)
    tokenizer = None
    if model:
        from xlsent.models.registry import load_model

        tokenizer = load_model(model).tokenizer
    result = corpus_stats(loaded.dataset, tokenizer)
    result["source"] = source
    result["notes"] = loaded.notes()
    if as_json:
        console.print_json(json.dumps(result))
        return
    for line in loaded.notes():
        console.print(f"[dim]{escape(line)}[/dim]")
    t = Table(title=f"{source}: {result['pairs']} pairs")
    cols = ["language", "sentences", "unique", "words min", "median", "mean", "p95", "max"]
    if tokenizer is not None:
        cols += ["unk rate", "pieces/word"]
    for c in cols:
        t.add_column(c, justify="left" if c == "language" else "right")
    for lang, e in result["languages"].items():
        w = e["words"]
        row = [lang, str(e["sentences"]), str(e["unique"]), str(w["min"]), f"{w['median']:.0f}", f"{w['mean']:.1f}",
               f"{w['p95']:.0f}", str(w["max"])]
        if tokenizer is not None:
            row += [f"{e['unk_rate']:.4f}", f"{e['pieces_per_word']:.2f}"]
        t.add_row(*row)
    console.print(t)
