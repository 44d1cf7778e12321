#!/usr/bin/env python3
"""Paper 004's Fig. 3.6 for finished runs: triplet accuracy and mean cos(anchor, positive) by length difference.

    python benchmarks/distillation/triplet_length_plot.py RUN1/metrics.json[:MODEL] RUN2/metrics.json[:MODEL] …
        -o docs/triplet_length.png

Reads the ``triplets.by_length_difference`` rows that ``xlsent train xkd|triplet-kd|multistage``
write for every evaluated model (held-out triplets, negatives from another chapter of the
same book), prints them as a table and draws one curve per model.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+", help="metrics.json, optionally :model-name to pick one model")
    ap.add_argument("-o", "--output", required=True, type=Path)
    args = ap.parse_args()
    from xlsent.report.plots import length_difference_png

    curves = {}
    for spec in args.runs:
        path, _, pick = spec.partition(":")
        models = json.loads(Path(path).read_text())["models"]
        for name, m in models.items():
            if pick and name != pick:
                continue
            curves[f"{name} ({Path(path).parent.name})"] = m["triplets"]["by_length_difference"]
    for name, rows in curves.items():
        print(name)
        for r in rows:
            print(f"  {r['bin']:>6} n={r['n']:4d}  acc(cos) {r['accuracy_cosine']:.3f}  mean cos(a,p) {r['mean_cosine_positive']:.3f}")
    args.output.write_bytes(length_difference_png(curves, "held-out NT triplets (ny anchor, en positive, other-chapter negative)"))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
