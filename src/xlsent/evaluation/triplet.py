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

from typing import Callable, Sequence

import numpy as np

from xlsent.encoding.encoder import TextEncoder, as_encoder
from xlsent.evaluation.bootstrap import mean_ci

TRIPLET_SIMILARITIES = ("cosine", "dot", "manhattan", "euclidean")


def _scores(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    xn = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    yn = y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)
    return {  # higher = closer
        "cosine": (xn * yn).sum(1),
        "dot": (x * y).sum(1),
        "manhattan": -np.abs(x - y).sum(1),
        "euclidean": -np.linalg.norm(x - y, axis=1),
    }


def length_bins(diff: np.ndarray, bin_width: int = 5, max_bins: int = 6) -> list[tuple[int, int | None]]:
    return [(k * bin_width, (k + 1) * bin_width - 1 if k < max_bins - 1 else None) for k in range(max_bins)]


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
) -> dict:
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
    out: dict = {"model": model_name, "n": n}
    if dataset:
        out["dataset"] = dataset
    correct = {k: sp[k] > sn[k] for k in TRIPLET_SIMILARITIES}
    acc = {}
    for k in TRIPLET_SIMILARITIES:
        acc[k] = {"accuracy": float(correct[k].mean()), "ci": mean_ci(correct[k], n_resamples, seed)}
    best = max(("cosine", "manhattan", "euclidean"), key=lambda k: acc[k]["accuracy"])
    acc["max"] = {"accuracy": acc[best]["accuracy"], "of": best}
    out["accuracy"] = acc
    out["cosine_positive"] = {"mean": float(sp["cosine"].mean()), "std": float(sp["cosine"].std())}
    out["cosine_negative"] = {"mean": float(sn["cosine"].mean()), "std": float(sn["cosine"].std())}
    diff = np.abs(np.array([len(x.split()) for x in anchors]) - np.array([len(x.split()) for x in positives]))
    rows = []
    for lo, hi in length_bins(diff, bin_width, max_bins):
        sel = (diff >= lo) & ((diff <= hi) if hi is not None else True)
        if not sel.any():
            continue
        rows.append({
            "bin": f"{lo}-{hi}" if hi is not None else f"{lo}+",
            "n": int(sel.sum()),
            "accuracy_cosine": float(correct["cosine"][sel].mean()),
            "mean_cosine_positive": float(sp["cosine"][sel].mean()),
            "mean_cosine_negative": float(sn["cosine"][sel].mean()),
        })
    out["by_length_difference"] = rows
    return out
