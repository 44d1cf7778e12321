#!/usr/bin/env python3
"""Mining on a local Ray cluster against the local engine, from the same precomputed embeddings.

    python benchmarks/mining/mining_cluster.py [--n 1000000] [--gold 100000] [--index auto] [--workers 2]
        [--fit e5-small] [--setting KEY=VALUE …] [--workdir DIR [--profile-only]]

Vectors as ``benchmarks/mining/mining_scale.py`` draws them (a Gaussian with the mean and covariance of a real model's
embeddings; ``gold`` targets are noisy copies of sources). Both runs mine the same float32 vectors with the same
settings, each in a fresh work folder: first ``--engine local`` (every shard in this process, faiss on all
threads), then ``--engine ray`` (a local Ray cluster of this machine's CPUs, ``--workers`` searcher actors at
``--cpus-per-worker``; the cluster's start is timed too). Printed: wall seconds of each (index, search, selection),
ray ÷ local (the target: ≤ 1.5 on the same cores), the driver's and the largest actor's peak resident memory,
and whether the pairs are identical. Encoding is not timed (``benchmarks/cpu/bench_embed.py``).

``--setting`` (repeatable) mines the same vectors once a setting, on each of ``--engines``: ``index``, ``nprobe``,
``nlist``, ``precision`` (the store: float32 … ubinary), ``dimensions`` (the vectors cut to their first N
coordinates and renormalised, as ``xlsent mine --dimensions``), ``search_dimensions`` (ubinary: the index holds the
sign bits of the first N coordinates, ``--search-dimensions``), ``center_codes`` (ubinary: the bits against none,
target — the default — or own means), ``rescore`` and ``groups`` (``--index-groups``: a worker holds one group of a
side's sub-indexes); unset keys take the flags' values
(float32, the full width). For each run it also prints F1 against the gold copies and the bytes of the search
index a sentence (its files on disk ÷ rows); for each setting after the first, its ratios to the first (wall,
search, the largest worker's peak, index bytes).
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
    ap.add_argument("--engines", default="local,ray", help="local, ray or both (comma-separated)")
    ap.add_argument("--setting", action="append", default=[], help="KEY=VALUE … for one run of each engine "
                    "(repeatable; see the module's docstring)")
    ap.add_argument("--profile", type=int, default=20_000, help="queries searched again on one thread after each "
                    "setting, timing the search's parts (0 = skip)")
    ap.add_argument("--profile-only", action="store_true", help="only the one-thread profile of each setting, on the "
                    "work folders a run with the same --workdir left")
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
    order = rng.permutation(args.n)
    tgt = np.ascontiguousarray(np.concatenate([noisy, draw(args.n - args.gold)])[order])
    perm = np.argsort(np.asarray(order))  # tgt row of each source's noisy copy
    gold = set(zip(range(args.gold), perm[: args.gold].tolist()))
    print(f"{args.n} × {args.n} vectors, dim {len(mean)} ({args.fit}'s distribution), {args.gold} gold pairs",
          flush=True)
    settings = [parse_setting(x, args) for x in (args.setting or [""])]
    runs: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or tmp
        for si, st in enumerate(settings):
            from xlsent.encoding.width import cut

            s_vec, t_vec = (cut(x, st["dimensions"]) if st["dimensions"] else x for x in (src, tgt))
            cfg = MineConfig(k=4, mode="max", dtype=st["precision"], threshold="auto", shard_size=args.shard_size,
                             memory_gib=64.0, index=IndexConfig(kind=st["index"], nprobe=st["nprobe"],
                                                                nlist=st["nlist"], seed=args.seed,
                                                                rescore=st["rescore"], bits=st["search_dimensions"],
                                                                center_codes=st["center_codes"],
                                                                groups=st["groups"]))
            label = " ".join(f"{k}={v}" for k, v in st.items())
            for name in [] if args.profile_only else args.engines.split(","):
                folder = Path(work) / (f"s{si}-{name}" if len(settings) > 1 else name)
                t0 = time.perf_counter()
                engine = (RayEngine(workers=args.workers, cpus_per_worker=args.cpus_per_worker) if name == "ray"
                          else None)
                t_start = time.perf_counter() - t0
                job = MiningJob.from_embeddings(folder, s_vec, t_vec, cfg)
                timings = job.run(show_progress=False, engine=engine)
                t = time.perf_counter()
                mined = job.select()
                timings["select_s"] = time.perf_counter() - t
                wall = time.perf_counter() - t0
                found = len(gold & set(zip(mined.src.tolist(), mined.tgt.tolist())))
                p, r = found / max(1, len(mined.src)), found / max(1, len(gold))
                f1 = 2 * p * r / max(1e-12, p + r)
                index_bytes = sum(f.stat().st_size for f in folder.rglob("part-*.faiss"))
                per_row = index_bytes / (2 * args.n)  # both sides' indexes
                held = max(group_bytes(job, d) for d in ("fwd", "bwd")) / 2**20
                actor = engine.worker_peak_mib if engine is not None else None
                runs[(si, name)] = {"mined": mined, "wall": wall, "search": timings["search_s"], "actor": actor,
                                    "index_bytes": per_row, "f1": f1, "held_mib": held}
                workers = f", largest actor {actor:,.0f} MiB" if actor is not None else ""
                print(f"[{label}] {name}: {wall:.1f} s (cluster start {t_start:.1f}, index {timings['index_s']:.1f}, "
                      f"search {timings['search_s']:.1f}, score {timings['score_s']:.1f}, select "
                      f"{timings['select_s']:.1f}; {job.kinds['fwd']}/{job.kinds['bwd']}); driver peak "
                      f"{peak_rss_gib() * 1024:,.0f} MiB{workers}; {len(mined.src)} pairs, gold P {p:.3f} R {r:.3f} "
                      f"F1 {f1:.3f}; search index {per_row:.1f} bytes a sentence, a search task holds "
                      f"{held:,.1f} MiB of it", flush=True)
            if args.profile:
                runs[(si, "profile")] = profile(Path(work) / f"s{si}-{args.engines.split(',')[0]}"
                                                if len(settings) > 1 else Path(work) / args.engines.split(",")[0],
                                                s_vec, t_vec, cfg, args.profile, label)
            engines = args.engines.split(",")
            if len(engines) == 2 and not args.profile_only:
                a, b = (runs[(si, e)] for e in engines)
                same = all(np.array_equal(getattr(a["mined"], f), getattr(b["mined"], f))
                           for f in ("src", "tgt", "score"))
                print(f"[{label}] {engines[1]} ÷ {engines[0]}: {b['wall'] / a['wall']:.2f}× (target ≤ 1.5); "
                      f"pairs identical: {same}", flush=True)
                if not same and args.workdir:
                    from xlsent.mining.tasks import load_knn

                    jobs = [MiningJob.from_embeddings(Path(work) / (f"s{si}-{e}" if len(settings) > 1 else e),
                                                      s_vec, t_vec, cfg) for e in engines]
                    for d in ("fwd", "bwd"):
                        x, y = (load_knn(j.knn_paths(d))[1] for j in jobs)
                        print(f"{d}: k-NN lists differing in {(x != y).any(1).sum()} of {len(x)} rows")
    for si in range(1, len(settings)):
        if args.profile:
            a, b = runs[(0, "profile")]["at_1b_ms"], runs[(si, "profile")]["at_1b_ms"]
            print(f"setting {si} against setting 0, search core-ms a query at 1B (one thread): {a:.1f} / {b:.1f} = "
                  f"{a / b:.2f}× fewer core-hours")
        for name in [] if args.profile_only else args.engines.split(","):
            a, b = runs[(0, name)], runs[(si, name)]
            ratio = (f", largest worker {a['actor'] / b['actor']:.2f}× less" if a["actor"] and b["actor"] else "")
            print(f"setting {si} against setting 0 on {name}: {a['wall'] / b['wall']:.2f}× less wall time, "
                  f"{a['search'] / b['search']:.2f}× less search time{ratio}, "
                  f"{a['index_bytes'] / max(1e-9, b['index_bytes']):.2f}× fewer index bytes, "
                  f"{a['held_mib'] / max(1e-9, b['held_mib']):.2f}× less index a search task holds; "
                  f"F1 {100 * (b['f1'] - a['f1']):+.1f} points")


def group_bytes(job, direction: str) -> int:
    """The bytes of the largest search group's sub-index files of ``direction`` (the whole side's without groups):
    what one search task reads into memory."""
    from xlsent.mining.index import group_parts, index_parts, sub_index_paths

    kind = job.kinds[direction]
    if kind == "exact":
        return 0
    targets, name = (job.tgt, "tgt") if direction == "fwd" else (job.src, "src")
    parts = index_parts(targets, kind, job.cfg.index)
    paths = sub_index_paths(job.dir / f"index-{name}", len(parts))[1]
    return max(sum(paths[i].stat().st_size for i in g) for g in group_parts(len(parts), job.cfg.index.groups))


def profile(folder: Path, src: np.ndarray, tgt: np.ndarray, cfg, n: int, label: str) -> dict:
    """The forward search of ``n`` queries again, on one thread, split into its parts (``Searcher.seconds``: the
    cells a query visits, the scan of their lists, the re-scoring from the store), in core-ms a query — and what
    each part becomes at a billion targets: the cells and the scan grow as √n (4·√n cells; nprobe cells of n/nlist
    rows each), the re-scoring of a fixed number of candidates does not (after an untimed warm-up search of 256
    queries). With search groups, as a grouped job runs:
    the cells found once (by the first group's searcher), each group's shortlist, then the shortlists merged and
    re-scored once (counted as re-scoring), the seconds summed."""
    import faiss

    from xlsent.mining.index import Searcher, code_offset, merge_top
    from xlsent.mining.job import MiningJob

    job = MiningJob.from_embeddings(folder, src, tgt, cfg)
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        kind = job.kinds["fwd"]
        own = code_offset(job.src, cfg.index) if cfg.index.center_codes == "own" else None
        seconds = {"cells": 0.0, "scan": 0.0, "rescore": 0.0}
        groups, queries = job.search_groups("fwd", job.tgt), np.ascontiguousarray(src[:n])
        index_dir = None if kind == "exact" else folder / "index-tgt"
        # a warm-up, not timed: the first search of a process pays for faiss's and numpy's first calls
        Searcher(job.tgt, kind, cfg.index, index_dir, None if groups == 1 else 0).search(queries[:256], cfg.k, own)
        if groups == 1:
            searcher = Searcher(job.tgt, kind, cfg.index, index_dir)
            searcher.search(queries, cfg.k, own)
            seconds = dict(searcher.seconds)
        else:
            cells, shortlists = None, []
            for group in range(groups):  # each group's searcher in turn, as the workers hold them
                searcher = Searcher(job.tgt, kind, cfg.index, index_dir, group)
                cells = searcher.cells(queries, own) if cells is None else cells
                shortlists.append(searcher.shortlist(queries, cfg.k, own, cells))
                for part, s in searcher.seconds.items():
                    seconds[part] += s
                searcher.seconds = dict.fromkeys(seconds, 0.0)
            t = time.perf_counter()
            rows = merge_top(shortlists, shortlists[0][1].shape[1], smaller_first=searcher.binary)[1]
            searcher.rescore(queries, rows, cfg.k)
            seconds["rescore"] += time.perf_counter() - t
    finally:
        faiss.omp_set_num_threads(threads)
    ms = {part: 1000 * s / n for part, s in seconds.items()}
    grow = (1e9 / len(tgt)) ** 0.5
    at_1b = grow * (ms["cells"] + ms["scan"]) + ms["rescore"]
    print(f"[{label}] one thread, {n} queries: cells {ms['cells']:.3f}, scan {ms['scan']:.3f}, re-score "
          f"{ms['rescore']:.3f} core-ms a query; at 1B targets ≈ {at_1b:.1f} core-ms a query "
          f"(cells and scan × {grow:.1f}), {at_1b * 2e9 / 3.6e6:,.0f} core-hours for 2·10⁹ queries", flush=True)
    return {**ms, "at_1b_ms": at_1b}


KEYS = {"index": str, "nprobe": int, "nlist": int, "precision": str, "dimensions": int, "search_dimensions": int,
        "rescore": int, "center_codes": str, "groups": int}


def parse_setting(text: str, args) -> dict:
    """``KEY=VALUE …`` over the flags' defaults."""
    st = {"index": args.index, "nprobe": args.nprobe, "nlist": 0, "precision": "float32", "dimensions": 0,
          "search_dimensions": 0, "rescore": 4, "center_codes": "target", "groups": 1}
    for item in text.split():
        key, _, value = item.partition("=")
        if key not in KEYS or not value:
            sys.exit(f"--setting {text!r}: {item!r} is not KEY=VALUE with KEY one of {', '.join(KEYS)}")
        st[key] = KEYS[key](value)
    return st


if __name__ == "__main__":
    main()
