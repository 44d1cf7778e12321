"""Negative (non-parallel) pairs built from the parallel data itself (Huang et al. 2023, §4.1, Table 13).

Each function returns an index array ``(n_negatives, K)`` into the target side:
row r pairs source ``src_idx[r]`` with targets ``neg[r, :]``. A target whose
text equals the source's own translation is never used as a negative.

* ``random`` — a uniformly drawn other target (the paper's Table 3 construction), K = 1;
* ``worst`` — the most similar non-parallel target under the current model
  (the closest candidate, i.e. the hardest negative), K = 1;
* ``average`` — K random non-parallel targets; the loss averages their
  negative terms (our reading of Table 13's "average value").
"""

from __future__ import annotations

import numpy as np

from xlsent.similarity import knn

STRATEGIES = ("random", "worst", "average")


def _same_text_mask(tgt_texts: list[str]) -> dict[str, np.ndarray]:
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(tgt_texts):
        groups.setdefault(t, []).append(i)
    return {t: np.array(ix) for t, ix in groups.items()}


def random_negatives(tgt_texts: list[str], per_positive: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n = len(tgt_texts)
    if n < 2:
        raise ValueError("need at least two pairs to build negatives")
    src_idx = np.repeat(np.arange(n), per_positive)
    neg = rng.integers(0, n, size=(len(src_idx), k))
    tgt = np.asarray(tgt_texts, dtype=object)
    for _ in range(100):  # redraw collisions with the own translation (or a duplicate of it)
        bad = tgt[neg] == tgt[src_idx][:, None]
        if not bad.any():
            break
        neg[bad] = rng.integers(0, n, size=int(bad.sum()))
    return src_idx, neg


def worst_negatives(src_vecs: np.ndarray, tgt_vecs: np.ndarray, tgt_texts: list[str], per_positive: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``per_positive`` most similar (cosine) non-parallel targets of each source."""
    n = len(tgt_texts)
    extra = max(len(v) for v in _same_text_mask(tgt_texts).values())
    _, idx = knn(src_vecs, tgt_vecs, min(n, per_positive + extra), "cosine")
    tgt = np.asarray(tgt_texts, dtype=object)
    src_idx, neg = [], []
    for i in range(n):
        cand = [j for j in idx[i] if tgt[j] != tgt[i]][:per_positive]
        src_idx += [i] * len(cand)
        neg += cand
    return np.array(src_idx, dtype=np.int64), np.array(neg, dtype=np.int64).reshape(-1, 1)


def build_negatives(
    strategy: str,
    tgt_texts: list[str],
    rng: np.random.Generator,
    per_positive: int = 1,
    average_k: int = 8,
    src_vecs: np.ndarray | None = None,
    tgt_vecs: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    if strategy == "random":
        return random_negatives(tgt_texts, per_positive, 1, rng)
    if strategy == "average":
        return random_negatives(tgt_texts, per_positive, average_k, rng)
    if strategy == "worst":
        if src_vecs is None or tgt_vecs is None:
            raise ValueError("the worst strategy needs the current source and target vectors")
        return worst_negatives(src_vecs, tgt_vecs, tgt_texts, per_positive)
    raise ValueError(f"negative strategy must be one of {STRATEGIES}, not {strategy!r}")
