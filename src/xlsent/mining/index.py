"""k-nearest-neighbour search over an :class:`~xlsent.mining.store.EmbeddingStore` with faiss.

Three kinds of search, all by inner product on L2-normalised vectors (= cosine):

* ``exact`` — a flat index per target shard, results merged (:class:`faiss.ResultHeap`):
  memory is one target shard at a time;
* ``ivf`` — an inverted-file index (``IndexIVFFlat``, ``nlist`` ≈ 4·√n cells, ``nprobe``
  visited), trained once on a sample; sub-indexes, each holding a run of target shards under their
  global row ids, are filled in parallel and merged into one index where they are searched — all of them, or
  one search group's (``groups``: a worker then holds a part of the side; the groups' shortlists are merged,
  :func:`merge_top`, and re-scored once);
* a store of ``ubinary`` precision is searched by sign bits (Hamming distance) for ``rescore`` × k candidates,
  re-scored with its int8 vectors (sentence-transformers' binary retrieval): ``exact`` is an ``IndexBinaryFlat``
  per target shard (d/8 bytes a sentence); ``ivf`` is a binary IVF (``IndexBinaryIVF`` with an
  ``IndexBinaryFlat`` quantizer: the same ``nlist`` rule, ``nprobe``, seeded training sample, sub-indexes and
  map/reduce as IVF's, d/8 bytes and an 8-byte id a sentence); ``ivfpq`` is refused (the codes are already
  d/8 bytes), and the width must be whole bytes (a multiple of 8). ``bits`` (``--search-dimensions``) keeps
  only the sign bits of the first coordinates in the index (a 128-dimension prefix: 16 bytes a sentence) while the
  k × ``rescore`` candidates are re-scored with every coordinate — a Matryoshka model's short prefix finds,
  its full vector ranks;
* ``ivfpq`` — the same cells with product-quantised vectors (``pq_m`` bytes a vector), for
  targets too large to hold at float32; candidates are re-scored with exact cosines read
  back from the store, so margins never use PQ approximations.

``auto`` picks ``exact`` while n_query × n_target is small enough (``exact_max_pairs``),
else ``ivf`` when the target vectors fit in a quarter of the memory budget, else ``ivfpq``; a ``ubinary``
store: ``exact`` (binary) while small enough, else binary ``ivf``.

The same neighbours whatever the thread count: faiss computes a flat index's scores with BLAS, whose float sums
change with its number of threads (a last-bit difference: 18 of 50,000 queries probed a different cell with one
thread than with two, and a 1M × 1M job mined on one-thread Ray workers and on the two-thread driver did not give
the same pairs). So every step that picks by a flat index's scores — the cells a query visits, the cell a target
row is filed in, an exact shard's top k — takes a wider shortlist from faiss and re-scores it with numpy's einsum
(no BLAS, one row at a time), ties broken by id: the choice can only differ if more candidates than the margin
lie within a rounding error of each other. Hamming distances are exact integers: a binary IVF's cells (visited
and filed in) are faiss's shortlist re-sorted by distance, then cell id (:func:`assign_binary_cells`). Training the
cells (k-means) still uses BLAS; it runs once, in the
driver, and is kept in the work folder (:func:`train_index`).

On a GPU (:func:`use_gpu_search`: ``--device cuda`` on the local engine, ``--gpus-per-worker`` on Ray; a faiss
built with GPU support, e.g. ``faiss-gpu-cu12`` in place of ``faiss-cpu``): a float IVF or IVF-PQ index is copied
to the GPU once a searcher has merged it (``index_cpu_to_gpu``; PQ lookup tables at 32 bits where they fit in
shared memory, else 16) and scanned there with the cells found on the CPU as above (``search_preassigned``); an
exact search scores each target shard on the GPU (``knn_gpu``; sign bits: ``GpuIndexBinaryFlat``). faiss has no
GPU binary IVF: a ``ubinary`` IVF index stays on the CPU, as does an index the GPU kernels refuse (PQ codes under
8 bits, more than ``GPU_MAX_K`` cells or candidates), said once. Re-scoring is numpy's as everywhere, so a pair's
cosine is the same number; which candidates reach it can differ from a CPU search — Hamming-distance ties at the
shortlist's edge are broken in the GPU's order, not by id, and IVF-PQ's scores are summed differently (16-bit
tables when 32 do not fit) — so a GPU search's pairs can differ from a CPU search's in a few rows. Ray and local
give the same pairs when both search on the same kind of device. Without a GPU faiss can use, the CPU searches.
"""

from __future__ import annotations

import math
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlsent.mining.store import EmbeddingStore, binary_codes
from xlsent.utils.errors import XlsentError, named
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
    rescore: int = 10  # ubinary stores: k × this many candidates by Hamming distance, re-scored with the int8 vectors
    bits: int = 0  # ubinary stores: the index holds the sign bits of the first this-many coordinates (0 = all of them);
    # the candidates are re-scored with every coordinate (a Matryoshka funnel: a short code finds, the full vector ranks)
    center_codes: str = "target"  # ubinary stores: the row sign bits are taken against — none (0) | target (the
    # searched side's mean, for its rows and the queries alike) | own (each side's own mean)
    groups: int = 1  # IVF: each side's sub-indexes split into this many groups; a search task holds one group (a
    # worker's memory ÷ groups) and each query shard's shortlists from every group are merged and re-scored once


SHORTLIST = 8  # candidates beyond the n wanted taken from a BLAS-scored flat search, then re-scored without BLAS
GPU_MAX_K = 2048  # faiss's GPU k-selection: at most this many neighbours a query, or cells visited

_gpu = {"device": None, "resources": None}  # this process's choice (use_gpu_search) and faiss's GPU resources


def use_gpu_search(device: int | None) -> None:
    """Search on GPU number ``device`` of this process from now on (None: the CPU), where its faiss can use one
    (:func:`gpu_resources`); a job's driver sets it from ``--device``, a Ray search worker from
    ``--gpus-per-worker`` (its first visible GPU)."""
    _gpu["device"] = device


@contextmanager
def gpu_search(device: int | None):
    """:func:`use_gpu_search` for a block, the earlier choice restored after it."""
    before = _gpu["device"]
    use_gpu_search(device)
    try:
        yield
    finally:
        use_gpu_search(before)


def faiss_gpus() -> int:
    """GPUs this process's faiss can use: 0 for a CPU-only build (``faiss-cpu``) or where none is visible."""
    import faiss

    return int(faiss.get_num_gpus()) if hasattr(faiss, "StandardGpuResources") else 0


def gpu_resources():
    """faiss's GPU resources (one ``StandardGpuResources`` a process, on its first visible GPU) when a GPU search
    was asked for and faiss can use a GPU; else None (search on the CPU)."""
    if _gpu["device"] is None or faiss_gpus() <= _gpu["device"]:
        return None
    if _gpu["resources"] is None:
        import faiss

        _gpu["resources"] = faiss.StandardGpuResources()
    return _gpu["resources"]


def _binary_flat_config():
    import faiss

    config = faiss.GpuIndexBinaryFlatConfig()
    config.device = _gpu["device"]
    return config


def index_to_gpu(index, resources):
    """A float IVF / IVF-PQ ``index`` copied to the GPU (faiss's classic GPU IVF; an IVF-PQ index's lookup tables at
    32 bits where they fit in the GPU's shared memory, else at 16), or None where faiss's GPU kernels do not take
    it (e.g. PQ codes of fewer than 8 bits, which a small training sample gives, or more than
    ``GPU_MAX_K`` cells visited): it is then searched on the CPU, said once. A GPU out of memory is one line."""
    import faiss

    why = f"nprobe {index.nprobe} is more than its {GPU_MAX_K}"
    for half in (False, True) if index.nprobe <= GPU_MAX_K else ():
        co = faiss.GpuClonerOptions()
        co.useFloat16 = half  # IVF-PQ: 16-bit lookup tables (an IVF-Flat index's storage is unchanged by it)
        if hasattr(co, "use_cuvs"):
            co.use_cuvs = False  # cuVS's IVF has no search with cells given (search_preassigned)
        try:
            return faiss.index_cpu_to_gpu(resources, _gpu["device"], index, co)
        except RuntimeError as e:
            why = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
            if "out of memory" in why.lower() or "memoryallocation" in why.lower():
                raise XlsentError(f"the search index ({index.ntotal:,} vectors) does not fit on the GPU ({why}) — "
                                  "split it with index_groups=, or search on CPUs (leave out gpus_per_worker=, "
                                  "or device='cpu')") from None
    warnings.warn(f"faiss cannot search this index on the GPU ({why}): searching it on the CPU", stacklevel=2)
    return None


def exact_top(queries: np.ndarray, ids: np.ndarray, n: int, vectors, block: int = 2048
              ) -> tuple[np.ndarray, np.ndarray]:
    """The best ``n`` of each query's shortlist (``ids``, −1 = none) scored by numpy's einsum, one query at a time,
    no BLAS, and ordered by score then id: (scores, ids). ``vectors(ids)`` gives the shortlist's vectors
    (…, d); queries are scored ``block`` at a time, so the gathered vectors stay small."""
    exact = np.empty(ids.shape, dtype=np.float32)
    for a in range(0, len(queries), block):
        exact[a:a + block] = np.einsum("qd,qkd->qk", queries[a:a + block], vectors(ids[a:a + block]))
    exact = np.where(ids >= 0, exact, -np.inf).astype(np.float32)
    order = np.lexsort((ids, -exact), axis=1)[:, :n]
    return np.take_along_axis(exact, order, 1), np.take_along_axis(ids, order, 1)


def merge_top(results, n: int, smaller_first: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Each query's best ``n`` of several searches' ``(scores, rows)`` (one pair of arrays a search, rows −1 where
    none), by score — the larger first (cosines), or the smaller (``smaller_first``: Hamming distances) — then
    row, as :func:`exact_top` orders one search's; rows −1 last."""
    scores = np.concatenate([r[0] for r in results], axis=1).astype(np.float32)
    idx = np.concatenate([r[1] for r in results], axis=1)
    key = scores if smaller_first else -scores
    key = np.where(idx >= 0, key, np.inf)
    order = np.lexsort((idx, key), axis=1)[:, :n]
    scores = np.where(idx >= 0, scores, np.inf if smaller_first else -np.inf).astype(np.float32)
    return np.take_along_axis(scores, order, 1), np.take_along_axis(idx, order, 1)


def assign_cells(quantizer, x: np.ndarray, n: int, centroids: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` cells of an IVF ``quantizer`` (a flat inner-product index) nearest each row of ``x``: (inner
    products, cells), best first, the same with any number of threads."""
    centroids = quantizer.reconstruct_n(0, quantizer.ntotal) if centroids is None else centroids
    x = np.ascontiguousarray(x, dtype=np.float32)
    cells = quantizer.search(x, min(quantizer.ntotal, n + SHORTLIST))[1]
    return exact_top(x, cells, n, lambda ids: centroids[np.maximum(ids, 0)])


def choose_kind(n_query: int, n_target: int, dim: int, cfg: IndexConfig, memory_gib: float,
                precision: str = "float16") -> str:
    if cfg.kind not in INDEX_KINDS:
        raise XlsentError(f"unknown index '{cfg.kind}': use one of {', '.join(INDEX_KINDS)}")
    if precision == "ubinary":
        check_binary(cfg.kind, dim)
        code_bits(dim, cfg)
    if cfg.kind != "auto":
        return cfg.kind
    if n_query * n_target <= cfg.exact_max_pairs:
        return "exact"
    if precision == "ubinary":
        return "ivf"  # binary IVF: d/8 bytes a sentence, no product quantisation needed
    return "ivf" if n_target * dim * 4 <= memory_gib * 2**30 / 4 else "ivfpq"


def check_binary(kind: str, dim: int) -> None:
    """A ``ubinary`` store is searched by an exact binary index or a binary IVF one, over whole bytes of sign bits."""
    if kind == "ivfpq":
        raise XlsentError("precision='ubinary' is searched by sign bits, already d/8 bytes a sentence: use index='ivf' "
                          "(binary IVF), 'exact' or 'auto', not 'ivfpq'")
    if dim % 8:
        raise XlsentError(f"precision='ubinary' packs 8 sign bits to a byte: the width {dim} must be a multiple of 8")


_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.int32)


def hamming(codes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Hamming distances between packed sign bits: ``codes`` (n, b) against ``others`` (n, m, b) → (n, m)."""
    return _POPCOUNT[np.bitwise_xor(codes[:, None, :], others)].sum(-1, dtype=np.int32)


def assign_binary_cells(quantizer, codes: np.ndarray, n: int, centroids: np.ndarray | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """The ``n`` cells of a binary IVF ``quantizer`` (an ``IndexBinaryFlat``) nearest each row of ``codes``:
    (Hamming distances as int32, cells), nearest first, ties broken by cell id (whatever faiss's order)."""
    centroids = binary_centroids(quantizer) if centroids is None else centroids
    codes = np.ascontiguousarray(codes, dtype=np.uint8)
    cells = quantizer.search(codes, min(quantizer.ntotal, n + SHORTLIST))[1]
    dist = np.empty(cells.shape, dtype=np.int32)
    for a in range(0, len(codes), 2048):
        dist[a:a + 2048] = hamming(codes[a:a + 2048], centroids[np.maximum(cells[a:a + 2048], 0)])
    dist = np.where(cells >= 0, dist, np.iinfo(np.int32).max)
    order = np.lexsort((cells, dist), axis=1)[:, :n]
    return np.take_along_axis(dist, order, 1), np.take_along_axis(cells, order, 1)


def binary_centroids(quantizer) -> np.ndarray:
    """A binary flat index's codes (its cells' centroids), (ntotal, d/8) uint8."""
    return np.ascontiguousarray(quantizer.reconstruct_n(0, quantizer.ntotal), dtype=np.uint8)


def _binary(store: EmbeddingStore) -> bool:
    return store.spec.dtype == "ubinary"


def code_bits(dim: int, cfg: IndexConfig) -> int:
    """The sign bits a ubinary index holds a vector: ``cfg.bits`` (the first coordinates'), or every coordinate."""
    if cfg.bits and (cfg.bits % 8 or cfg.bits > dim or cfg.bits < 0):
        raise XlsentError(f"{named('search_dimensions', cfg.bits)}: the index keeps whole bytes of sign bits of the "
                          f"first coordinates — give a multiple of 8 from 8 to the width ({dim})")
    return cfg.bits or dim


def codes_of(vectors: np.ndarray, bits: int, offset: np.ndarray | None = None) -> np.ndarray:
    """The sign bits of the first ``bits`` coordinates, packed (a cut vector's signs are the full vector's: the
    renormalisation of ``--dimensions`` does not change them); with ``offset`` (a side's mean row), the signs of
    ``vectors − offset``."""
    x = np.asarray(vectors, dtype=np.float32)
    return np.ascontiguousarray(binary_codes(x if offset is None else x - offset)[:, :bits // 8])


CENTER_CODES = ("none", "target", "own")


def code_offset(store: EmbeddingStore, cfg: IndexConfig) -> np.ndarray | None:
    """The row a ubinary store's sign bits are taken against (``center_codes`` other than ``none``): its mean,
    kept in the store's ``mean.npy``; ``None`` (zero) — also for a store already read centered (``--center``)."""
    if cfg.center_codes not in CENTER_CODES:
        raise XlsentError(f"center_codes {cfg.center_codes!r}: use one of {', '.join(CENTER_CODES)}")
    if not _binary(store) or cfg.center_codes == "none" or store.offset is not None:
        return None
    return store.mean()


def _nlist(n: int, cfg: IndexConfig) -> int:
    return max(1, min(cfg.nlist or int(4 * math.sqrt(n)), n))


def _pq_m(dim: int, cfg: IndexConfig) -> int:
    if cfg.pq_m:
        if dim % cfg.pq_m:
            raise XlsentError(f"index pq_m {cfg.pq_m} must divide the embedding dimension {dim}")
        return cfg.pq_m
    return next(m for m in (64, 48, 32, 16, 8, 4, 2, 1) if dim % m == 0)


def train_index(store: EmbeddingStore, kind: str, cfg: IndexConfig, path: str | Path):
    """An empty IVF(PQ) index trained on a sample of ``store`` (its cells, and codebooks for PQ), written atomically
    to ``path``: trained once, before the target shards are added to copies of it in parallel.

    faiss's k-means scores with BLAS, so the cells depend on the number of threads training them (the same sample
    trained on one and on two threads gives slightly different cells; without BLAS training is 10× slower): a
    job's index is trained once, by its driver, and kept, so that every engine searches the same cells."""
    import faiss

    d, n = store.spec.dim, len(store)
    nlist = _nlist(n, cfg)
    train = store.sample(cfg.train_size or min(n, max(64 * nlist, 10_000 if kind == "ivfpq" else 0)), cfg.seed)
    if _binary(store):  # cells of sign codes: faiss's k-means on the ±1 bits, centroids binarised
        check_binary(kind, d)
        b = code_bits(d, cfg)
        index = faiss.IndexBinaryIVF(faiss.IndexBinaryFlat(b), b, nlist)
        index.train(codes_of(train, b, code_offset(store, cfg)))
        _write_index(index, path)
        return index
    quantizer = faiss.IndexFlatIP(d)
    if kind == "ivf":
        index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
    else:  # 8-bit codes need ~39·256 training vectors; fewer bits for small inputs
        nbits = min(8, max(1, int(math.log2(max(2, len(train) // 39)))))
        index = faiss.IndexIVFPQ(quantizer, d, nlist, _pq_m(d, cfg), nbits, faiss.METRIC_INNER_PRODUCT)
    index.train(train)
    _write_index(index, path)
    return index


def fill_part(store: EmbeddingStore, shards: range, trained: str | Path, out: str | Path,
              offset: np.ndarray | None = None) -> None:
    """``shards`` of ``store`` added, with their global row ids, to a copy of the ``trained`` index → ``out``
    (a ubinary store's sign bits taken against ``offset``, :func:`code_offset`)."""
    import faiss

    from faiss.contrib.ivf_tools import add_preassigned

    if _binary(store):  # sign codes filed in their nearest cell by Hamming distance, ties by cell id
        index = faiss.read_index_binary(str(trained))
        centroids = binary_centroids(index.quantizer)
        for i in shards:
            start, stop = store.bounds(i)
            codes = codes_of(store.shard(i), index.d, offset)  # the trained index's width: the bits it was trained on
            cells = np.ascontiguousarray(assign_binary_cells(index.quantizer, codes, 1, centroids)[1][:, 0])
            ids = np.arange(start, stop, dtype=np.int64)
            add_preassigned(index, codes, cells, ids)
        _write_index(index, out)
        return
    index = faiss.read_index(str(trained))
    centroids = index.quantizer.reconstruct_n(0, index.nlist)
    for i in shards:
        start, stop = store.bounds(i)
        x = np.ascontiguousarray(store.shard(i), dtype=np.float32)
        cells = np.ascontiguousarray(assign_cells(index.quantizer, x, 1, centroids)[1][:, 0])  # not faiss's (BLAS)
        ids = np.arange(start, stop, dtype=np.int64)  # a name holds it: add_preassigned keeps only a raw pointer
        add_preassigned(index, x, cells, ids)
    _write_index(index, out)


def _write_index(index, path: str | Path) -> None:
    import faiss

    with atomic_path(path) as tmp:
        (faiss.write_index_binary if isinstance(index, faiss.IndexBinary) else faiss.write_index)(index, str(tmp))


def index_parts(store: EmbeddingStore, kind: str, cfg: IndexConfig) -> list[range]:
    """The target shards each sub-index holds: consecutive shards, enough that the copy of the trained cells
    every sub-index carries is at most a tenth of its vectors' bytes (one shard each on small inputs)."""
    d, nlist = store.spec.dim, _nlist(len(store), cfg)
    if _binary(store):  # binary IVF: b/8 bytes of sign bits and a 64-bit id a vector; cells of b/8 bytes
        b = code_bits(d, cfg)
        rows = 10 * nlist * (b // 8) / (b // 8 + 8)
    else:
        per_vector = 4 * d if kind == "ivf" else _pq_m(d, cfg) + 8  # IVF-PQ: a code and a 64-bit id
        rows = 10 * nlist * 4 * d / per_vector
    group = max(1, math.ceil(rows / store.spec.shard_size))
    return [range(a, min(a + group, store.n_shards)) for a in range(0, store.n_shards, group)]


def group_parts(n_parts: int, groups: int) -> list[range]:
    """The sub-indexes each search group holds: ``groups`` runs of consecutive parts, as even as they can be
    (no more groups than parts: a group holds at least one)."""
    g = max(1, min(int(groups), n_parts))
    return [range(i * n_parts // g, (i + 1) * n_parts // g) for i in range(g)]


def merge_parts(paths, read):
    """The sub-indexes at ``paths`` (copies of one trained index, global ids) read with ``read`` and merged into one
    index, one after another (faiss's ``merge_from``: each cell's list gets the next part's entries; a merged part
    is emptied and dropped), then the freed heap handed back to the system (glibc's ``malloc_trim``).

    In order rather than balanced (runs of equal numbers of parts): a balanced merge ends with less memory held but
    peaks higher while merging (``benchmarks/mining/merge_parts_memory.py``; figures in
    docs/experiments/mining-and-ray.md)."""
    merged = None
    for path in paths:
        index = read(str(path))
        if merged is None:
            merged = index
        else:
            merged.merge_from(index, 0)
            del index
    from xlsent.utils.memory import trim_heap

    trim_heap()
    return merged


def sub_index_paths(folder: str | Path, n_parts: int) -> tuple[Path, list[Path]]:
    """The trained empty index and the sub-indexes (one per part of the target shards), in ``folder``."""
    folder = Path(folder)
    return folder / "trained.faiss", [folder / f"part-{i:05d}.faiss" for i in range(n_parts)]


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
    """k-NN of query vectors among a target store, by the chosen kind of index.

    An IVF index is a set of sub-indexes in ``index_dir`` (:func:`index_parts`: each a copy of the trained empty
    index filled with a run of target shards under their global row ids). The searcher reads them — all, or the
    parts of search group ``group`` of ``cfg.groups`` (:func:`group_parts`) — and merges them into one index in
    memory (:func:`merge_parts`: the same cells, their lists concatenated), so a query scans its ``nprobe``
    lists once rather than once a part (small parts' per-list overhead dominated the scan: 3.5–5.6× slower at 1M
    rows in 20 parts). Missing pieces are built here; a job builds them first (trained once in the driver, the
    parts filled in parallel, :class:`xlsent.mining.tasks.FillTask`)."""

    def __init__(self, targets: EmbeddingStore, kind: str, cfg: IndexConfig, index_dir: str | Path | None = None,
                 group: int | None = None):
        if kind not in INDEX_KINDS[1:]:
            raise XlsentError(f"unknown index '{kind}': use one of {', '.join(INDEX_KINDS[1:])}")
        if _binary(targets):
            check_binary(kind, targets.spec.dim)
        self.targets, self.kind, self.cfg = targets, kind, cfg
        self.index = None  # the sub-indexes read, merged into one
        self.centroids = None
        self.offset = code_offset(targets, cfg)
        self.seconds = {"cells": 0.0, "scan": 0.0, "rescore": 0.0}  # where search time went (benchmarks read it)
        self.gpu = gpu_resources()  # None: the CPU
        self.on_gpu = False  # the IVF index was copied to the GPU
        self.quantizer = None  # the IVF cells' centroids, on the CPU whatever the device (cells are found there)
        if kind != "exact":
            import faiss

            if index_dir is None:
                raise ValueError("an IVF searcher needs an index folder")
            parts = index_parts(targets, kind, cfg)
            trained, paths = sub_index_paths(index_dir, len(parts))
            if not trained.exists():
                train_index(targets, kind, cfg, trained)
            held = range(len(parts)) if group is None else group_parts(len(parts), cfg.groups)[group]
            for i in held:
                if not paths[i].exists():
                    fill_part(targets, parts[i], trained, paths[i], self.offset)
            read = faiss.read_index_binary if _binary(targets) else faiss.read_index
            self.index = merge_parts([paths[i] for i in held], read)
            self.index.nprobe = self.nprobe = min(cfg.nprobe, self.index.nlist)  # the GPU copy takes it too
            self.quantizer = self.index.quantizer
            self.centroids = (binary_centroids(self.quantizer) if _binary(targets)
                              else self.quantizer.reconstruct_n(0, self.index.nlist))
            on_gpu = None if self.gpu is None or _binary(targets) else index_to_gpu(self.index, self.gpu)
            if on_gpu is not None:  # faiss has no GPU binary IVF: that one stays here
                self.quantizer = faiss.clone_index(self.quantizer)  # its own copy: the CPU index is freed
                self.index, self.on_gpu = on_gpu, True
                from xlsent.utils.memory import trim_heap

                trim_heap()

    @property
    def device(self) -> str:
        """Where the index is scanned: ``cuda`` or ``cpu`` (a binary IVF is always scanned on the CPU; an exact
        search on the GPU when it has one, except a call wanting more than ``GPU_MAX_K`` candidates)."""
        return "cuda" if self.on_gpu or (self.gpu is not None and self.kind == "exact") else "cpu"

    @property
    def binary(self) -> bool:
        return self.targets.spec.dtype == "ubinary"

    def _codes(self, queries: np.ndarray, query_offset: np.ndarray | None) -> np.ndarray | None:
        """A ubinary search's query codes: sign bits of the first ``bits`` coordinates, against the targets' offset
        (or, with ``center_codes="own"``, the queries' own ``query_offset``)."""
        if not self.binary:
            return None
        own = self.cfg.center_codes == "own" and query_offset is not None
        q_off = (query_offset if own else self.offset) if self.offset is not None else None
        return codes_of(queries, code_bits(self.targets.spec.dim, self.cfg), q_off)

    def cells(self, queries: np.ndarray, query_offset: np.ndarray | None = None):
        """An IVF search's cells for each query, ``(similarities or distances, cells)``, found without BLAS
        (:func:`assign_cells`, :func:`assign_binary_cells`): the same for every search group, so a grouped job
        finds them once a query shard. ``None`` for exact search."""
        if self.index is None:
            return None
        import time

        t0 = time.perf_counter()
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        x = self._codes(queries, query_offset) if self.binary else queries
        found = (assign_binary_cells if self.binary else assign_cells)(self.quantizer, x, self.nprobe,
                                                                        self.centroids)
        self.seconds["cells"] += time.perf_counter() - t0
        return found

    def shortlist(self, queries: np.ndarray, k: int, query_offset: np.ndarray | None = None, cells=None
                  ) -> tuple[np.ndarray, np.ndarray]:
        """Each query's candidates before re-scoring, ``(scores, rows)`` best first (rows −1 where none): the k ×
        ``rescore`` nearest by Hamming distance for a ubinary store (scores = distances, smaller first), else the
        k by the index's inner products (IVF-PQ's approximate; exact search: k plus a margin over BLAS's rounding,
        see the module's docstring). ``cells``: :meth:`cells`'s, if found already."""
        import time

        import faiss

        k = min(k, len(self.targets))
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        binary = self.binary
        wide = k * max(1, self.cfg.rescore) if binary else k + SHORTLIST if self.kind == "exact" else k
        wide = min(len(self.targets), wide)
        if self.index is not None and cells is None:
            cells = self.cells(queries, query_offset)
        t1 = time.perf_counter()
        codes = self._codes(queries, query_offset)
        if self.on_gpu and k > GPU_MAX_K:
            raise XlsentError(f"{named('k', k)}: a GPU search finds at most {GPU_MAX_K} neighbours a query — give "
                              f"k={GPU_MAX_K} or less, or search on CPUs")
        gpu = self.gpu if wide <= GPU_MAX_K else None  # exact search: more candidates than the GPU picks → here
        heap = faiss.ResultHeap(len(queries), wide, keep_max=not binary)
        for i in range(self.targets.n_shards if self.kind == "exact" else 1):
            if binary and self.kind != "exact":  # binary IVF: global ids, Hamming distances
                dist, idx = self.index.search_preassigned(codes, wide, cells[1], cells[0])
                sims = dist.astype(np.float32)
            elif binary:  # sign bits, Hamming distance (the smaller the better)
                flat = (faiss.IndexBinaryFlat(codes.shape[1] * 8) if gpu is None
                        else faiss.GpuIndexBinaryFlat(gpu, codes.shape[1] * 8, _binary_flat_config()))
                flat.add(codes_of(self.targets.shard(i), codes.shape[1] * 8, self.offset))
                dist, idx = flat.search(codes, wide)
                sims = dist.astype(np.float32)
                start = self.targets.bounds(i)[0]
                idx = np.where(idx >= 0, idx + start, -1)
            elif self.kind == "exact" and gpu is not None:  # the shard's scores on the GPU, no index kept
                shard = np.ascontiguousarray(self.targets.shard(i), dtype=np.float32)
                sims, idx = faiss.knn_gpu(gpu, queries, shard, min(wide, len(shard)),
                                          metric=faiss.METRIC_INNER_PRODUCT, device=_gpu["device"])
                start = self.targets.bounds(i)[0]
                idx = np.where(idx >= 0, idx + start, -1)
            elif self.kind == "exact":
                flat = faiss.IndexFlatIP(self.targets.spec.dim)
                flat.add(self.targets.shard(i))
                sims, idx = flat.search(queries, wide)
                start = self.targets.bounds(i)[0]
                idx = np.where(idx >= 0, idx + start, -1)
            else:  # global ids already; IVF-PQ's top k by its approximate scores
                sims, idx = self.index.search_preassigned(queries, k, cells[1], cells[0])
            heap.add_result(sims, idx)
        heap.finalize()
        self.seconds["scan"] += time.perf_counter() - t1
        return heap.D, heap.I

    def rescore(self, queries: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` of each query's candidate ``rows`` by the cosine of the stored vectors: the same numbers
        whatever the index (IVF-PQ's are approximate, Hamming distances coarse), the machine's threads or the
        engine."""
        import time

        t2 = time.perf_counter()
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        out = exact_top(queries, rows, min(k, len(self.targets)), lambda ids: gather(self.targets, ids))
        self.seconds["rescore"] += time.perf_counter() - t2
        return out

    def search(self, queries: np.ndarray, k: int, query_offset: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """(cosines, target rows), each (n_query, k), best first; rows are −1 where fewer than k were found:
        :meth:`shortlist`, then :meth:`rescore`. ``query_offset``: with ``center_codes="own"``, the queries' side's
        mean row (their sign bits are taken against it, as the targets' against theirs); otherwise the queries'
        bits are taken against the targets' offset."""
        return self.rescore(queries, self.shortlist(queries, k, query_offset)[1], k)
