"""k-nearest-neighbour search over an :class:`~xlsent.mining.store.EmbeddingStore` with faiss.

Three kinds of search, all by inner product on L2-normalised vectors (= cosine):

* ``exact`` — a flat index per target shard, results merged (:class:`faiss.ResultHeap`):
  memory is one target shard at a time;
* ``ivf`` — an inverted-file index (``IndexIVFFlat``, ``nlist`` ≈ 4·√n cells, ``nprobe``
  visited), trained on a sample and filled shard by shard;
* ``ivfpq`` — the same cells with product-quantised vectors (``pq_m`` bytes a vector), for
  targets too large to hold at float32; candidates are re-scored with exact cosines read
  back from the store, so margins never use PQ approximations.

``auto`` picks ``exact`` while n_query × n_target is small enough (``exact_max_pairs``),
else ``ivf`` when the target vectors fit in a quarter of the memory budget, else ``ivfpq``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlsent.mining.store import EmbeddingStore
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import atomic_path

INDEX_KINDS = ("auto", "exact", "ivf", "ivfpq")


@dataclass
class IndexConfig:
    kind: str = "auto"
    nlist: int = 0  # 0 = 4·√n_target (at least 1)
    nprobe: int = 64
    pq_m: int = 0  # ivfpq bytes per vector; 0 = the largest of 64, 48, 32, 16, 8 dividing the dimension
    exact_max_pairs: float = 2e10  # auto: exact search while n_query × n_target ≤ this (100k × 100k: ~1 min a direction on 2 cores)
    train_size: int = 0  # vectors to train on; 0 = min(n_target, 64·nlist, ≥ 10,000 for ivfpq)
    seed: int = 0


def choose_kind(n_query: int, n_target: int, dim: int, cfg: IndexConfig, memory_gib: float) -> str:
    if cfg.kind not in INDEX_KINDS:
        raise XlsentError(f"unknown index '{cfg.kind}': use one of {', '.join(INDEX_KINDS)}")
    if cfg.kind != "auto":
        return cfg.kind
    if n_query * n_target <= cfg.exact_max_pairs:
        return "exact"
    return "ivf" if n_target * dim * 4 <= memory_gib * 2**30 / 4 else "ivfpq"


def _nlist(n: int, cfg: IndexConfig) -> int:
    return max(1, min(cfg.nlist or int(4 * math.sqrt(n)), n))


def _pq_m(dim: int, cfg: IndexConfig) -> int:
    if cfg.pq_m:
        if dim % cfg.pq_m:
            raise XlsentError(f"index pq_m {cfg.pq_m} must divide the embedding dimension {dim}")
        return cfg.pq_m
    return next(m for m in (64, 48, 32, 16, 8, 4, 2, 1) if dim % m == 0)


def build_ivf(store: EmbeddingStore, kind: str, cfg: IndexConfig, path: str | Path):
    """Train an IVF(PQ) index on a sample of ``store`` and add every shard; written atomically to ``path``."""
    import faiss

    d, n = store.spec.dim, len(store)
    nlist = _nlist(n, cfg)
    train = store.sample(cfg.train_size or min(n, max(64 * nlist, 10_000 if kind == "ivfpq" else 0)), cfg.seed)
    quantizer = faiss.IndexFlatIP(d)
    if kind == "ivf":
        index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
    else:  # 8-bit codes need ~39·256 training vectors; fewer bits for small inputs
        nbits = min(8, max(1, int(math.log2(max(2, len(train) // 39)))))
        index = faiss.IndexIVFPQ(quantizer, d, nlist, _pq_m(d, cfg), nbits, faiss.METRIC_INNER_PRODUCT)
    index.train(train)
    for i in range(store.n_shards):
        index.add(store.shard(i))
    with atomic_path(path) as tmp:
        faiss.write_index(index, str(tmp))
    return index


def gather(store: EmbeddingStore, rows: np.ndarray) -> np.ndarray:
    """Rows of ``store`` (any shape of indices, −1 allowed → zeros) as float32, one shard read at a time."""
    flat = rows.reshape(-1)
    out = np.zeros((len(flat), store.spec.dim), dtype=np.float32)
    for i in range(store.n_shards):
        start, stop = store.bounds(i)
        sel = np.nonzero((flat >= start) & (flat < stop))[0]
        if len(sel):
            out[sel] = store.view(np.load(store.path(i), mmap_mode="r")[flat[sel] - start])
    return out.reshape(*rows.shape, store.spec.dim)


class Searcher:
    """k-NN of query vectors among a target store, by the chosen kind of index."""

    def __init__(self, targets: EmbeddingStore, kind: str, cfg: IndexConfig, index_path: str | Path | None = None):
        if kind not in INDEX_KINDS[1:]:
            raise XlsentError(f"unknown index '{kind}': use one of {', '.join(INDEX_KINDS[1:])}")
        self.targets, self.kind, self.cfg = targets, kind, cfg
        self.index = None
        if kind != "exact":
            import faiss

            if index_path is None:
                raise ValueError("an IVF searcher needs an index path")
            path = Path(index_path)
            self.index = faiss.read_index(str(path)) if path.exists() else build_ivf(targets, kind, cfg, path)
            self.index.nprobe = min(cfg.nprobe, self.index.nlist)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(cosines, target rows), each (n_query, k), best first; rows are −1 where fewer than k were found."""
        import faiss

        k = min(k, len(self.targets))
        if self.kind == "exact":
            heap = faiss.ResultHeap(len(queries), k, keep_max=True)
            for i in range(self.targets.n_shards):
                flat = faiss.IndexFlatIP(self.targets.spec.dim)
                flat.add(self.targets.shard(i))
                sims, idx = flat.search(queries, k)
                start = self.targets.bounds(i)[0]
                heap.add_result(sims, np.where(idx >= 0, idx + start, -1))
            heap.finalize()
            sims, idx = heap.D, heap.I
        else:
            sims, idx = self.index.search(queries, k)
        # every kind's cosines recomputed from the stored vectors, one query at a time (numpy's einsum, no BLAS):
        # the same numbers whatever the index (IVF-PQ's are approximate), the machine's threads or the engine
        vecs = gather(self.targets, idx)
        sims = np.where(idx >= 0, np.einsum("qd,qkd->qk", queries.astype(np.float32), vecs), -np.inf).astype(np.float32)
        order = np.lexsort((idx, -sims), axis=1)  # best first; ties by target row
        sims, idx = np.take_along_axis(sims, order, 1), np.take_along_axis(idx, order, 1)
        return sims, idx
