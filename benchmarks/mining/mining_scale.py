#!/usr/bin/env python3
"""``xlsent mine``'s search at scale vs brute-force ``sentence_transformers.util.semantic_search``.

    python benchmarks/mining/mining_scale.py [--n 100000] [--gold 10000] [--index auto] [--nprobe 64] [--fit e5-small]

Embeddings: ``n`` source and ``n`` target vectors drawn from a Gaussian with the mean and covariance
of a real model's embeddings (``--fit``: 2,000 held-out Bible verses of both languages encoded once,
so the vectors share e5's anisotropy — its cosines sit around 0.8; ``--fit none``: isotropic).
``gold`` targets are noisy copies of sources (source + N(0, Σ), renormalised: cosine ≈ 0.9 to
their source against ≈ 0.8 between random vectors of e5's distribution, as for real translations),
the rest are fresh draws.
Encoding is not timed here: search does not depend on where vectors come from, and encoding
speed is ``benchmarks/cpu/bench_embed.py``'s subject.

Both sides run in this process on the same float32 vectors: first xlsent (a :class:`MiningJob`
over the stores: index build + k-NN both ways + margin selection; its peak RSS is read before
the peer runs), then ``util.semantic_search`` both ways + the same selection. Printed: seconds
of each, the ratio, the overlap of the k-NN lists and of the mined pairs, recall of the gold pairs.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np


def fitted_gaussian(model_name: str, dim: int, seed: int):
    if model_name == "none":
        return np.zeros(dim), np.eye(dim) / dim
    from xlsent.data.sets.pairs import load_pairs
    from xlsent.encoding.embed import embed
    from xlsent.models.handle import load_model

    ds = load_pairs("bible-en-ny:test", dedupe=False, sample=1000, seed=seed).dataset
    vecs = embed(load_model(model_name).model, list(ds["src"]) + list(ds["tgt"]), normalize=True, show_progress=False)
    return vecs.mean(0), np.cov(vecs, rowvar=False)


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--gold", type=int, default=10_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--index", default="auto")
    ap.add_argument("--nprobe", type=int, default=64)
    ap.add_argument("--fit", default="e5-small", help="model whose embedding distribution is imitated, or none")
    ap.add_argument("--noise", type=float, default=1.0, help="gold target = source + noise·N(0, Σ), renormalised")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-peer", action="store_true")
    args = ap.parse_args()

    import torch
    from sentence_transformers import util

    from xlsent.mining.index import IndexConfig
    from xlsent.mining.job import MineConfig, MiningJob, peak_rss_gib
    from xlsent.mining.margin import select_pairs
    from xlsent.models.registry import quiet_libraries

    quiet_libraries()
    rng = np.random.default_rng(args.seed)
    mean, cov = fitted_gaussian(args.fit, args.dim, args.seed)
    chol = np.linalg.cholesky(cov + 1e-6 * np.eye(len(mean)))
    draw = lambda n: unit(mean + rng.standard_normal((n, len(mean))) @ chol.T)  # noqa: E731
    src = draw(args.n)
    noisy = unit(src[: args.gold] + args.noise * rng.standard_normal((args.gold, len(mean))) @ chol.T)
    tgt_rows = np.concatenate([noisy, draw(args.n - args.gold)])
    perm = rng.permutation(args.n)
    tgt = np.ascontiguousarray(tgt_rows[perm])
    gold = {(i, int(np.nonzero(perm == i)[0][0])) for i in range(args.gold)}
    gold_cos = float(np.mean([src[i] @ tgt[j] for i, j in list(gold)[:1000]]))
    rand_cos = float(np.mean(np.sum(src[:1000] * tgt[-1000:], 1)))
    rss0 = peak_rss_gib()
    print(f"{args.n} × {args.n} vectors, dim {len(mean)} (distribution of {args.fit}); {args.gold} gold pairs, "
          f"mean cosine gold {gold_cos:.3f}, random {rand_cos:.3f}; torch threads {torch.get_num_threads()}")

    cfg = MineConfig(k=args.k, mode="max", dtype="float32", threshold=None,
                     index=IndexConfig(kind=args.index, nprobe=args.nprobe, seed=args.seed))
    with tempfile.TemporaryDirectory() as work:
        job = MiningJob.from_embeddings(work, src, tgt, cfg)
        t = time.perf_counter()
        timings = job.run(show_progress=False)
        t_sel = time.perf_counter()
        ours = job.select()
        timings["select_s"] = time.perf_counter() - t_sel
        t_ours = time.perf_counter() - t
        from xlsent.mining.tasks import load_knn

        our_fwd = load_knn(job.knn_paths("fwd"))[1]
        rss = peak_rss_gib()
    found = {(int(a), int(b)) for a, b in zip(ours.src, ours.tgt)}
    print(f"xlsent ({job.kinds['fwd']}/{job.kinds['bwd']}, nprobe {args.nprobe}): {t_ours:.1f} s "
          f"(index {timings['index_s']:.1f}, search {timings['search_s']:.1f}, select {timings['select_s']:.1f}); "
          f"peak RSS {rss:.2f} GiB (before the job: {rss0:.2f}); gold recall (max mode, no threshold) "
          f"{len(found & gold) / len(gold):.3f}")
    if args.skip_peer:
        return

    def peer_knn(q, c):
        hits = util.semantic_search(torch.from_numpy(q), torch.from_numpy(c), top_k=args.k)
        sims = np.array([[h["score"] for h in row] for row in hits], np.float32)
        idx = np.array([[h["corpus_id"] for h in row] for row in hits], np.int64)
        return sims, idx

    t = time.perf_counter()
    ps_f, pi_f = peer_knn(src, tgt)
    ps_b, pi_b = peer_knn(tgt, src)
    t_peer_search = time.perf_counter() - t
    peer = select_pairs(ps_f, pi_f, ps_b, pi_b, args.k, "max")
    t_peer = time.perf_counter() - t
    peer_pairs = {(int(a), int(b)) for a, b in zip(peer.src, peer.tgt)}
    knn_overlap = np.mean([len(set(a) & set(b)) / args.k for a, b in zip(our_fwd, pi_f)])
    print(f"util.semantic_search (exact, brute force): {t_peer:.1f} s (search {t_peer_search:.1f}); "
          f"gold recall {len(peer_pairs & gold) / len(gold):.3f}")
    print(f"ratio (peer / xlsent, search + selection): {t_peer / t_ours:.2f}×; forward k-NN overlap {knn_overlap:.4f}; "
          f"mined pairs shared {len(found & peer_pairs) / max(1, len(peer_pairs)):.4f} of the peer's "
          f"({len(found)} vs {len(peer_pairs)} pairs)")


if __name__ == "__main__":
    main()
