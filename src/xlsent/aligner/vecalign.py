"""Sentence alignment of two translated documents: Vecalign (Thompson & Koehn 2019, EMNLP, "Vecalign: Improved
Sentence Alignment in Linear Time and Space") on any xlsent encoder.

1. **Overlaps.** Every run of up to ``max_overlap`` consecutive sentences of each document has a unit vector;
   ``layers[k - 1][i]`` is the run of k sentences that ends at sentence i. Vecalign embeds each run's joined
   text (``runs="concat"``); the default here embeds the sentences only and takes a run's vector as the
   normalised sum of its sentences' (``runs="mean"``): on ``bible-align:dev`` with e5-small about the same strict
   F1 on split verses, a little lower with deletions, for far less embedding time — what makes long
   documents practical on a CPU (``docs/experiments/alignment-and-filters.md``).
2. **Cost** of joining a source run x (a sentences) to a target run y (b sentences)::

       c(x, y) = a·b · 2·(1 − cos(x, y)) / (n(x) + n(y)),    n(v) = 1 − mean_s cos(v, r_s)

   where the r_s are ``norm_samples`` runs drawn from the *other* document: a pair as alike as two random
   sentences of these documents costs about 1 (times a·b), a perfect one 0. The a·b factor counters the higher
   cosines of long concatenations (the paper's nSents(x)·nSents(y)). The 2 makes n(x)+n(y) a mean.
3. **Length cost** (not in Vecalign; ``length_weight``, 0 turns it off): each block also costs
   ``length_weight`` × (−log P(|δ|) − 1), Gale & Church's (1993) length cost with δ = (l_t − r·l_s) /
   √(s²·(l_s + l_t/r)/2), l the runs' lengths in characters, r the two documents' length ratio (so any pair of
   scripts works) and s² = 6.8, theirs. Vectors say which sentences match; lengths say where a verse-sized block
   ends, which cosine barely sees (a short second sentence such as "Usandibisire." moves a run's vector
   little). The − 1 centres the term: for a true block P(|δ|) is uniform, so −log P averages 1, and uncentred
   it made every extra block cost more — with lengths as noisy as ±20% a sentence it merged neighbours into
   2-2 blocks (tests/test_align.py). On ``bible-align:dev``, weight 0.1 raised strict F1 on split verses and
   with deletions; weights 0.05–0.2, s² from 3 to 30 and the uncentred form scored about the same there
   (``docs/experiments/alignment-and-filters.md``).
4. **Deletion penalty** (1-0 and 0-1, per sentence): the ``deletion_quantile`` quantile of the costs of
   ``cost_samples`` random 1-1 pairs of the two documents (length cost included). Vecalign's 0.2 absorbed
   deleted sentences into 2-1 blocks on the development data; with the length cost, 0.02 and 0.05 had the
   same mean strict F1 over the split-verse and the deletion variants of ``bible-align:dev``, 0.02 the better
   with deletions (``docs/experiments/alignment-and-filters.md``).
5. **Steps** 1-1, 1-2, 2-1 … up to a + b ≤ max_overlap + 1 (Vecalign's ``alignment_max_size`` = this + 1;
   ``max_overlap`` 3 is its default of 4), plus the deletions; the best path by dynamic programming
   (:mod:`xlsent.aligner.dp`).
6. **Coarse to fine.** While the grid has more than ``full_dp_cells`` nodes, both documents are halved (each
   pair of consecutive sentence vectors summed, an odd last one dropped, the document's mean subtracted,
   re-normalised), aligned at that resolution with 1-1 steps and deletions only (recursively), and the full
   resolution is searched with every step type in a band around the coarse path, ``search_buffer`` nodes
   wide on each side. Normalisers, lengths and the deletion penalty are recomputed at each resolution. Time
   and memory grow linearly with the documents' length.

Choices the paper leaves open, and how they are made here:

* The normalising sample is drawn once per document pair and resolution, from valid runs only (never the
  padding before a document's first sentences, which Vecalign embeds as the string "PAD"), uniformly across
  the runs of every length, with a fixed seed — so an alignment is reproducible.
* Small documents (≤ ``full_dp_cells`` nodes) get one exact DP over the whole grid with every step type;
  Vecalign instead searches a band around a 1-1 path even then.
* The deletion penalty is the plain quantile of the sampled costs (Vecalign reads it off a 1,000-bin
  histogram, which lands slightly lower).
* A block's score is its vectors' cost divided by a·b (0 identical … ≈ 1 as unlike as random sentences), as
  Vecalign prints — the length cost is left out of it, so a score still reads as "how alike"; a deletion's score
  is 0, as there.
* ``normalise=False``, ``max_overlap=1`` and ``length_weight=0`` give the plain baseline: cost 1 − cos, 1-1 steps
  and deletions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy import special

from xlsent.aligner import RUNS
from xlsent.aligner.dp import Band, align_band, band_around, step_types
from xlsent.data.formats.alignment import Alignment
from xlsent.utils.errors import XlsentError, named

#: texts a forward pass when ``xlsent align`` embeds sentences: on 2 cores, 1,000 + 1,000 split Bible verses took
#: 29.5 / 29.7 s at 32 against 31.3 / 33.8 s at the encoder's general 64 (padding within a batch of short
#: sentences costs more than a larger batch gains on a CPU; 16: slower again)
EMBED_BATCH = 32


@dataclass
class AlignConfig:
    max_overlap: int = 3  # the longest run of sentences on one side of a block; steps a + b ≤ this + 1
    deletion_quantile: float = 0.02
    norm_samples: int = 100
    cost_samples: int = 20_000
    full_dp_cells: int = 300 * 300  # a grid this size or smaller: one exact DP, no coarse search
    search_buffer: int = 5
    normalise: bool = True  # False: cost 1 − cos, no a·b factor (the plain baseline, with max_overlap 1)
    runs: str = "mean"  # mean: sentences' vectors summed | concat: each run's joined text embedded (Vecalign)
    length_weight: float = 0.1  # weight of the Gale–Church length cost added to each block's (0: Vecalign's alone)
    length_variance: float = 6.8  # Gale–Church's s²: variance of the length difference per character
    seed: int = 0

    @classmethod
    def of(cls, max_overlap: int = 3, deletion_quantile: float = 0.02, search_buffer: int = 5, plain: bool = False,
           runs: str = "mean", length_weight: float = 0.1) -> "AlignConfig":
        """The settings ``xlsent align`` takes, checked (one line for a bad value); ``plain``: the 1-1 cosine
        baseline (one sentence a side, no normalisation, no length cost)."""
        cfg = cls(max_overlap=1 if plain else max_overlap, deletion_quantile=deletion_quantile,
                  search_buffer=search_buffer, normalise=not plain, runs=runs,
                  length_weight=0.0 if plain else length_weight)
        cfg.check()
        return cfg

    def check(self) -> None:
        if self.search_buffer < 1:
            raise XlsentError(f"{named('search_buffer', self.search_buffer)}: must be ≥ 1")
        if not 1 <= self.max_overlap <= 8:
            raise XlsentError(f"{named('max_overlap', self.max_overlap)}: must be between 1 and 8")
        if self.runs not in RUNS:
            raise XlsentError(f"unknown {named('runs', self.runs)}: use one of {', '.join(RUNS)}")
        if not 0 < self.deletion_quantile < 1:
            raise XlsentError(f"{named('deletion_quantile', self.deletion_quantile)}: must be between 0 and 1")
        if self.length_weight < 0:
            raise XlsentError(f"{named('length_weight', self.length_weight)}: must be 0 or more")


def overlaps(sentences: Sequence[str], n: int) -> list[list[str | None]]:
    """``n`` layers: layer k − 1 holds, at i, sentences i − k + 1 … i joined by a space (None before k − 1)."""
    return [[" ".join(sentences[i - k + 1:i + 1]) if i >= k - 1 else None for i in range(len(sentences))]
            for k in range(1, n + 1)]


def embed_overlaps(sentences: Sequence[str], n: int, embed: Callable[[list[str]], np.ndarray], dim: int,
                   runs: str = "concat") -> np.ndarray:
    """Unit vectors of every run (``(n, len(sentences), dim)``; zeros where a run would start before the text).
    ``runs``: ``concat`` embeds each run's joined text (Vecalign); ``mean`` embeds the sentences only and takes a
    run's vector as the normalised sum of its sentences' (n times fewer texts to embed)."""
    if runs == "mean":
        one = embed_overlaps(sentences, 1, embed, dim)[0]
        out = np.zeros((n, len(sentences), one.shape[1]), np.float32)
        csum = np.concatenate([np.zeros((1, one.shape[1]), np.float32), np.cumsum(one, 0)])
        for k in range(1, n + 1):
            out[k - 1, k - 1:] = _unit(csum[k:] - csum[:-k])
        return out
    layers = overlaps(sentences, n)
    texts = list(dict.fromkeys(t for layer in layers for t in layer if t is not None))
    vecs = _unit(np.asarray(embed(texts), dtype=np.float32)) if texts else np.zeros((0, dim), np.float32)
    row = {t: i for i, t in enumerate(texts)}
    out = np.zeros((n, len(sentences), vecs.shape[1] if len(vecs) else dim), np.float32)
    for k, layer in enumerate(layers):
        for i, t in enumerate(layer):
            if t is not None:
                out[k, i] = vecs[row[t]]
    return out


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def _valid_runs(layers: np.ndarray) -> np.ndarray:
    """(layer, position) of every run that starts inside the document."""
    return np.array([(k, i) for k in range(layers.shape[0]) for i in range(k, layers.shape[1])], dtype=np.int64
                    ).reshape(-1, 2)


class _Costs:
    """The cost function of one resolution: both documents' run vectors, their normalisers, the deletion penalty."""

    def __init__(self, src: np.ndarray, tgt: np.ndarray, cfg: AlignConfig, rng: np.random.Generator,
                 lengths: tuple[np.ndarray, np.ndarray] | None = None):
        self.src, self.tgt, self.cfg = src, tgt, cfg
        self.lengths = None
        if lengths is not None and cfg.length_weight > 0:
            ls, lt = (np.asarray(v, np.float64) for v in lengths)
            # run lengths: run_len[k, i] = the characters of the k + 1 sentences ending at i
            self.lengths = (_run_lengths(ls, src.shape[0]), _run_lengths(lt, tgt.shape[0]),
                            max(lt.sum(), 1.0) / max(ls.sum(), 1.0))
        if cfg.normalise:
            self.n_src = self._norms(src, tgt, rng)
            self.n_tgt = self._norms(tgt, src, rng)
        ns, nt = src.shape[1], tgt.shape[1]
        m = cfg.cost_samples
        if ns * nt <= m:
            i, j = np.divmod(np.arange(ns * nt), nt)
        else:
            i, j = rng.integers(0, ns, m), rng.integers(0, nt, m)
        sample = self._pair_cost(0, 0, i, j)
        self.deletion = float(np.quantile(sample, cfg.deletion_quantile)) if len(sample) else 1.0

    def _norms(self, side: np.ndarray, other: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        runs = _valid_runs(other)
        pick = runs[rng.integers(0, len(runs), self.cfg.norm_samples)]
        sample = other[pick[:, 0], pick[:, 1]]  # (samples, d)
        return 1.0 - np.einsum("kid,sd->kis", side, sample).mean(-1)

    def vector_cost(self, ka: int, kb: int, i, j) -> np.ndarray:
        """Cost of runs (ka + 1 sentences ending at i) × (kb + 1 ending at j), elementwise (``i`` or ``j`` may be
        one position), from their vectors alone and without the a·b factor."""
        cos = np.einsum("...d,...d->...", self.src[ka, i], self.tgt[kb, j])
        if not self.cfg.normalise:
            return 1.0 - cos
        return 2.0 * (1.0 - cos) / (self.n_src[ka, i] + self.n_tgt[kb, j] + 1e-6)

    def _pair_cost(self, ka: int, kb: int, i, j) -> np.ndarray:
        """The full cost of a block of (ka + 1) × (kb + 1) sentences: a·b times the vectors' cost, plus the length
        cost when it is on."""
        cost = self.vector_cost(ka, kb, i, j) * ((ka + 1) * (kb + 1) if self.cfg.normalise else 1)
        if self.lengths is not None:
            cost = cost + self._length_cost(ka, kb, i, j)
        return cost

    def _length_cost(self, ka: int, kb: int, i, j) -> np.ndarray:
        """``length_weight`` × (−log P(|δ|) − 1): Gale & Church's (1993) length cost, δ the target run's length
        against the source's times the documents' length ratio, in standard deviations; centred on its mean
        over true blocks (1), so that it neither rewards nor punishes the number of blocks."""
        ls, lt, ratio = self.lengths
        a, b = ls[ka, i], lt[kb, j]
        delta = (b - ratio * a) / np.sqrt(self.cfg.length_variance * np.maximum((a + b / ratio) / 2, 1.0))
        return -self.cfg.length_weight * (1.0 + math.log(2.0) + special.log_ndtr(-np.abs(delta)))

    def __call__(self, a: int, b: int, x: int, ys: np.ndarray) -> np.ndarray:
        out = np.full(len(ys), np.inf)
        ok = ys >= b - 1
        if x >= a - 1 and ok.any():
            out[ok] = self._pair_cost(a - 1, b - 1, x, ys[ok])
        return out


def _run_lengths(lengths: np.ndarray, n: int) -> np.ndarray:
    """``(n, len)``: at [k, i] the summed lengths of sentences i − k … i (0 before the document)."""
    csum = np.concatenate([[0.0], np.cumsum(lengths)])
    out = np.zeros((n, len(lengths)))
    for k in range(1, n + 1):
        out[k - 1, k - 1:] = csum[k:] - csum[:-k]
    return out


def _halve(layer: np.ndarray) -> np.ndarray:
    """A document at half resolution: consecutive pairs summed (an odd last vector dropped), centred, unit."""
    n = layer.shape[0] // 2 * 2
    pairs = layer[0:n:2] + layer[1:n:2]
    return _unit(pairs - pairs.mean(0, keepdims=True)) if len(pairs) else pairs


def _halve_lengths(lengths: np.ndarray) -> np.ndarray:
    n = len(lengths) // 2 * 2
    return np.asarray(lengths[0:n:2], np.float64) + lengths[1:n:2]


def _search(src: np.ndarray, tgt: np.ndarray, types: list[tuple[int, int]], cfg: AlignConfig,
            rng: np.random.Generator, lengths: tuple[np.ndarray, np.ndarray] | None = None
            ) -> tuple[list[tuple[range, range]], np.ndarray, _Costs]:
    ns, nt = src.shape[1], tgt.shape[1]
    costs = _Costs(src, tgt, cfg, rng, lengths)
    if (ns + 1) * (nt + 1) <= cfg.full_dp_cells or min(ns, nt) < 4:
        band = Band.full(ns, nt)
    else:
        half = None if lengths is None else tuple(_halve_lengths(v) for v in lengths)
        coarse, _, _ = _search(_halve(src[0])[None], _halve(tgt[0])[None], [(1, 1)], cfg, rng, half)
        width = math.ceil(max(max(a, b) for a, b in types) / 2) + cfg.search_buffer
        band = band_around(coarse, ns, nt, width)
    blocks, step_costs = align_band(ns, nt, types, costs, costs.deletion, band)
    return blocks, step_costs, costs


def align_vectors(src: np.ndarray, tgt: np.ndarray, cfg: AlignConfig,
                  lengths: tuple[Sequence[int], Sequence[int]] | None = None) -> Alignment:
    """Align two documents given their run vectors (:func:`embed_overlaps`, ``max_overlap`` layers each) and,
    for the length cost, their sentences' lengths in characters."""
    if src.shape[1] == 0 or tgt.shape[1] == 0:  # nothing to match: every sentence is a deletion
        return Alignment([[i] for i in range(src.shape[1])] + [[] for _ in range(tgt.shape[1])],
                         [[] for _ in range(src.shape[1])] + [[j] for j in range(tgt.shape[1])],
                         [0.0] * (src.shape[1] + tgt.shape[1]))
    types = [t for t in step_types(cfg.max_overlap) if t[0] and t[1]]
    if lengths is not None:
        lengths = (np.asarray(lengths[0], np.float64), np.asarray(lengths[1], np.float64))
    blocks, _, costs = _search(src, tgt, types, cfg, np.random.default_rng(cfg.seed), lengths)
    out = Alignment([], [], [])
    for s, t in blocks:
        out.src.append(list(s))
        out.tgt.append(list(t))
        out.score.append(max(0.0, float(costs.vector_cost(len(s) - 1, len(t) - 1, s[-1], t[-1])))
                         if len(s) and len(t) else 0.0)
    return out


def align_documents(src: Sequence[str], tgt: Sequence[str], encode: Callable[..., np.ndarray], dim: int,
                    cfg: AlignConfig | None = None, langs: tuple[str | None, str | None] = (None, None)) -> Alignment:
    """Align two documents (one sentence per item) with ``encode(texts, lang)`` (e.g. an ``Encoder``'s)."""
    cfg = cfg or AlignConfig()
    return align_vectors(embed_overlaps(src, cfg.max_overlap, lambda t: encode(t, langs[0]), dim, cfg.runs),
                         embed_overlaps(tgt, cfg.max_overlap, lambda t: encode(t, langs[1]), dim, cfg.runs), cfg,
                         ([len(s) for s in src], [len(t) for t in tgt]))
