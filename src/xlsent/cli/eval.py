"""``xlsent eval``: evaluations that write JSON and print a table."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from xlsent.cli.common import choice, console, err_console, retrieval_table
from xlsent.evaluation.retrieval import SIMILARITIES, evaluate_many, mean_row
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_json_atomic

app = typer.Typer(help="Evaluate models.", no_args_is_help=True)


def retrieval_rows(results) -> list[dict]:
    rows = []
    for r in results:
        d = r.to_dict()
        d["pool"] = r.tgt_lang or r.dataset
        rows.append(d)
    return rows


@app.command("retrieval")
def retrieval(
    model: str = typer.Option(..., "--model", "-m", help="registered name or local model folder"),
    pairs: str = typer.Option(None, "--pairs", help="pairs file: TSV, JSONL, or Moses A,B"),
    dataset: str = typer.Option(None, "--dataset", help="bundled dataset, e.g. bible-en-ny:test, udhr, udhr:nya"),
    similarity: str = typer.Option("cosine", help=f"{' | '.join(SIMILARITIES)}"),
    k_nn: int = typer.Option(4, help="neighbours per direction for margin scoring"),
    resamples: int = typer.Option(1000, help="bootstrap resamples for the 95% CIs"),
    seed: int = typer.Option(0, help="seed for sampling and the bootstrap"),
    sample: int = typer.Option(0, help="evaluate on this many pairs drawn at random (0 = all)"),
    by_language: bool = typer.Option(None, help="one pool per target language (default: on for multi-language data)"),
    on_bad_lines: str = typer.Option("error", help="error | skip"),
    output: Path = typer.Option(None, "--output", "-o", help="write the JSON result here"),
) -> None:
    """P@1/5/10 both directions over the whole pool, tie-aware, with bootstrap CIs."""
    from xlsent.data.bundled import split_by_language
    from xlsent.data.loading import load_pairs
    from xlsent.encoding.embed import embed
    from xlsent.models.registry import load_model

    choice(similarity, SIMILARITIES, "--similarity")
    if bool(pairs) == bool(dataset):
        raise XlsentError("give exactly one of --pairs FILE or --dataset NAME")
    if resamples < 1000:
        err_console.print(f"[yellow]note: {resamples} bootstrap resamples (< 1,000) give rough CIs[/yellow]")
    source = pairs or dataset
    loaded = load_pairs(source, on_bad_lines=on_bad_lines, dedupe=False, sample=sample, seed=seed)
    for line in loaded.notes():
        err_console.print(f"[dim]{escape(line)}[/dim]")
    ds = loaded.dataset
    langs = list(dict.fromkeys(ds["tgt_lang"])) if "tgt_lang" in ds.column_names else [""]
    split = by_language if by_language is not None else len(langs) > 1
    parts = split_by_language(ds) if split else {source: ds}
    groups = {name: (list(p["src"]), list(p["tgt"]), (p["src_lang"][0] if "src_lang" in p.column_names else ""),
                     (p["tgt_lang"][0] if "tgt_lang" in p.column_names and split else "")) for name, p in parts.items()}
    st = load_model(model)
    results = evaluate_many(groups, lambda texts: embed(st, texts), model, similarity, resamples, seed, k_nn, source)
    rows = retrieval_rows(results)
    table = retrieval_table(rows, f"{model} on {source} ({similarity})")
    if len(results) > 1:
        m = mean_row(results)
        table.add_row("mean", str(sum(r.n for r in results)), *[
            f"{m[d][f'p@{k}']:.3f}" for d in ("src2tgt", "tgt2src") for k in (1, 5, 10)
        ])
    console.print(table)
    payload = results[0].to_dict() if len(results) == 1 else [r.to_dict() for r in results]
    if output:
        write_json_atomic(output, payload)
        console.print(f"wrote {output}")
    else:
        err_console.print("[dim](pass --output FILE.json to save the JSON)[/dim]")
