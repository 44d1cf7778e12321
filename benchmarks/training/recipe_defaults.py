#!/usr/bin/env python3
"""Does each recipe's default help the default model? (issue 12, §4)

    python benchmarks/training/recipe_defaults.py --output DIR [--recipes siamese xkd ...] [--preset NAME]
        [--set K=V ...]

Runs ``xlsent train RECIPE -o DIR/RECIPE`` for each recipe with its shipped default config (or
``--preset``, with ``--set`` overrides), on the default model and the bundled data, then reads the
run's ``metrics.json`` (schema ``xlsent.metrics/2``) and compares the trained model with the
recipe's own base model (the first model of the report: e5-small for siamese, xkd, triplet-kd and
multistage; all-MiniLM-L6-v2 on glossed input for gloss) on the held-out New Testament (1,000
verse pairs, both directions) and the UDHR mean over 47 languages (both directions, where the
config's ``eval.udhr`` is on).

Verdict per recipe: **helps** when no P@1 falls, **within noise** when the worst fall is under
one point, **hurts** otherwise. A finished run is reused (the recipes skip finished stages), so a
second call only re-reads the metrics. The table is printed and written to ``DIR/defaults.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

RECIPES = ("siamese", "xkd", "triplet-kd", "gloss", "multistage")
COLUMNS = (("NT ny→en", "retrieval", "tgt2src"), ("NT en→ny", "retrieval", "src2tgt"),
           ("UDHR xx→en", "udhr", "tgt2src"), ("UDHR en→xx", "udhr", "src2tgt"))


def p_at_1(model: dict, section: str, direction: str) -> float | None:
    if section == "udhr":
        u = model.get("udhr")
        return None if not u else u["mean"][direction]["p@1"]
    return model["retrieval"][direction]["p@1"]


def compare(metrics: dict) -> dict:
    """Base (first model) vs trained (last model) P@1 per column, the worst change and the verdict."""
    names = list(metrics["models"])
    base, trained = metrics["models"][names[0]], metrics["models"][names[-1]]
    rows = {}
    for label, section, direction in COLUMNS:
        b, t = p_at_1(base, section, direction), p_at_1(trained, section, direction)
        if b is not None and t is not None:
            rows[label] = {"base": b, "trained": t, "delta": t - b}
    worst = min(r["delta"] for r in rows.values())
    verdict = "helps" if worst >= 0 else "within noise" if worst > -0.01 else "hurts"
    return {"base": names[0], "trained": names[-1], "p@1": rows, "worst_delta": worst, "verdict": verdict}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", "-o", required=True, type=Path)
    ap.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=RECIPES)
    ap.add_argument("--preset", default=None, help="a shipped preset for every recipe that has it")
    ap.add_argument("--set", dest="sets", nargs="*", default=[], help="key=value overrides for every recipe")
    args = ap.parse_args()

    from xlsent.recipes.config import presets

    summary = {}
    for recipe in args.recipes:
        run = args.output / recipe
        cmd = [sys.executable, "-m", "xlsent.cli.main", "train", recipe, "-o", str(run)]
        if args.preset and args.preset in presets(recipe):
            cmd += ["--preset", args.preset]
        for s in args.sets:
            cmd += ["--set", s]
        print("$", " ".join(cmd[2:]), flush=True)
        subprocess.run(cmd, check=True)
        metrics = json.loads((run / "metrics.json").read_text())
        summary[recipe] = {"command": " ".join(["xlsent", *cmd[3:]]), **compare(metrics)}
        (args.output / "defaults.json").write_text(json.dumps(summary, indent=2))

    print(f"\n{'recipe':<12}" + "".join(f"{c[0]:>25}" for c in COLUMNS) + "   verdict")
    for recipe, s in summary.items():
        cells = []
        for label, _, _ in COLUMNS:
            r = s["p@1"].get(label)
            cells.append(f"{'—':>25}" if r is None else f"{r['base']:.3f} → {r['trained']:.3f} ({r['delta']:+.3f})".rjust(25))
        print(f"{recipe:<12}" + "".join(cells) + f"   {s['verdict']}")
    print(f"\nwritten: {args.output / 'defaults.json'}")


if __name__ == "__main__":
    main()
