"""Margin scoring and pair selection for bitext mining (Artetxe & Schwenk 2019, LASER).

With ``x`` a source sentence, ``y`` a target sentence, cos their cosine and
``NN_k(x)`` the ``k`` nearest targets of ``x`` (``NN_k(y)`` the ``k`` nearest sources of ``y``)::

    b(x, y)  = ( mean_{z ∈ NN_k(x)} cos(x, z) + mean_{z ∈ NN_k(y)} cos(y, z) ) / 2
    ratio    = cos(x, y) / b(x, y)          (the default, "ratio margin")
    distance = cos(x, y) − b(x, y)
    absolute = cos(x, y)                    (no margin)

Candidates are the ``k`` nearest neighbours found in each direction; retrieval modes:

* ``forward``: each source keeps its best-scored target;
* ``backward``: each target keeps its best-scored source;
* ``intersect``: pairs that are the best in both directions;
* ``max``: forward and backward candidates pooled, taken greedily by score, each sentence
  used at most once (LASER's ``max``).

``dedupe`` (xlsent) makes ``forward`` and ``backward`` one-to-one the same greedy way
(``intersect`` and ``max`` already are).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlsent.utils.errors import XlsentError

MARGINS = ("ratio", "distance", "absolute")
MODES = ("forward", "backward", "intersect", "max")


@dataclass
class MinedPairs:
    """Selected pairs: row indices into the source and target sentence lists, and their scores (best first)."""

    src: np.ndarray
    tgt: np.ndarray
    score: np.ndarray

    def __len__(self) -> int:
        return len(self.score)

    def take(self, keep: np.ndarray) -> "MinedPairs":
        return MinedPairs(self.src[keep], self.tgt[keep], self.score[keep])


def margin(cos: np.ndarray, b: np.ndarray, kind: str = "ratio") -> np.ndarray:
    """``cos`` against the neighbourhood average ``b`` (same shape), by ``kind``."""
    if kind == "ratio":
        return cos / b
    if kind == "distance":
        return cos - b
    if kind == "absolute":
        return cos.copy()
    raise XlsentError(f"unknown margin '{kind}': use one of {', '.join(MARGINS)}")


def knn_mean(sims: np.ndarray, idx: np.ndarray, k: int) -> np.ndarray:
    """Mean cosine of each row's first ``k`` valid neighbours (faiss marks missing ones with index −1)."""
    s, valid = sims[:, :k], idx[:, :k] >= 0
    n = valid.sum(1)
    return np.where(n > 0, np.where(valid, s, 0).sum(1) / np.maximum(n, 1), 0).astype(sims.dtype, copy=False)


def candidate_scores(sims: np.ndarray, idx: np.ndarray, own_mean: np.ndarray, other_mean: np.ndarray,
                     kind: str) -> np.ndarray:
    """Margin score of every (row, candidate) pair; missing candidates get −inf."""
    safe = np.where(idx >= 0, idx, 0)
    scores = margin(sims, (own_mean[:, None] + other_mean[safe]) / 2, kind)
    return np.where(idx >= 0, scores, -np.inf)


def greedy_one_to_one(src: np.ndarray, tgt: np.ndarray, score: np.ndarray, chunk: int = 1 << 16) -> np.ndarray:
    """Indices of pairs kept when taken best-first with every source and target used once (best first).

    Memory: one byte per sentence and per candidate besides the sort order; candidates are walked in
    chunks so that no list of Python integers as long as the input is built."""
    if len(score) == 0:
        return np.zeros(0, dtype=np.int64)
    used_s, used_t = bytearray(int(src.max()) + 1), bytearray(int(tgt.max()) + 1)
    order = np.argsort(-score, kind="stable")
    kept = bytearray(len(order))  # by position in ``order``
    for a in range(0, len(order), chunk):
        o = order[a:a + chunk]
        for j, (s, t) in enumerate(zip(src[o].tolist(), tgt[o].tolist()), a):
            if not (used_s[s] or used_t[t]):
                used_s[s] = used_t[t] = kept[j] = 1
    return order[np.frombuffer(kept, dtype=bool)]


def select_pairs(fwd_sims: np.ndarray, fwd_idx: np.ndarray, bwd_sims: np.ndarray, bwd_idx: np.ndarray,
                 k: int = 4, mode: str = "max", kind: str = "ratio", threshold: float | None = None,
                 dedupe: bool = True, counts: dict | None = None) -> MinedPairs:
    """Score the kNN candidates of both directions and select pairs.

    ``fwd_sims``/``fwd_idx``: each source's nearest targets (cosine, target row), shape (n_src, ≥ k);
    ``bwd_*`` the same from targets to sources. ``k`` neighbours form the margin's average (the
    candidate lists may be longer). Pairs scoring below ``threshold`` are dropped. ``counts``, when
    given, receives how many candidates each step kept or removed.
    """
    counts = counts if counts is not None else {}
    if mode not in MODES:
        raise XlsentError(f"unknown mining mode '{mode}': use one of {', '.join(MODES)}")
    if kind not in MARGINS:
        raise XlsentError(f"unknown margin '{kind}': use one of {', '.join(MARGINS)}")
    fwd_mean, bwd_mean = knn_mean(fwd_sims, fwd_idx, k), knn_mean(bwd_sims, bwd_idx, k)
    fs = candidate_scores(fwd_sims, fwd_idx, fwd_mean, bwd_mean, kind)
    bs = candidate_scores(bwd_sims, bwd_idx, bwd_mean, fwd_mean, kind)
    n_src, n_tgt = len(fs), len(bs)
    f_arg, b_arg = fs.argmax(1), bs.argmax(1)
    f_best, f_score = fwd_idx[np.arange(n_src), f_arg], fs[np.arange(n_src), f_arg]
    b_best, b_score = bwd_idx[np.arange(n_tgt), b_arg], bs[np.arange(n_tgt), b_arg]
    if mode == "forward":
        pairs = MinedPairs(np.arange(n_src), f_best, f_score)
    elif mode == "backward":
        pairs = MinedPairs(b_best, np.arange(n_tgt), b_score)
    elif mode == "intersect":
        src = np.arange(n_src)
        ok = f_best >= 0
        ok[ok] = b_best[f_best[ok]] == src[ok]
        pairs = MinedPairs(src[ok], f_best[ok], f_score[ok])
    else:  # max
        pairs = MinedPairs(np.concatenate([np.arange(n_src), b_best]), np.concatenate([f_best, np.arange(n_tgt)]),
                           np.concatenate([f_score, b_score]))
    pairs = pairs.take((pairs.src >= 0) & (pairs.tgt >= 0) & np.isfinite(pairs.score))
    counts["candidates"] = len(pairs)
    if threshold is not None:
        n = len(pairs)
        pairs = pairs.take(pairs.score >= threshold)
        counts["removed_below_threshold"] = n - len(pairs)
    if mode == "max" or (dedupe and mode in ("forward", "backward")):
        n = len(pairs)
        pairs = pairs.take(greedy_one_to_one(pairs.src, pairs.tgt, pairs.score))
        counts["removed_sentence_already_paired"] = n - len(pairs)
    else:
        pairs = pairs.take(np.argsort(-pairs.score, kind="stable"))
    counts["pairs"] = len(pairs)
    return pairs
