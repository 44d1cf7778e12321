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


@app.command("triplets")
def triplets(
    source: str = typer.Argument(..., help="bundled dataset (e.g. bible-en-ny:train, udhr) or a pairs file"),
    output: str = typer.Option(..., "--output", "-o", help="TSV to write: anchor<TAB>positive<TAB>negative"),
    negatives: str = typer.Option("section", help="section (other section of the same document) | random | hard"),
    teacher: str = typer.Option("minilm-en", help="model that mines hard negatives (negatives=hard)"),
    relative_margin: float = typer.Option(0.05, help="hard mining: skip candidates within this share of the positive's score"),
    seed: int = typer.Option(0, help="seed for negative sampling"),
    on_bad_lines: str = typer.Option("error", help="error | skip"),
) -> None:
    """Cross-lingual triplets from parallel data: anchor = low-resource side, positive = its English translation."""
    from pathlib import Path

    from xlsent.data.triplets import build_triplets
    from xlsent.utils.errors import XlsentError
    from xlsent.utils.io import write_text_atomic

    if negatives not in ("section", "random", "hard"):
        raise XlsentError(f"unknown --negatives '{negatives}': use section, random or hard")
    loaded = load_pairs(source, on_bad_lines=on_bad_lines, dedupe=False)
    model = None
    if negatives == "hard":
        from xlsent.models.registry import load_model

        model = load_model(teacher)
    ds, report = build_triplets(loaded.dataset, negatives, seed, teacher=model, relative_margin=relative_margin)
    for line in loaded.notes() + report.lines():
        console.print(f"[dim]{escape(line)}[/dim]")
    clean = [(a, p, n) for a, p, n in zip(ds["anchor"], ds["positive"], ds["negative"])]
    bad = sum(any("\t" in x or "\n" in x for x in row) for row in clean)
    if bad:
        raise XlsentError(f"{bad} sentence(s) contain tabs or newlines and cannot be written as TSV — clean the corpus first")
    write_text_atomic(Path(output), "anchor\tpositive\tnegative\n" + "".join("\t".join(r) + "\n" for r in clean))
    console.print(f"wrote {output} ({len(clean)} triplets, '{negatives}' negatives)")
