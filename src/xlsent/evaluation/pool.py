"""Held-out pairs retrieved in a hard pool: every unlabelled line of the other side is a candidate too.

A user's held-out seed pairs are few (20 to 100): retrieved among themselves, P@1 saturates and cannot tell two
models apart. Here each held-out query is ranked against the held-out targets *and* every line of the plain text on
the target side (thousands to millions, read one stored shard at a time), so the retrieval is as hard as mining it.
A hit: the gold target's cosine beats every other candidate's. A pool line whose vector is the gold's own (cosine ≥
:data:`SAME_TEXT` with it: the same sentence, which plain text drawn from the same source often repeats) is not
counted as a wrong answer — the tie rule of every xlsent retrieval figure, without reading the pool's texts.

Used by :mod:`xlsent.recipes.bootstrap` for its stop rule; each query's hit is kept, so the interval is a bootstrap
over queries (:func:`xlsent.evaluation.bootstrap.mean_ci`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from xlsent.evaluation.bootstrap import mean_ci
from xlsent.similarity import SAME_TEXT



@dataclass
class PoolScore:
    """Retrieval of held-out pairs in a hard pool, both directions: each query's hit (1/0) and gap (gold cosine
    minus the best wrong candidate's), the pool sizes, and the mean P@1 with its 95% interval."""

    fwd_hits: np.ndarray  # src query → tgt candidates
    bwd_hits: np.ndarray  # tgt query → src candidates
    gaps: np.ndarray  # both directions, fwd then bwd
    pool: dict = field(default_factory=dict)  # {"src": n, "tgt": n}: candidates besides the held-out pairs

    @property
    def p_at_1(self) -> float:
        return float(np.concatenate([self.fwd_hits, self.bwd_hits]).mean())

    @property
    def gap(self) -> float:
        return float(self.gaps.mean())

    def key(self) -> tuple[float, float]:
        """What is compared: mean P@1 of both directions, ties broken by the mean gap."""
        return (round(self.p_at_1, 9), round(self.gap, 9))

    def to_dict(self, resamples: int = 1000, seed: int = 0) -> dict:
        both = np.concatenate([self.fwd_hits, self.bwd_hits])
        return {"p_at_1": self.p_at_1, "ci95": mean_ci(both, resamples, seed),
                "src2tgt": float(self.fwd_hits.mean()), "tgt2src": float(self.bwd_hits.mean()),
                "gap": self.gap, "queries": int(len(self.fwd_hits)), "pool": self.pool}


def _direction(queries: np.ndarray, golds: np.ndarray, same_gold: np.ndarray,
               shards: Iterable[np.ndarray]) -> tuple[np.ndarray, np.ndarray, int]:
    """Each query's hit and gap against the held-out golds (``same_gold[i, j]``: gold j is the same text as gold i,
    so not a wrong answer) and every row of ``shards``; and how many pool rows were read."""
    gold = np.einsum("ij,ij->i", queries, golds)
    sim = queries @ golds.T
    wrong = np.where(same_gold, -np.inf, sim).max(axis=1)
    rows = 0
    for shard in shards:
        shard = np.asarray(shard, dtype=np.float32)
        if not len(shard):
            continue
        rows += len(shard)
        s = queries @ shard.T
        own = (golds @ shard.T) >= SAME_TEXT  # the gold's own text among the plain lines: not a wrong answer
        wrong = np.maximum(wrong, np.where(own, -np.inf, s).max(axis=1))
    wrong = np.where(np.isfinite(wrong), wrong, gold - 1.0)
    return (gold > wrong).astype(float), gold - wrong, rows


def pool_retrieval(src: np.ndarray, tgt: np.ndarray, src_texts: list[str], tgt_texts: list[str],
                   src_pool: Iterable[np.ndarray], tgt_pool: Iterable[np.ndarray]) -> PoolScore:
    """Score held-out pairs (``src[i]`` translates ``tgt[i]``, L2-normalised rows of the model being scored, and
    their texts for ties) in pools that also hold ``src_pool`` / ``tgt_pool``: each an iterable of arrays of
    L2-normalised rows of the same model (a mining job's stored shards, or one array)."""
    if len(src) != len(tgt) or not len(src):
        raise ValueError("pool_retrieval needs as many held-out sources as targets, at least one")
    s_txt, t_txt = np.asarray(src_texts, dtype=object), np.asarray(tgt_texts, dtype=object)
    same_t = t_txt[:, None] == t_txt[None, :]
    same_s = s_txt[:, None] == s_txt[None, :]
    fwd, fgap, n_tgt = _direction(src, tgt, same_t, tgt_pool)
    bwd, bgap, n_src = _direction(tgt, src, same_s, src_pool)
    return PoolScore(fwd, bwd, np.concatenate([fgap, bgap]), {"src": n_src, "tgt": n_tgt})
