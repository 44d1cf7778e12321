"""Markdown tables for docs/results.md from `xlsent eval adversarial` folders (and `eval ner` JSON files).

    python benchmarks/token_transfer/token_transfer_report.py runs/adv-ner [runs/adv-pos]
        [--ner-json runs/ner-ja.json …]

Prints, per adversarial folder: base score per condition (mean ± sd over seeds, seed 0's bootstrap CI),
the Table 3.6-style effects (mean Δ, t-test p over runs × pairs, paired bootstrap interval and p),
the entity overlap; and for each `eval ner` JSON its mean ± sd and each model's micro F1 with CI.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def _p(p) -> str:
    return "—" if p is None else ("< 0.0001" if p < 1e-4 else f"{p:.4f}")


def adversarial(folder: Path) -> None:
    rep = json.loads((folder / "adversarial.json").read_text())
    task = rep["task"]
    metric = "micro F1" if task == "ner" else "accuracy"
    print(f"\n#### {folder} — {task.upper()}, {rep['labels']} labels, {len(rep['seeds'])} seeds, "
          f"{', '.join(f'{k}: {v} test sentences' for k, v in rep['test_sentences'].items())}\n")
    print(f"| condition | base {metric} (mean ± sd over seeds) | seed 0 [95% CI] |")
    print("|---|---|---|")
    for cond in ("native", "transfer"):
        vals = [r["base"] for r in rep["runs"] if r["condition"] == cond]
        if not vals:
            continue
        key = next(k for k in rep["base_seed0_ci"] if k.endswith(cond))
        m = rep["base_seed0_ci"][key]["micro_f1" if task == "ner" else "accuracy"]
        sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
        print(f"| {cond} | {100 * statistics.mean(vals):.1f} ± {100 * sd:.1f} | "
              f"{100 * m['value']:.1f} [{100 * m['ci95'][0]:.1f}, {100 * m['ci95'][1]:.1f}] |")
    conds = list(dict.fromkeys(e["condition"] for e in rep["effects"]))
    print("\n| perturbation | " + " | ".join(f"{c}: Δ (points) | {c}: t-test p | {c}: bootstrap 95% [p]"
                                             for c in conds) + " |")
    print("|---|" + "---|---|---|" * len(conds))
    for p in dict.fromkeys(e["perturbation"] for e in rep["effects"]):
        cells = []
        for c in conds:
            e = next((e for e in rep["effects"] if e["condition"] == c and e["perturbation"] == p), None)
            if e is None:
                cells += ["—"] * 3
                continue
            ci = e["boot_ci"]
            cells += [f"{e['delta']:+.2f}", _p(e["t_p"]), f"[{ci[0]:+.2f}, {ci[1]:+.2f}] [{_p(e['boot_p'])}]"]
        print(f"| {p} | " + " | ".join(cells) + " |")
    for k, v in rep.get("overlap", {}).items():
        print(f"\nentity overlap {k}: {100 * v['entity_token_overlap']:.2f}% of test entity tokens, "
              f"{100 * v['distinct_entities_shared']:.1f}% of distinct test entities")
    counts = {}
    for cond in ("native", "transfer"):
        for p in rep["perturbations"]:
            log = folder / rep["pairs"][0]["name"] / cond / "perturbed" / f"{p}.conll.json"
            if log.exists():
                counts[(cond, p)] = len(json.loads(log.read_text())["replacements"])
    if counts:
        print("\nreplacements in the test sample: " + "; ".join(f"{c} {p} {n}" for (c, p), n in counts.items()))


def ner_json(path: Path) -> None:
    rep = json.loads(path.read_text())
    key = "micro_f1" if rep["task"] == "ner" else "accuracy"
    print(f"\n{path}: {rep['task'].upper()} on {rep['test']} ({rep['labels']} labels, {rep['sentences']} sentences): "
          f"mean {100 * rep['mean']:.1f} ± {100 * rep['sd']:.1f} over {len(rep['models'])} models")
    for name, s in rep["models"].items():
        m = s[key]
        extra = f", macro {100 * s['macro_f1']['value']:.1f}" if "macro_f1" in s else ""
        print(f"- {name}: {100 * m['value']:.1f} [{100 * m['ci95'][0]:.1f}, {100 * m['ci95'][1]:.1f}]{extra}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="*", type=Path)
    ap.add_argument("--ner-json", nargs="*", type=Path, default=[])
    args = ap.parse_args()
    for f in args.folders:
        adversarial(f)
    for j in args.ner_json:
        ner_json(j)


if __name__ == "__main__":
    main()
