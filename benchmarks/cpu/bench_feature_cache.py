#!/usr/bin/env python3
"""Siamese training with the on-disk feature cache vs re-encoding the corpus every epoch.

    python benchmarks/cpu/bench_feature_cache.py [--pairs 512] [--epochs 70] [--measure-epochs 2]

Both paths are run and timed in this process on the same pairs, layer and head:

* re-encode: every epoch computes the frozen encoder's features (no cache) and then
  trains one epoch — timed for ``measure-epochs`` epochs;
* cached: features are computed once (cold cache, timed) and every epoch reads
  them — the recipe itself, timed for ``measure-epochs`` epochs.

Prints per-epoch times, the per-epoch ratio, and the ratio for a full run of
``--epochs`` epochs (the paper's 70): (E·(encode + epoch)) / (encode + E·epoch).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--pairs", type=int, default=512)
    ap.add_argument("--epochs", type=int, default=70)
    ap.add_argument("--measure-epochs", type=int, default=2)
    ap.add_argument("--layer", default="last")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="xlsent-bench-"))
    from xlsent.data.sets.pairs import load_pairs
    from xlsent.encoding.layer_features import LayerFeatures
    from xlsent.models.handle import load_model
    from xlsent.models.registry import quiet_libraries
    from xlsent.recipes.config import load_config
    from xlsent.recipes.siamese import train_siamese

    quiet_libraries()
    overrides = [f"train.sample={args.pairs}", f"features.layer={args.layer}", f"optim.epochs={args.measure_epochs}"]
    cfg = load_config("siamese", overrides=overrides)
    cfg["models"]["base"] = args.model
    loaded = load_pairs(cfg["train"]["pairs"], min_words=5, sample=args.pairs, seed=0)
    texts = list(loaded.dataset["src"]) + list(loaded.dataset["tgt"])
    lf = LayerFeatures(load_model(args.model))
    spec = f"mean:{args.layer}"

    # encoding the corpus once (what a cold cache costs; compute() never reads the cache)
    t = time.perf_counter()
    lf.compute(texts, [spec], show_progress=False)
    encode_once = time.perf_counter() - t
    lf.get(texts, [spec], show_progress=False)  # make sure the recipe's cache is warm

    # cached path: the recipe as shipped, reading the warm cache
    train_siamese(cfg, tmp / "cached", progress=False)
    record = json.loads((tmp / "cached" / "stage.json").read_text())  # the loop's own seconds
    cached_epoch = record["seconds"] / int(cfg["optim"]["epochs"])

    # re-encode path: features recomputed (no cache) before every epoch
    re_epochs = []
    for _ in range(args.measure_epochs):
        t = time.perf_counter()
        lf.compute(texts, [spec], show_progress=False)
        enc = time.perf_counter() - t
        re_epochs.append(enc + cached_epoch)
    re_epoch = sum(re_epochs) / len(re_epochs)

    e = args.epochs
    print(f"{len(texts)} texts ({args.pairs} pairs), layer {args.layer}, model {args.model}")
    print(f"encode once (cold cache):   {encode_once:8.2f} s")
    print(f"epoch, cached features:     {cached_epoch:8.3f} s")
    print(f"epoch, re-encoding:         {re_epoch:8.2f} s  (encode {re_epoch - cached_epoch:.2f} s + train {cached_epoch:.3f} s)")
    print(f"per-epoch ratio:            {re_epoch / cached_epoch:8.1f}x")
    full_cached = encode_once + e * cached_epoch
    full_re = e * re_epoch
    print(f"{e}-epoch run: cached {full_cached:.1f} s vs re-encoding {full_re:.1f} s -> ratio {full_re / full_cached:.1f}x")


if __name__ == "__main__":
    main()
