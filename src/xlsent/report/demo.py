"""The report of ``xlsent demo``: ``report.json`` (the metrics in the one schema of every run, the demo's config and
timings), ``embedding_space.png`` and ``report.html`` (the before/after tables and the plot)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any


def write_demo_report(output: Path, cfg: Any, label: str, result: Any, run: Path, timings: dict[str, float],
                      started: float) -> None:
    """Write the demo's report into ``output`` from its adapt run (``result``, run folder ``run``): the plot of the
    evaluation's own vectors of the first held-out NT pairs (no model loaded or run again), ``timings`` with
    ``total`` (since ``started``, a :func:`time.perf_counter`) added."""
    from xlsent.report.html import comparison_table, language_tail_section, page
    from xlsent.report.plots import embedding_space_png
    from xlsent.utils.io import write_bytes_atomic, write_json_atomic, write_text_atomic

    held, e = result.held_out, cfg.eval
    mb_all, mt_all = held.models[next(iter(held.models))], held.models["adapted"]
    nt_base, nt_trained = mb_all.retrieval, mt_all.retrieval
    u_base, u_trained = (mb_all.udhr or {}).get("languages", []), (mt_all.udhr or {}).get("languages", [])
    base_vecs, trained_vecs = held.plot_vectors[next(iter(held.models))], held.plot_vectors["adapted"]
    n_plot = len(trained_vecs[0])
    png = embedding_space_png([(f"base {label}", *base_vecs), ("after adapt", *trained_vecs)], "English", "Chichewa")
    timings["total"] = time.perf_counter() - started
    # the metrics in the one schema of every run (xlsent.metrics/2), plus the demo's config and timings
    write_json_atomic(output / "report.json", {"config": cfg, "model": str(result.model_path),
                                               "metrics": result.metrics, "timings_seconds": timings})
    write_bytes_atomic(output / "embedding_space.png", png)
    sections = [
        f"<p>Model: {label} adapted (xlsent train adapt) on <code>{cfg.train.pairs}</code> "
        f"({f'{cfg.train.sample} pairs drawn from each source' if cfg.train.sample else 'every pair'}, a part held "
        "out to choose the step); "
        f"evaluated on held-out data only. Config: "
        f"<code>{run / 'config.yaml'}</code>.</p>",
        comparison_table("Bible, New Testament (held out)", [("en–ny", nt_base["n"], nt_base, nt_trained)]),
        comparison_table("UDHR paragraphs, per language",
                         [(b["tgt_lang"], b["n"], b, a) for b, a in zip(u_base, u_trained)]),
    ]
    if (mt_all.udhr or {}).get("summary"):  # eval.udhr_pool=udhr-all:…: P@1 by script and tokenizer pieces
        sections.append(language_tail_section(
            f"{e['udhr_pool']}: P@1 against the tokenizer's pieces per word and unknown-piece rate",
            {f"base {label}": mb_all.udhr, "adapted": mt_all.udhr}))
    write_text_atomic(output / "report.html", page(
        "xlsent demo: adapting e5-small to English–Chichewa pairs", sections, png,
        f"PCA of {n_plot} held-out NT verse pairs, English (red) and Chichewa (blue), before and after."))
