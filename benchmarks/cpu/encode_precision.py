#!/usr/bin/env python3
"""Encoding on the CPU in fp32, in bf16 autocast (``--dtype auto`` on a CPU with AMX) and with bf16 weights: time
ratios, and what the vectors lose (issue 60).

    python benchmarks/cpu/encode_precision.py [--model e5-small] [--n 1000] [--repeats 3]

Texts: ``n`` New-Testament verse pairs of ``bible-en-ny:dev`` (both languages, 2n texts), encoded through xlsent's
:class:`~xlsent.encoding.encoder.Encoder` — the path every command takes — once per setting and repeat, the settings
in a rotating order so that a machine whose speed drifts charges them alike, after one untimed warm-up each. Printed
per setting: the best time, its ratio to fp32's, P@1 both ways over the n pairs (plain argmax), and the smallest and
mean cosine of each text's vector with its fp32 vector. Run on an otherwise idle machine (torch's threads: all
cores).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    import torch

    from xlsent.data.sets.pairs import load_pairs
    from xlsent.encoding.encoder import Encoder
    from xlsent.models.registry import quiet_libraries
    from xlsent.utils.device import cpu_has_amx, use_device, use_encoding_dtype

    quiet_libraries()
    use_device("cpu")
    ds = load_pairs("bible-en-ny:dev", dedupe=False, sample=args.n, seed=0).dataset
    src, tgt = list(ds["src"]), list(ds["tgt"])
    encoders = {}
    for name, dtype in (("fp32", "fp32"), ("bf16 autocast", "bf16")):
        use_encoding_dtype(dtype)
        encoders[name] = Encoder.load(args.model, normalize=True)
    use_encoding_dtype("auto")
    weights = Encoder.load(args.model, normalize=True)  # fp32 here; its weights cast to bf16 below
    weights.backend.handle.model.to(torch.bfloat16)
    encoders["bf16 weights"] = weights
    print(f"model {args.model}, {len(src) + len(tgt)} texts, torch threads {torch.get_num_threads()}, "
          f"AMX {'yes' if cpu_has_amx() else 'no'}")
    names = list(encoders)
    for name in names:  # warm-up (kernels built, memory reserved): not timed
        encoders[name].replace(memo=False).encode(src[:16] + tgt[:16])
    best = {n: float("inf") for n in names}
    vectors: dict[str, np.ndarray] = {}
    for r in range(args.repeats):
        for j in range(len(names)):
            name = names[(j + r) % len(names)]
            start = time.perf_counter()
            v = encoders[name].encode(src + tgt)
            best[name] = min(best[name], time.perf_counter() - start)
            vectors[name] = v
    ref = vectors["fp32"]
    print(f"{'setting':<16}{'best s':>8}{'× fp32':>8}{'P@1 ny→en':>11}{'P@1 en→ny':>11}{'min cos':>10}{'mean cos':>10}")
    for name in names:
        v = vectors[name]
        a, b = v[:len(src)], v[len(src):]
        sim = a @ b.T
        gold = np.arange(len(src))
        p1 = float((sim.argmax(1) == gold).mean()), float((sim.argmax(0) == gold).mean())
        cos = (v * ref).sum(1)
        print(f"{name:<16}{best[name]:>8.1f}{best[name] / best['fp32']:>8.3f}{p1[0]:>11.3f}{p1[1]:>11.3f}"
              f"{cos.min():>10.6f}{cos.mean():>10.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
