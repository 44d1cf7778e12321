"""Triplet evaluation (Manafi 2025, §3.2.3, Table 3.8 and Fig. 3.6).

For (anchor, positive, negative) triplets:

* **accuracy** under cosine, dot product, Manhattan and Euclidean: a triplet is correct when
  the positive is strictly closer to the anchor than the negative (as sentence-transformers'
  ``TripletEvaluator`` counts it; the tests check agreement); **max** is the best of cosine,
  Manhattan and Euclidean, as the paper defines it (dot is left out of the max there too);
  95% bootstrap CIs for each accuracy;
* **mean and standard deviation** of cos(anchor, positive) and cos(anchor, negative);
* **by length difference**: triplets grouped by the absolute difference in whitespace words
  between anchor and positive (bins of ``bin_width`` words, the last bin open-ended), with
  the cosine accuracy and the mean cos(anchor, positive) of each bin — the paper's Fig. 3.6
  curve (:func:`xlsent.report.plots.length_difference_png` draws it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np

from xlsent.encoding.encoder import TextEncoder, as_encoder
from xlsent.evaluation.bootstrap import mean_ci
from xlsent.similarity import pairwise

TRIPLET_SIMILARITIES = ("cosine", "dot", "manhattan", "euclidean")


def _scores(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    return pairwise(x, y, TRIPLET_SIMILARITIES)  # higher = closer


def length_bins(diff: np.ndarray, bin_width: int = 5, max_bins: int = 6) -> list[tuple[int, int | None]]:
    return [(k * bin_width, (k + 1) * bin_width - 1 if k < max_bins - 1 else None) for k in range(max_bins)]


@dataclass
class TripletAccuracy:
    accuracy: float
    ci: list[float]  # 95% bootstrap interval over triplets


@dataclass
class LengthBin:
    """Triplets whose anchor and positive differ in length (words) by this bin's amount."""

    bin: str
    n: int
    accuracy_cosine: float
    mean_cosine_positive: float
    mean_cosine_negative: float


@dataclass
class TripletResult:
    model: str
    n: int
    dataset: str
    accuracy: dict[str, TripletAccuracy]  # per similarity
    best: str  # the similarity with the highest accuracy (cosine, manhattan or euclidean)
    cosine_positive: dict  # mean, std of cos(anchor, positive)
    cosine_negative: dict
    by_length_difference: list[LengthBin] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The JSON ``xlsent eval triplet`` writes and metrics.json holds (``accuracy.max`` names the best)."""
        d: dict = {"model": self.model, "n": self.n}
        if self.dataset:
            d["dataset"] = self.dataset
        acc = {k: asdict(v) for k, v in self.accuracy.items()}
        acc["max"] = {"accuracy": self.accuracy[self.best].accuracy, "of": self.best}
        d.update(accuracy=acc, cosine_positive=self.cosine_positive, cosine_negative=self.cosine_negative,
                 by_length_difference=[asdict(b) for b in self.by_length_difference])
        return d


def evaluate_triplets(
    anchors: Sequence[str],
    positives: Sequence[str],
    negatives: Sequence[str],
    encoder: TextEncoder | Callable[[list[str]], np.ndarray],
    model_name: str = "",
    dataset: str = "",
    n_resamples: int = 1000,
    seed: int = 0,
    bin_width: int = 5,
    max_bins: int = 6,
    anchor_lang: str | None = None,
    positive_lang: str | None = "en",
) -> "TripletResult":
    """Anchors are encoded with ``anchor_lang`` (the low-resource side; None = unknown), positives and
    negatives with ``positive_lang`` (English)."""
    n = len(anchors)
    if n == 0 or len(positives) != n or len(negatives) != n:
        raise ValueError("triplet evaluation needs equally many anchors, positives and negatives (at least one)")
    enc = as_encoder(encoder)
    a = enc.encode(list(anchors), anchor_lang)
    pn = enc.encode(list(positives) + list(negatives), positive_lang)
    p, g = pn[:n], pn[n:]
    sp, sn = _scores(a, p), _scores(a, g)
    correct = {k: sp[k] > sn[k] for k in TRIPLET_SIMILARITIES}
    acc = {k: TripletAccuracy(float(correct[k].mean()), mean_ci(correct[k], n_resamples, seed))
           for k in TRIPLET_SIMILARITIES}
    out = TripletResult(model_name, n, dataset, acc, max(("cosine", "manhattan", "euclidean"), key=lambda k: acc[k].accuracy),
                        {"mean": float(sp["cosine"].mean()), "std": float(sp["cosine"].std())},
                        {"mean": float(sn["cosine"].mean()), "std": float(sn["cosine"].std())})
    diff = np.abs(np.array([len(x.split()) for x in anchors]) - np.array([len(x.split()) for x in positives]))
    for lo, hi in length_bins(diff, bin_width, max_bins):
        sel = (diff >= lo) & ((diff <= hi) if hi is not None else True)
        if not sel.any():
            continue
        out.by_length_difference.append(LengthBin(
            f"{lo}-{hi}" if hi is not None else f"{lo}+", int(sel.sum()), float(correct["cosine"][sel].mean()),
            float(sp["cosine"][sel].mean()), float(sn["cosine"][sel].mean())))
    return out
