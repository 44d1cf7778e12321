#!/usr/bin/env python3
"""Memory and time of ``xlsent mine``'s last step, margin scoring + pair selection, at large n.

    python benchmarks/mining/mining_select_memory.py [--n 1000000] [--k 4]

``--memory-gib`` bounds what encoding and search hold (shards, the index), but the selection
(:func:`xlsent.mining.margin.select_pairs`) needs the k-NN lists of every sentence at once: it
makes global decisions (every sentence in at most one pair, best first). This script measures
what that costs: ``n`` sources and ``n`` targets with random k-NN lists (the values do not change
the work), then ``select_pairs`` in each mode. Printed per mode: seconds, the peak of memory
allocated during the call (``tracemalloc``, which sees numpy's buffers and Python objects),
and its ratio to the k-NN lists themselves (2 directions × n × k × (4-byte cosine + 8-byte row)),
which is the input any selection, ours or a peer's, has to hold.

Then the reduce step alone, as a job split into shards runs it (the map step, each shard's best candidate,
its score and the runner-up's, runs on the workers): its input (both directions' candidates) and the peak
allocated during :func:`xlsent.mining.margin.select_from_candidates`, per mode — what the one process that
runs the reduce must hold, the figure a capacity plan needs.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from xlsent.mining.margin import MODES, best_candidates, select_from_candidates, select_pairs
from xlsent.similarity import knn_mean


def knn(n: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    sims = np.sort(rng.uniform(0.5, 1.0, size=(n, k)).astype(np.float32), axis=1)[:, ::-1].copy()
    return sims, rng.integers(0, n, size=(n, k), dtype=np.int64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    fs, fi = knn(a.n, a.k, rng)
    bs, bi = knn(a.n, a.k, rng)
    lists = fs.nbytes + fi.nbytes + bs.nbytes + bi.nbytes
    print(f"{a.n:,} × {a.n:,} sentences, k = {a.k}: k-NN lists of both directions {lists / 2**20:.0f} MiB")
    for mode in MODES:
        tracemalloc.start()
        t0 = time.perf_counter()
        pairs = select_pairs(fs, fi, bs, bi, a.k, mode, "ratio")
        dt = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"{mode:>9}: {dt:6.1f} s, {len(pairs):>9,} pairs, peak allocated {peak / 2**20:7.0f} MiB "
              f"= {peak / lists:.2f}× the k-NN lists ({peak / (2 * a.n):.0f} bytes per sentence)")
    fm, bm = knn_mean(fs, fi, a.k), knn_mean(bs, bi, a.k)
    fwd, bwd = best_candidates(fs, fi, fm, bm), best_candidates(bs, bi, bm, fm)  # the map step (workers)
    held = sum(getattr(c, f).nbytes for c in (fwd, bwd) for f in ("best", "score", "second"))
    print(f"reduce step: its input, both directions' candidates, {held / 2**20:.0f} MiB "
          f"({held / (2 * a.n):.0f} bytes per sentence)")
    for mode in MODES:
        tracemalloc.start()
        t0 = time.perf_counter()
        pairs = select_from_candidates(fwd, bwd, mode)
        dt = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"{mode:>9}: {dt:6.1f} s, {len(pairs):>9,} pairs, peak allocated {peak / 2**20:7.0f} MiB; with its "
              f"input {(peak + held) / (2 * a.n):.0f} bytes per sentence")


if __name__ == "__main__":
    main()
