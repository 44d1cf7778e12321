"""The dynamic programme of sentence alignment, over a band of the (source, target) grid.

A node ``(x, y)`` means "the first x source and y target sentences are aligned"; a step of type ``(a, b)``
joins the next ``a`` source sentences to the next ``b`` target ones (``(1, 0)`` and ``(0, 1)`` are deletions).
The best path from ``(0, 0)`` to ``(n_src, n_tgt)`` minimises the sum of its steps' costs.

Only nodes inside a :class:`Band` are visited: row ``x`` holds ``y`` in ``[lo[x], hi[x])``. A full band is the
whole grid (small documents); a narrow one follows a coarse path (:func:`band_around`), so time and memory grow
with the number of sentences times the band's width. Rows are computed one at a time, every node of a row at
once: each step type with ``a ≥ 1`` reads an earlier row; the ``(0, 1)`` deletions within a row, which chain, are
one running minimum (a node's cost is the best over the row's earlier nodes of their cost plus one deletion per
sentence skipped). Ties go to the earlier step type in the list, then to a step over a deletion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

# cost(a, b, x, ys): the costs of steps (a, b) ending at source sentence x (0-based, the run's last sentence) and
# at each target sentence in ys; inf where a run would start before the document
StepCost = Callable[[int, int, int, np.ndarray], np.ndarray]


def step_types(max_overlap: int) -> list[tuple[int, int]]:
    """Every ``(a, b)`` with a, b ≥ 1 and a + b ≤ max_overlap + 1 (1-1 first), then the two deletions."""
    n = max(1, int(max_overlap))
    types = [(a, b) for s in range(2, n + 2) for a in range(1, s) for b in (s - a,)]
    return types + [(1, 0), (0, 1)]


@dataclass
class Band:
    """Rows 0..n_src of the node grid; row x visits y in [lo[x], hi[x])."""

    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def full(cls, n_src: int, n_tgt: int) -> "Band":
        return cls(np.zeros(n_src + 1, dtype=np.int64), np.full(n_src + 1, n_tgt + 1, dtype=np.int64))

    @property
    def cells(self) -> int:
        return int((self.hi - self.lo).sum())


def band_around(path: list[tuple[range, range]], n_src: int, n_tgt: int, width: int, scale: int = 2) -> Band:
    """The band around a coarse path (its blocks, at ``1/scale`` of the resolution) at full resolution: every
    node of each block's rectangle (consecutive deletions pooled into one rectangle, so the search can recover
    from a coarse error), widened by ``width`` on each side, the last rectangle stretched to the grid's corner."""
    lo = np.full(n_src + 1, n_tgt + 1, dtype=np.int64)
    hi = np.zeros(n_src + 1, dtype=np.int64)
    x = y = 0
    rects = []
    pending = None  # the start node of a run of deletions
    for src, tgt in path:
        x1, y1 = x + len(src) * scale, y + len(tgt) * scale
        if not len(src) or not len(tgt):
            pending = pending or (x, y)
        else:
            if pending:
                rects.append((*pending, x, y))
                pending = None
            rects.append((x, y, x1, y1))
        x, y = x1, y1
    if pending:
        rects.append((*pending, x, y))
    rects.append((min(x, n_src), min(y, n_tgt), n_src, n_tgt))  # what the coarse level dropped (odd lengths)
    for x0, y0, x1, y1 in rects:
        x0, x1 = min(x0, n_src), min(x1, n_src)
        lo[x0:x1 + 1] = np.minimum(lo[x0:x1 + 1], max(0, min(y0, n_tgt) - width))
        hi[x0:x1 + 1] = np.maximum(hi[x0:x1 + 1], min(n_tgt, y1) + width + 1)
    hi = np.minimum(hi, n_tgt + 1)
    lo[0], hi[-1] = 0, n_tgt + 1
    return Band(lo, hi)


def align_band(n_src: int, n_tgt: int, types: list[tuple[int, int]], cost: StepCost, deletion: float,
               band: Band) -> tuple[list[tuple[range, range]], np.ndarray]:
    """The cheapest path through ``band``: its blocks ``(source range, target range)`` in order, and each block's
    cost. ``types`` lists the steps with a, b ≥ 1 (deletions, costing ``deletion`` a sentence, are always on)."""
    inner = [t for t in types if t[0] and t[1]]
    moves = inner + [(1, 0)]
    rows: list[np.ndarray] = []
    choices: list[np.ndarray] = []
    del_code = len(moves)  # the (0, 1) step's code
    for x in range(n_src + 1):
        lo, hi = int(band.lo[x]), int(band.hi[x])
        ys = np.arange(lo, hi)
        best = np.full(len(ys), np.inf)
        choice = np.full(len(ys), -1, dtype=np.int8)
        if x == 0:
            best[ys == 0] = 0.0
        for code, (a, b) in enumerate(moves):
            if x < a:
                continue
            prev, plo, phi = rows[x - a], int(band.lo[x - a]), int(band.hi[x - a])
            src = ys - b
            ok = (src >= plo) & (src < phi)
            if not ok.any():
                continue
            cand = np.full(len(ys), np.inf)
            cand[ok] = prev[src[ok] - plo]
            if b:
                cand[ok] += cost(a, b, x - 1, ys[ok] - 1)
            else:
                cand[ok] += deletion
            better = cand < best
            best[better], choice[better] = cand[better], code
        # (0, 1) deletions along the row: best[i] = min over j ≤ i of best[j] + (i − j)·deletion
        shift = np.arange(len(ys)) * deletion
        shifted = best - shift
        running = np.minimum.accumulate(shifted)
        left = running < shifted
        best = np.where(left, running + shift, best)
        choice[left] = del_code
        rows.append(best)
        choices.append(choice)
    if not np.isfinite(rows[n_src][n_tgt - int(band.lo[n_src])]):
        raise ValueError("the band holds no path to the last sentences")
    blocks, costs = [], []
    x, y = n_src, n_tgt
    while x or y:
        i = y - int(band.lo[x])
        code = int(choices[x][i])
        a, b = (0, 1) if code == del_code else moves[code]
        costs.append(rows[x][i] - rows[x - a][y - b - int(band.lo[x - a])])
        blocks.append((range(x - a, x), range(y - b, y)))
        x, y = x - a, y - b
    return blocks[::-1], np.asarray(costs[::-1], dtype=np.float64)
