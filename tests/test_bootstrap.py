"""The one bootstrap (evaluation/bootstrap.py) against an oracle written here: numpy's draws and percentiles."""

from __future__ import annotations

import numpy as np
import pytest

from xlsent.evaluation.bootstrap import (bootstrap_ci, mean_ci, paired_difference, percentile_interval,
                                         resample_indices, two_sided_p)


def _oracle(values_of_rows, n, b, seed):
    rows = np.random.default_rng(seed).integers(0, n, size=(b, n))
    dist = np.array([values_of_rows(r) for r in rows])
    return [np.percentile(dist, 2.5), np.percentile(dist, 97.5)], dist


def test_mean_and_any_statistic_match_a_plain_numpy_bootstrap():
    rng = np.random.default_rng(1)
    x = (rng.random(300) < 0.6).astype(float)
    want, _ = _oracle(lambda r: x[r].mean(), len(x), 500, 7)
    assert mean_ci(x, 500, 7) == pytest.approx(want, abs=1e-12)
    y = x + rng.normal(0, 0.5, len(x))  # a statistic that is no mean, not vectorised: a correlation
    corr = lambda r: np.corrcoef(x[r], y[r])[0, 1]  # noqa: E731
    want, _ = _oracle(corr, len(x), 300, 2)
    assert bootstrap_ci(corr, len(x), 300, 2, vectorized=False) == pytest.approx(want, abs=1e-12)
    assert resample_indices(5, 3, 0).shape == (3, 5)


def test_degenerate_inputs_give_the_point_twice():
    assert mean_ci(np.ones(20)) == [1.0, 1.0]
    assert mean_ci(np.array([0.25])) == [0.25, 0.25]
    assert mean_ci(np.array([0.0, 1.0]), resamples=0) == [0.5, 0.5]


def test_paired_difference_resamples_both_sides_together():
    rng = np.random.default_rng(0)
    base = (rng.random(400) < 0.7).astype(float)
    other = base.copy()
    other[:40] = 1.0 - other[:40]  # differs from base on 40 items only
    got = paired_difference(other, base, 800, 5)
    rows = resample_indices(400, 800, 5)
    d = other[rows].mean(1) - base[rows].mean(1)
    assert got["delta"] == pytest.approx(other.mean() - base.mean())
    assert got["ci95"] == pytest.approx(percentile_interval(d)) and got["p"] == two_sided_p(d)
    # pairing matters: the paired interval is far narrower than two independent ones would give
    lo, hi = got["ci95"]
    assert hi - lo < 0.09  # independent resampling of the two sides: ≈ 0.13
    assert paired_difference(base, base, 100, 0) == {"delta": 0.0, "ci95": [0.0, 0.0], "p": 1.0}
    with pytest.raises(ValueError):
        paired_difference(base[:10], base, 10, 0)


def test_two_sided_p():
    assert two_sided_p(np.array([1.0, 2.0, 3.0])) == 0.0
    assert two_sided_p(np.array([-1.0, 1.0])) == 1.0
