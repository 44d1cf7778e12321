#!/usr/bin/env python3
"""Encoding speed and size of a lightweight model against a reference model, in one process.

    python benchmarks/distillation/bench_lightweight_speed.py --model RUN/model [--reference e5-small] [--threads 2]

Both models encode the same held-out New-Testament verses (``bible-en-ny:test``, half English and
half Chichewa) with sentence-transformers' ``encode``, batch 32, on ``--threads`` CPU threads (the
same for both), alternating runs, best of ``--repeats``. Prints sentences/s, the speed ratio and
parameter counts (Mao et al. 2021, Table 1 style), and how many of the verses each model cuts at
its ``max_seq_length``. ``--max-seq-length N`` sets the same cut for both models (an equal-length
comparison: the ``small`` preset cuts at 64 pieces, e5-small at 512 tokens).
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--reference", default="e5-small")
    ap.add_argument("--n", type=int, default=512, help="sentences per run (half English, half Chichewa)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-seq-length", type=int, default=0, help="the same cut for both models (0 = each its own)")
    args = ap.parse_args()

    import torch

    from xlsent.data.sets.pairs import load_pairs
    from xlsent.models.handle import load_model

    torch.set_num_threads(args.threads)
    ds = load_pairs("bible-en-ny:test", sample=args.n // 2, seed=0).dataset
    texts = list(ds["src"]) + list(ds["tgt"])
    models = {"reference " + args.reference: load_model(args.reference).model, "lightweight": load_model(args.model).model}
    if args.max_seq_length:
        for m in models.values():
            m.max_seq_length = args.max_seq_length
    best = {k: float("inf") for k in models}
    for _ in range(args.repeats):
        for name, m in models.items():
            t0 = time.perf_counter()
            m.encode(texts, batch_size=args.batch_size)
            best[name] = min(best[name], time.perf_counter() - t0)
    print(f"{len(texts)} NT verses (en + ny), batch {args.batch_size}, {args.threads} threads, best of {args.repeats}")
    ref = next(iter(models))
    for name, m in models.items():
        params = sum(p.numel() for p in m.parameters())
        lengths = [len(ids) for ids in m.tokenizer(texts, add_special_tokens=True)["input_ids"]]
        cut = sum(n > m.max_seq_length for n in lengths)
        print(f"{name:<28} {params / 1e6:7.2f}M parameters  {len(texts) / best[name]:7.1f} sentences/s"
              f"  ({best[ref] / best[name]:.2f}x)  cut at {m.max_seq_length}: {cut}/{len(texts)} verses"
              f" (mean {sum(lengths) / len(lengths):.0f} pieces)")


if __name__ == "__main__":
    main()
