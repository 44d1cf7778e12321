#!/usr/bin/env python3
"""What int8 changes query by query: P@1 of two encoders on the same pairs, their paired difference with a
bootstrap 95% CI, and how many queries each one gets right that the other misses.

    python benchmarks/export/int8_paired.py A B [B ...] [--dataset bible-en-ny:test] [--sample 0] [--threads 2]

(``A``, ``B``: anything ``--model`` takes — e.g. ``e5-small`` and an ``xlsent export --int8`` folder; each ``B``
is compared with ``A``, which is encoded once.) A set with several target languages (``udhr``, ``udhr-dev``) is
searched one language at a time and its queries pooled (each language's English side is searched only among
that language's texts). A
difference of a few tenths of a point on 1,000 pairs is a handful of near-tied queries flipping: the
interval says whether it is more than that.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))


def top1_correct(q: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Row i is right when its nearest document (cosine) is document i."""
    import faiss

    q = np.ascontiguousarray(q / np.linalg.norm(q, axis=1, keepdims=True), dtype=np.float32)
    d = np.ascontiguousarray(d / np.linalg.norm(d, axis=1, keepdims=True), dtype=np.float32)
    index = faiss.IndexFlatIP(d.shape[1])
    index.add(d)
    _, idx = index.search(q, 1)
    return idx[:, 0] == np.arange(len(q))


def check_models(names) -> None:
    """Every name is a registered model or an existing folder — said in one line before anything is encoded."""
    from xlsent.models.registry import REGISTRY

    bad = [n for n in names if n not in REGISTRY and not Path(n).expanduser().is_dir()]
    if bad:
        sys.exit(f"no such model or folder: {', '.join(bad)} (give a registered name — {', '.join(REGISTRY)} — "
                 "or a model / export folder)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b", nargs="+")
    ap.add_argument("--dataset", default="bible-en-ny:test")
    ap.add_argument("--sample", type=int, default=0, help="pairs drawn at random (seed 0); 0 = all")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--resamples", type=int, default=2000)
    args = ap.parse_args()
    check_models([args.a, *args.b])

    from xlsent.data.sets.bundled import split_by_language
    from xlsent.data.sets.pairs import load_pairs
    from xlsent.encoding.encoder import Encoder
    from xlsent.models.registry import quiet_libraries

    quiet_libraries()
    ds = load_pairs(args.dataset, dedupe=False, **({"sample": args.sample, "seed": 0} if args.sample else {})).dataset
    parts = split_by_language(ds) if "tgt_lang" in ds.column_names and len(set(ds["tgt_lang"])) > 1 else {"": ds}
    right = {}
    for name in (args.a, *args.b):
        enc = Encoder.load(name, threads=args.threads)
        right[name] = {"src→tgt": [], "tgt→src": []}
        for part in parts.values():
            s, t = enc.encode(list(part["src"])), enc.encode(list(part["tgt"]))
            right[name]["src→tgt"].append(top1_correct(s, t))
            right[name]["tgt→src"].append(top1_correct(t, s))
        right[name] = {k: np.concatenate(v) for k, v in right[name].items()}
    what = f"{args.dataset}, {len(ds):,} pairs" + (f" in {len(parts)} languages" if len(parts) > 1 else "")
    for other in args.b:
        compare(right, args.a, other, what, args.resamples)


def compare(right: dict, name_a: str, name_b: str, what: str, resamples: int) -> None:
    rng = np.random.default_rng(0)
    print(f"{what}: P@1 ×100 of {name_a} → {name_b}")
    for direction in ("src→tgt", "tgt→src"):
        a, b = right[name_a][direction], right[name_b][direction]
        diff = b.astype(float) - a.astype(float)
        boot = [diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(resamples)]
        lo, hi = np.percentile(boot, [2.5, 97.5])
        print(f"  {direction}: {100 * a.mean():.1f} → {100 * b.mean():.1f}, Δ {100 * diff.mean():+.2f} "
              f"[{100 * lo:+.2f}, {100 * hi:+.2f}]; right only in A {int((a & ~b).sum())}, only in B {int((b & ~a).sum())}")


if __name__ == "__main__":
    main()
