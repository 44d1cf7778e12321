#!/usr/bin/env python3
"""Mining on a local Ray cluster against the local engine, from the same precomputed embeddings.

    python benchmarks/mining_cluster.py [--n 1000000] [--gold 100000] [--index auto] [--workers 2] [--fit e5-small]

Vectors as ``benchmarks/mining_scale.py`` draws them (a Gaussian with the mean and covariance of a real model's
embeddings; ``gold`` targets are noisy copies of sources). Both runs mine the same float32 vectors with the same
settings, each in a fresh work folder: first ``--engine local`` (every shard in this process, faiss on all
threads), then ``--engine ray`` (a local Ray cluster of this machine's CPUs, ``--workers`` searcher actors at
``--cpus-per-worker``; the cluster's start is timed too). Printed: wall seconds of each (index, search, selection),
ray ÷ local (the target: ≤ 1.5 on the same cores), the driver's and the largest actor's peak resident memory,
and whether the pairs are identical. Encoding is not timed (``benchmarks/bench_embed.py``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mining_scale import fitted_gaussian, unit  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--gold", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--index", default="auto")
    ap.add_argument("--nprobe", type=int, default=64)
    ap.add_argument("--shard-size", type=int, default=50_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cpus-per-worker", type=float, default=0.5, help="below 1 on a 2-CPU machine (ray#44687)")
    ap.add_argument("--fit", default="e5-small", help="model whose embedding distribution is imitated, or none")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None, help="keep both runs' work folders here (to compare their "
                    "k-NN lists); default a temporary folder, removed")
    args = ap.parse_args()

    from xlsent.mining.engine import RayEngine
    from xlsent.mining.index import IndexConfig
    from xlsent.mining.job import MineConfig, MiningJob, peak_rss_gib

    rng = np.random.default_rng(args.seed)
    mean, cov = fitted_gaussian(args.fit, args.dim, args.seed)
    chol = np.linalg.cholesky(cov + 1e-6 * np.eye(len(mean)))
    draw = lambda n: unit(mean + rng.standard_normal((n, len(mean))) @ chol.T)  # noqa: E731
    src = draw(args.n)
    noisy = unit(src[: args.gold] + rng.standard_normal((args.gold, len(mean))) @ chol.T)
    tgt = np.ascontiguousarray(np.concatenate([noisy, draw(args.n - args.gold)])[rng.permutation(args.n)])
    cfg = MineConfig(k=4, mode="max", dtype="float32", threshold="auto", shard_size=args.shard_size,
                     memory_gib=64.0, index=IndexConfig(kind=args.index, nprobe=args.nprobe, seed=args.seed))
    print(f"{args.n} × {args.n} vectors, dim {len(mean)} ({args.fit}'s distribution), {args.gold} gold pairs",
          flush=True)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or tmp
        for name in ("local", "ray"):
            t0 = time.perf_counter()
            engine = RayEngine(workers=args.workers, cpus_per_worker=args.cpus_per_worker) if name == "ray" else None
            t_start = time.perf_counter() - t0
            job = MiningJob.from_embeddings(Path(work) / name, src, tgt, cfg)
            timings = job.run(show_progress=False, engine=engine)
            t = time.perf_counter()
            mined = job.select()
            timings["select_s"] = time.perf_counter() - t
            wall = time.perf_counter() - t0
            results[name] = (mined, wall)
            workers = f", largest actor {engine.worker_peak_mib:,.0f} MiB" if engine is not None else ""
            print(f"{name}: {wall:.1f} s (cluster start {t_start:.1f}, index {timings['index_s']:.1f}, search "
                  f"{timings['search_s']:.1f}, score {timings['score_s']:.1f}, select {timings['select_s']:.1f}; "
                  f"{job.kinds['fwd']}/{job.kinds['bwd']}); "
                  f"driver peak {peak_rss_gib() * 1024:,.0f} MiB{workers}; {len(mined.src)} pairs", flush=True)
    (a, ta), (b, tb) = results["local"], results["ray"]
    same = np.array_equal(a.src, b.src) and np.array_equal(a.tgt, b.tgt) and np.array_equal(a.score, b.score)
    print(f"ray ÷ local: {tb / ta:.2f}× (target ≤ 1.5); pairs identical: {same}")
    if not same and args.workdir:
        from xlsent.mining.tasks import load_knn

        for d in ("fwd", "bwd"):
            jobs = [MiningJob.from_embeddings(Path(work) / name, src, tgt, cfg) for name in ("local", "ray")]
            x, y = (load_knn(j.knn_paths(d))[1] for j in jobs)
            print(f"{d}: k-NN lists differing in {(x != y).any(1).sum()} of {len(x)} rows")


if __name__ == "__main__":
    main()
