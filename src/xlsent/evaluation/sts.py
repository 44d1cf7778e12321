"""Semantic textual similarity: Pearson and Spearman correlation of embedding similarity with gold scores.

Similarities: cosine, Euclidean and Manhattan (negated distances) and dot product — the same
four that sentence-transformers' ``EmbeddingSimilarityEvaluator`` reports (the tests check the
numbers agree), computed here from embeddings so chunked pooling and xlsent's batching apply.
A 95% percentile-bootstrap CI (scipy, pairs resampled) accompanies each Spearman ρ.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np

from xlsent.encoding.encoder import TextEncoder, as_encoder
from xlsent.similarity import pairwise

STS_SIMILARITIES = ("cosine", "euclidean", "manhattan", "dot")  # the order the report prints (sentence-transformers')


def pair_similarities(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """Each pair's similarities (:func:`xlsent.similarity.pairwise`), in the report's order."""
    return pairwise(a, b, STS_SIMILARITIES)


@dataclass
class Correlation:
    """One similarity's agreement with the gold scores."""

    pearson: float
    spearman: float
    spearman_ci: list[float]


@dataclass
class StsResult:
    model: str
    n: int
    dataset: str = ""
    by_similarity: dict[str, Correlation] = field(default_factory=dict)  # cosine, euclidean, manhattan, dot

    def to_dict(self) -> dict:
        """The JSON ``xlsent eval sts`` writes: model, n, dataset and one entry per similarity."""
        d: dict = {"model": self.model, "n": self.n}
        if self.dataset:
            d["dataset"] = self.dataset
        d.update({k: asdict(v) for k, v in self.by_similarity.items()})
        return d


def _spearman_ci(sim: np.ndarray, gold: np.ndarray, n_resamples: int, seed: int) -> list[float]:
    from scipy.stats import spearmanr

    from xlsent.evaluation.bootstrap import bootstrap_ci

    if len(gold) < 4:
        r = float(spearmanr(sim, gold).statistic)
        return [r, r]
    return bootstrap_ci(lambda i: spearmanr(sim[i], gold[i]).statistic, len(gold), n_resamples, seed, vectorized=False)


def evaluate_sts(
    sentences1: Sequence[str],
    sentences2: Sequence[str],
    scores: Sequence[float],
    encoder: TextEncoder | Callable[[list[str]], np.ndarray],
    model_name: str = "",
    dataset: str = "",
    n_resamples: int = 1000,
    seed: int = 0,
    lang1: str | None = None,
    lang2: str | None = None,
) -> "StsResult":
    """Pearson r and Spearman ρ for every similarity, with a bootstrap CI on each ρ."""
    from scipy.stats import pearsonr, spearmanr

    gold = np.asarray(scores, dtype=float)
    if len(gold) < 2:
        raise ValueError("STS evaluation needs at least 2 scored pairs")
    enc = as_encoder(encoder)
    a, b = enc.encode(list(sentences1), lang1), enc.encode(list(sentences2), lang2)
    out = StsResult(model_name, int(len(gold)), dataset)
    for name, sim in pair_similarities(a, b).items():
        out.by_similarity[name] = Correlation(float(pearsonr(sim, gold).statistic), float(spearmanr(sim, gold).statistic),
                                              list(_spearman_ci(sim, gold, n_resamples, seed)))
    return out
