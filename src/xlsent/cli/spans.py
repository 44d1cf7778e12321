"""``xlsent eval spans``: structural-span retrieval P@1 (what the SCP recipe trains) for one or more models."""

from __future__ import annotations


import typer
from rich.markup import escape

from xlsent.cli.common import console, main_score_line, output_file, show_note, table
from xlsent.cli.options import JsonOutput, Resamples, takes
from xlsent.utils.io import write_json_atomic


@takes("device")
def eval_spans(
    models: list[str] = typer.Option(..., "--model", "-m", help="model name or folder (repeat to compare)"),
    spans: str = typer.Option("structural-en-ny:test", "--spans", help="structural-words file "
                              "(`xlsent data structural-words`) or a bundled set"),
    sample: int = typer.Option(1000, help="pairs of the pool (seeded sample; 0 = all)"),
    seed: int = typer.Option(0, help="sample and bootstrap seed"),
    max_length: int = typer.Option(128, help="pieces per sentence (spans past it are left out and counted)"),
    resamples: Resamples = 1000,
    output: JsonOutput = None,
    run: dict = None,
) -> None:
    """Each English structural span (subject, verb, object, entity) finds its aligned span of the other language
    among every span of the pool, and back: P@1 by cosine of the SCP span vectors (Chen et al. 2023, Eq. 4)."""
    from xlsent.api.evaluation import evaluate

    output_file(output)
    results = []
    for m in models:
        show_note(f"structural-span retrieval: {m}…")
        result = evaluate(m, f"spans:{spans}", sample=sample, seed=seed, max_length=max_length, resamples=resamples,
                          on_note=show_note, **run)
        main_score_line(result.main_score_name, result.main_score, m)
        results.append(result.results[0])
    t = table(f"structural-span retrieval P@1 on {spans} ({results[0].pairs} pairs, {results[0].spans} spans)",
              ("model", "en→xx", "xx→en", "subject", "verb", "object", "entity"),
              caption="per-type columns: en→xx P@1 of the spans of that type")
    for r in results:
        s, b = r.src2tgt, r.by_type
        ci = f" [{s.ci95[0]:.3f}, {s.ci95[1]:.3f}]" if s.ci95 else ""
        t.add_row(escape(r.model), f"{s.p_at_1:.3f}{ci}", f"{r.tgt2src.p_at_1:.3f}",
                  *[f"{b[k].src2tgt:.3f}" if k in b else "—" for k in ("subject", "verb", "object", "entity")])
    console.print(t)
    if output is not None:
        write_json_atomic(output, {"schema": "xlsent.span-retrieval/1", "spans": spans, "sample": sample,
                                   "seed": seed, "results": [r.to_dict() for r in results]})
        console.print(f"wrote {output}")
