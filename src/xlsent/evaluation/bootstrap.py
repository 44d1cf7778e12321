"""Bootstrap confidence intervals: the one implementation every evaluator uses (and the CLI only renders).

Every interval here is scipy's 95% percentile bootstrap over the evaluated *items* (queries, sentence pairs, test
sentences, documents): :func:`bootstrap_ci` hands scipy the items' indices and a statistic of them, so one code path
serves a mean of 0/1 hits, a Spearman ρ, a seeds-averaged accuracy and an F1 computed from resampled per-sentence
counts. scipy draws ``rng.integers(0, n, (resamples, n))`` from ``numpy.random.default_rng(seed)`` — exactly what
:func:`resample_indices` returns — so a statistic that has to be evaluated on *the same* resamples more than once
(paired differences across runs: :mod:`xlsent.evaluation.adversarial`) gets them from :func:`resample_indices`
and its interval from :func:`percentile_interval`, and the figures agree with scipy's to the last digit.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

LEVEL = 0.95


def resample_indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """``(resamples, n)`` item indices drawn with replacement — the draws :func:`bootstrap_ci` makes."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def percentile_interval(distribution: np.ndarray) -> list[float]:
    """The 95% percentile interval of a bootstrap distribution."""
    tail = 100 * (1 - LEVEL) / 2
    return [float(np.percentile(distribution, tail)), float(np.percentile(distribution, 100 - tail))]


def two_sided_p(differences: np.ndarray) -> float:
    """Two-sided bootstrap p-value of a paired difference: twice the smaller share of resamples on either side of 0."""
    d = np.asarray(differences)
    return min(1.0, 2 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))


def bootstrap_ci(statistic: Callable[..., float | np.ndarray], n: int, resamples: int = 1000, seed: int = 0,
                 vectorized: bool = True) -> list[float]:
    """95% percentile-bootstrap interval of ``statistic`` over ``n`` items (scipy).

    ``statistic(idx)`` gets resampled item indices: with ``vectorized`` an array ``(..., n)`` (and ``axis=-1``),
    returning one value per row; otherwise one index vector at a time. Fewer than 2 items, or a statistic that
    does not vary, give the point value twice."""
    from scipy.stats import bootstrap

    everything = np.arange(n)
    point = float(statistic(everything, axis=-1) if vectorized else statistic(everything)) if n else float("nan")
    if n < 2 or resamples < 1:
        return [point, point]
    fn = (lambda i, axis=-1: statistic(i, axis=axis)) if vectorized else statistic
    res = bootstrap((everything,), fn, vectorized=vectorized, n_resamples=resamples, confidence_level=LEVEL,
                    method="percentile", rng=np.random.default_rng(seed))
    dist = np.asarray(res.bootstrap_distribution)
    if not np.all(np.isfinite(dist)) or np.ptp(dist) == 0:
        return [point, point]
    return [float(res.confidence_interval.low), float(res.confidence_interval.high)]


def mean_ci(values, resamples: int = 1000, seed: int = 0) -> list[float]:
    """95% interval of the mean of per-item values (hits 0/1, accuracies …)."""
    v = np.asarray(values, dtype=float)
    return bootstrap_ci(lambda i, axis=-1: v[i].mean(axis), len(v), resamples, seed)


def paired_difference(other, base, resamples: int = 1000, seed: int = 0) -> dict:
    """Δ = mean(other) − mean(base) of per-item values measured on the same items: the difference, its 95%
    interval and a two-sided p, both sides resampled together (``ci95``/``p`` None without resamples)."""
    a, b = np.asarray(other, dtype=float), np.asarray(base, dtype=float)
    if a.shape != b.shape:
        raise ValueError("a paired difference needs one value per item on both sides")
    out = {"delta": float(a.mean() - b.mean()), "ci95": None, "p": None}
    if resamples and len(a) >= 2:
        rows = resample_indices(len(a), resamples, seed)
        d = a[rows].mean(1) - b[rows].mean(1)
        out.update(ci95=percentile_interval(d), p=two_sided_p(d))
    return out
