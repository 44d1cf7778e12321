#!/usr/bin/env python3
"""``xlsent embed`` vs sentence-transformers' ``encode``: same model, same texts, same process.

    python benchmarks/bench_embed.py [--model e5-small] [--n 1000] [--batch-size 64] [--repeats 2]

Texts: ``n`` random held-out New-Testament verse pairs (both languages, so 2n texts).
Prints sentences/s of each and the ratio (xlsent / sentence-transformers); best of ``repeats``,
alternating the two so machine noise hits both.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()

    from xlsent.data.pairs import load_pairs
    from xlsent.encoding.embed import embed
    from xlsent.models.handle import load_model
    from xlsent.models.registry import quiet_libraries

    quiet_libraries()
    ds = load_pairs("bible-en-ny:test", dedupe=False, sample=args.n, seed=0).dataset
    texts = list(ds["src"]) + list(ds["tgt"])
    model = load_model(args.model).model
    print(f"model {args.model}, {len(texts)} texts, batch {args.batch_size}, torch threads {torch.get_num_threads()}")

    best = {"xlsent": float("inf"), "sentence-transformers": float("inf")}
    for _ in range(args.repeats):
        t = time.perf_counter()
        ours = embed(model, texts, batch_size=args.batch_size, show_progress=False)
        best["xlsent"] = min(best["xlsent"], time.perf_counter() - t)
        t = time.perf_counter()
        ref = model.encode(texts, batch_size=args.batch_size, show_progress_bar=False)
        best["sentence-transformers"] = min(best["sentence-transformers"], time.perf_counter() - t)
    assert np.allclose(ours, ref, atol=1e-4), "outputs differ"
    for k, v in best.items():
        print(f"{k:>22}: {len(texts) / v:8.1f} sentences/s ({v:.1f} s)")
    print(f"ratio xlsent / sentence-transformers: {best['sentence-transformers'] / best['xlsent']:.2f}x")


if __name__ == "__main__":
    main()
