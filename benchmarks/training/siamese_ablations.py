#!/usr/bin/env python3
"""The paper's ablations (Huang et al. 2023, Tables 6–9, 13) for the siamese recipe on English–Chichewa.

    python benchmarks/training/siamese_ablations.py [--quick] [--dev] [--output FILE]

Each row is one ``xlsent train siamese`` run (2,016 Old-Testament pairs, seed 0) with the
overrides shown, evaluated on the same 1,000 held-out New-Testament verse pairs (P@1,
cosine, tie-aware, 95% bootstrap CI). Encoder features are cached, so only the first
run of each layer pays for encoding. ``--quick`` runs a subset.

``--dev`` is where settings are chosen: training pairs from ``bible-en-ny:dev-train`` (the Old
Testament without eight books) and scores on 1,000 verse pairs of those books
(``bible-en-ny:dev``); the New Testament is not read. Without it the table is the final test.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

SETTINGS: list[tuple[str, list[str]]] = [
    ("paper defaults (layer 7, --preset paper)", ["features.layer=7"]),
    ("layer last (the default for e5-small: features.layer auto)", ["features.layer=last"]),
    ("layer last, 0 epochs (identity head + centering only)", ["features.layer=last", "optim.epochs=0"]),
    ("layer last, output_norm [unit] (no centering)", ["features.layer=last", "output_norm=[unit]"]),
    ("layer last, negatives random", ["features.layer=last", "negatives.strategy=random"]),
    ("layer last, negatives average", ["features.layer=last", "negatives.strategy=average"]),
    ("layer last, parallel only", ["features.layer=last", "negatives.use_negatives=false"]),
    ("layer last, head tanh", ["features.layer=last", "head.type=tanh"]),
    ("layer last, head tanh2", ["features.layer=last", "head.type=tanh2"]),
    ("layer last, distance manhattan", ["features.layer=last", "loss.distance=manhattan"]),
    ("layer last, distance cosine", ["features.layer=last", "loss.distance=cosine"]),
    ("layer last, lr 1e-4", ["features.layer=last", "optim.lr=1e-4"]),
    ("layer last, lr 1e-3", ["features.layer=last", "optim.lr=1e-3"]),
    ("mean of all layers", ["features.layer=all"]),
    ("CLS of last layer", ["features.pooling=cls", "features.layer=last"]),
]
QUICK = {SETTINGS[0][0], SETTINGS[1][0], "layer last, 0 epochs (identity head + centering only)", "mean of all layers",
         "CLS of last layer"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--dev", action="store_true", help="train on bible-en-ny:dev-train, score on bible-en-ny:dev")
    ap.add_argument("--output", type=Path, default=None, help="write all results as JSON")
    args = ap.parse_args()

    from xlsent.models.registry import quiet_libraries
    from xlsent.recipes.siamese import evaluate_run, train_siamese
    from xlsent.recipes.config import load_config

    quiet_libraries()
    rows = []
    root = Path(tempfile.mkdtemp(prefix="xlsent-ablation-"))
    base_printed = False
    print(f"pool: {'bible-en-ny:dev (development)' if args.dev else 'bible-en-ny:test (the final test)'}")
    print("| setting | ny→en P@1 [95% CI] | en→ny P@1 [95% CI] |")
    print("|---|---|---|")
    for i, (name, overrides) in enumerate(SETTINGS):
        if args.quick and name not in QUICK:
            continue
        split = ["train.pairs=bible-en-ny:dev-train", "eval.pairs=bible-en-ny:dev"] if args.dev else []
        cfg = load_config("siamese", overrides=[*overrides, *split, "eval.udhr=false"])  # one Bible pool only
        result = train_siamese(cfg, root / f"run{i}", progress=False)
        held = evaluate_run(result.trained)
        base_key = next(iter(held.models))
        m = {"base": held.models[base_key].retrieval, "trained": held.models["trained"].retrieval}

        def cell(x: dict) -> str:
            ci = x["ci95"]["p@1"]
            return f"{x['p@1']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"

        if not base_printed:
            print(f"| base e5-small (no training) | {cell(m['base']['tgt2src'])} | {cell(m['base']['src2tgt'])} |")
            base_printed = True
        print(f"| {name} | {cell(m['trained']['tgt2src'])} | {cell(m['trained']['src2tgt'])} |", flush=True)
        rows.append({"setting": name, "overrides": overrides, "base": m["base"], "trained": m["trained"]})
    if args.output:
        args.output.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
