"""Candidate scoring and pair selection for bitext mining (Artetxe & Schwenk 2019, LASER).

The margins themselves (ratio, distance, absolute) are :func:`xlsent.similarity.margin`.
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

from xlsent.similarity import MARGINS, greedy_one_to_one, knn_mean, margin
from xlsent.utils.errors import XlsentError

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


def candidate_scores(sims: np.ndarray, idx: np.ndarray, own_mean: np.ndarray, other_mean: np.ndarray,
                     kind: str) -> np.ndarray:
    """Margin score of every (row, candidate) pair; missing candidates get −inf."""
    safe = np.where(idx >= 0, idx, 0)
    scores = margin(sims, (own_mean[:, None] + other_mean[safe]) / 2, kind)
    return np.where(idx >= 0, scores, -np.inf)


def runner_up(scores: np.ndarray) -> np.ndarray:
    """Each row's second-highest candidate score (−inf where a row has fewer than two candidates)."""
    if scores.shape[1] < 2:
        return np.full(len(scores), -np.inf, dtype=np.float64)
    return np.partition(scores, -2, axis=1)[:, -2].astype(np.float64)


@dataclass
class Candidates:
    """One direction's best candidate per query row: its row on the other side (−1: none), margin score, and the
    runner-up's score (the decoy of the automatic threshold). Row-wise, so shards concatenate to the whole."""

    best: np.ndarray
    score: np.ndarray
    second: np.ndarray

    @classmethod
    def concat(cls, parts: list["Candidates"]) -> "Candidates":
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("best", "score", "second")))


def best_candidates(sims: np.ndarray, idx: np.ndarray, own_mean: np.ndarray, other_mean: np.ndarray,
                    kind: str = "ratio") -> Candidates:
    """The map step of the selection, for any block of query rows: each row's candidates scored with the
    margin (``own_mean``: those rows' k-NN means; ``other_mean``: every row of the other side's)."""
    if kind not in MARGINS:
        raise XlsentError(f"unknown margin '{kind}': use one of {', '.join(MARGINS)}")
    scores = candidate_scores(sims, idx, own_mean, other_mean, kind)
    rows, arg = np.arange(len(scores)), scores.argmax(1)
    return Candidates(idx[rows, arg], scores[rows, arg], runner_up(scores))


def select_pairs(fwd_sims: np.ndarray, fwd_idx: np.ndarray, bwd_sims: np.ndarray, bwd_idx: np.ndarray,
                 k: int = 4, mode: str = "max", kind: str = "ratio", threshold: float | str | None = None,
                 dedupe: bool = True, counts: dict | None = None) -> MinedPairs:
    """Score the kNN candidates of both directions and select pairs.

    ``fwd_sims``/``fwd_idx``: each source's nearest targets (cosine, target row), shape (n_src, ≥ k);
    ``bwd_*`` the same from targets to sources. ``k`` neighbours form the margin's average (the
    candidate lists may be longer). Pairs scoring below ``threshold`` are dropped; ``"auto"``
    estimates it from the selected candidates' scores (:func:`xlsent.mining.threshold.auto_threshold`;
    the cut commutes with the greedy one-to-one selection, which takes pairs best first). ``counts``,
    when given, receives how many candidates each step kept or removed, and the auto estimate.

    The same as the map step (:func:`best_candidates`) on every block of rows of each direction followed by
    the reduce step (:func:`select_from_candidates`), which is how a job split into shards runs it.
    """
    if mode not in MODES:
        raise XlsentError(f"unknown mining mode '{mode}': use one of {', '.join(MODES)}")
    fwd_mean, bwd_mean = knn_mean(fwd_sims, fwd_idx, k), knn_mean(bwd_sims, bwd_idx, k)
    return select_from_candidates(best_candidates(fwd_sims, fwd_idx, fwd_mean, bwd_mean, kind),
                                  best_candidates(bwd_sims, bwd_idx, bwd_mean, fwd_mean, kind),
                                  mode, threshold, dedupe, counts)


def select_from_candidates(fwd: Candidates, bwd: Candidates, mode: str = "max", threshold: float | str | None = None,
                           dedupe: bool = True, counts: dict | None = None,
                           known: np.ndarray | None = None, known_given: int | None = None) -> MinedPairs:
    """The reduce step of the selection, in one process: both directions' best candidates (every row, in row
    order) → pairs, thresholded and made one-to-one (see :func:`select_pairs`). ``known``: the margin scores of
    pairs known to be translations, scored in the same pool (those the model retrieves, of ``known_given``) — the
    ``"auto"`` cut is anchored on them (:func:`xlsent.mining.threshold.anchored_threshold`)."""
    counts = counts if counts is not None else {}
    if mode not in MODES:
        raise XlsentError(f"unknown mining mode '{mode}': use one of {', '.join(MODES)}")
    n_src, n_tgt = len(fwd.best), len(bwd.best)
    f_best, f_score, b_best, b_score = fwd.best, fwd.score, bwd.best, bwd.score
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
    if threshold is not None and threshold != "auto":
        n = len(pairs)
        pairs = pairs.take(pairs.score >= float(threshold))
        counts["removed_below_threshold"] = n - len(pairs)
    if mode == "max" or (dedupe and mode in ("forward", "backward")):
        n = len(pairs)
        pairs = pairs.take(greedy_one_to_one(pairs.src, pairs.tgt, pairs.score))
        counts["removed_sentence_already_paired"] = n - len(pairs)
    else:
        pairs = pairs.take(np.argsort(-pairs.score, kind="stable"))
    if threshold == "auto":
        from xlsent.mining.threshold import anchored_threshold, auto_threshold

        # each pair's decoy: the runner-up of its source's or its target's list, the larger (a non-translation)
        decoys = np.maximum(fwd.second[pairs.src], bwd.second[pairs.tgt])
        est = (auto_threshold(pairs.score, decoys) if known is None else
               anchored_threshold(pairs.score, decoys, known, given=known_given))
        counts["auto_threshold"] = est.to_dict()
        if est.threshold is not None:
            n = len(pairs)
            pairs = pairs.take(pairs.score >= est.threshold)
            counts["removed_below_threshold"] = n - len(pairs)
    counts["pairs"] = len(pairs)
    return pairs
