#!/usr/bin/env python3
"""What an error of int8's size costs by itself: each model's P@1 change against A, next to the change that
*random* error of the same size would make.

    python benchmarks/export/int8_noise_floor.py A B [B ...] [--dataset bible-en-ny:dev] [--seeds 20] [--threads 2]

For each ``B`` (e.g. int8 exports of ``A``) the script measures the mean ``1 − cos`` of its vectors to A's,
then adds to A's unit vectors random directions orthogonal to each vector with that same ``1 − cos`` and
re-scores, ``--seeds`` times: the mean and spread of that change is what a quantisation error of this size,
with no structure, would cost. A ``B`` that loses much more than its noise floor errs in a structured way
that hurts; one that loses less, in a way that happens to help. Sets with several target languages are
pooled per language as in ``int8_paired.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from int8_paired import check_models, top1_correct  # noqa: E402


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def with_noise(x: np.ndarray, one_minus_cos: float, rng: np.random.Generator) -> np.ndarray:
    """Unit vectors moved in a random direction orthogonal to each, so that ``1 − cos`` to ``x`` is as given."""
    n = rng.normal(size=x.shape).astype(np.float32)
    n -= (n * x).sum(1, keepdims=True) * x
    tan = np.sqrt(1.0 / (1.0 - one_minus_cos) ** 2 - 1.0)  # cos(x, x + t·n̂) = 1 / sqrt(1 + t²)
    return unit(x + unit(n) * tan)


def p_at_1(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[float, float]:
    s2t = np.concatenate([top1_correct(s, t) for s, t in parts])
    t2s = np.concatenate([top1_correct(t, s) for s, t in parts])
    return float(s2t.mean()), float(t2s.mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b", nargs="+")
    ap.add_argument("--dataset", default="bible-en-ny:dev")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    check_models([args.a, *args.b])

    from xlsent.data.sets.bundled import split_by_language
    from xlsent.data.sets.pairs import load_pairs
    from xlsent.encoding.encoder import Encoder
    from xlsent.models.registry import quiet_libraries

    quiet_libraries()
    ds = load_pairs(args.dataset, dedupe=False).dataset
    groups = split_by_language(ds) if "tgt_lang" in ds.column_names and len(set(ds["tgt_lang"])) > 1 else {"": ds}
    vectors = {}
    for name in (args.a, *args.b):
        enc = Encoder.load(name, threads=args.threads)
        vectors[name] = [(unit(enc.encode(list(g["src"]))), unit(enc.encode(list(g["tgt"])))) for g in groups.values()]
    base = p_at_1(vectors[args.a])
    print(f"{args.dataset}, {len(ds):,} pairs: P@1 ×100 of {args.a}: {100 * base[0]:.2f} / {100 * base[1]:.2f}")
    rng = np.random.default_rng(0)
    for name in args.b:
        cos = np.concatenate([np.concatenate([(s * s0).sum(1), (t * t0).sum(1)])
                              for (s, t), (s0, t0) in zip(vectors[name], vectors[args.a])])
        err = float(1.0 - cos.mean())
        own = p_at_1(vectors[name])
        floor = np.array([p_at_1([(with_noise(s, err, rng), with_noise(t, err, rng)) for s, t in vectors[args.a]])
                          for _ in range(args.seeds)])
        print(f"  {name}: mean 1 − cos {err:.5f}")
        for i, direction in enumerate(("src→tgt", "tgt→src")):
            d = 100 * (floor[:, i] - base[i])
            print(f"    {direction}: Δ {100 * (own[i] - base[i]):+.2f}; random error of the same size: "
                  f"Δ {d.mean():+.2f} ± {d.std():.2f} ({args.seeds} seeds)")


if __name__ == "__main__":
    main()
