"""How many pairs do I need? A learning curve: held-out P@1 against training pairs, a fitted power law and a
forecast with its uncertainty.

**The fit.** The error ``1 − P@1`` of models trained on nested shares of the same pairs (⅛, ¼, ½, all), each
scored on the same held-out pairs, is fitted as a power law of the pair count, ``err(n) = a · n^(−b)``: a line in
log–log space, fitted by least squares (learning curves of supervised models follow power laws over a wide middle
range — Hestness et al. 2017, "Deep Learning Scaling is Predictable, Empirically"; the two-parameter form, without
an irreducible-error floor, because four points cannot pin three parameters down). The forecast is ``1 − err(2n)``:
what doubling the pairs is likely to give.

**The uncertainty.** The held-out pairs are resampled (bootstrap, the same resample for every share, so that the
points move together as they would on another held-out draw), the law refitted on each resample and the forecast
taken from each fit: its 5th and 95th percentiles are the 90% interval. It covers the noise of a finite held-out
set, not that of training (another seed, another draw of the pairs) — the curve says so.

**Where it misleads** (said in the result's notes when it applies): a held-out set of few pairs (every step of
P@1 is 1/n of it); a curve already at P@1 = 1 (zero error has no logarithm: errors are floored at half a held-out
pair); points that do not fall (a fit with ``b ≤ 0`` forecasts no gain, which may be noise); a forecast far
beyond the largest share (a power law has no floor, the data will); and held-out pairs drawn from the same texts
as the training pairs (the same book, the same document), which rise faster than text from elsewhere would.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class CurveFit:
    """``err(n) = a · n^(−b)``, with bootstrap draws of ``(log a, b)``."""

    a: float
    b: float
    draws: np.ndarray = field(repr=False)  # (k, 2): log a, b of each resample
    floor: float = 0.0                      # the smallest error a point may have (half a held-out pair)

    def p_at_1(self, n, draws: bool = False) -> np.ndarray:
        """Forecast P@1 at ``n`` pairs (the fit's, or one row a bootstrap draw with ``draws``)."""
        n = np.asarray(n, dtype=float)
        if draws:
            return 1.0 - np.exp(self.draws[:, :1] - self.draws[:, 1:2] * np.log(n)[None, ...])
        return 1.0 - self.a * n ** (-self.b)

    def interval(self, n, level: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = (1 - level) / 2 * 100, (1 + level) / 2 * 100
        d = np.clip(self.p_at_1(n, draws=True), 0.0, 1.0)
        return np.percentile(d, lo, axis=0), np.percentile(d, hi, axis=0)


def _fit(n: np.ndarray, err: np.ndarray) -> tuple[float, float]:
    """Least squares of ``log err = log a − b log n`` with ``b ≥ 0``: where the error rose with the pairs (noise, or a
    saturated held-out set) the best such law is flat, so more pairs are forecast to add nothing, never to hurt."""
    slope, intercept = np.polyfit(np.log(n), np.log(err), 1)
    if slope > 0:
        return float(np.mean(np.log(err))), 0.0
    return float(intercept), float(-slope)


def fit_curve(pairs: list[int], hits: list[np.ndarray], resamples: int = 1000, seed: int = 0) -> CurveFit:
    """Fit the power law to P@1 at each pair count. ``hits[i]``: a 0/1 (or fractional) score for each held-out
    query of the model trained on ``pairs[i]`` pairs — the same queries, in the same order, for every model (both
    directions may be stacked), so a bootstrap resample of queries is one held-out set for all of them."""
    if len(pairs) < 2:
        raise ValueError("a curve needs at least two shares")
    h = np.stack([np.asarray(x, dtype=float) for x in hits])  # (shares, queries)
    n = np.asarray(pairs, dtype=float)
    floor = 0.5 / h.shape[1]
    log_a, b = _fit(n, np.maximum(1.0 - h.mean(1), floor))
    rng = np.random.default_rng(seed)
    draws = np.empty((resamples, 2))
    for k in range(resamples):
        idx = rng.integers(0, h.shape[1], h.shape[1])
        draws[k] = _fit(n, np.maximum(1.0 - h[:, idx].mean(1), floor))
    return CurveFit(float(np.exp(log_a)), b, draws, floor)


def curve_cautions(pairs: list[int], p1: list[float], held: int, fit: CurveFit, same_source: bool) -> list[str]:
    """Where this curve's forecast should not be trusted, in words (the module's docstring, applied)."""
    out = []
    if held < 200:
        out.append(f"only {held} held-out pairs: each is {1 / held:.1%} of P@1, so the points are coarse")
    if max(p1) >= 1.0 - fit.floor:
        out.append("P@1 reached 1 on the held-out pairs: the curve cannot show what more pairs add beyond it")
    if fit.b <= 0:
        out.append("P@1 did not rise with more pairs here: the fit forecasts no gain, which may be noise")
    if len(pairs) < 3:
        out.append("two points fit any power law exactly: the interval is the held-out noise alone")
    if same_source:
        out.append("the held-out pairs come from the same file as the training pairs: text from elsewhere usually "
                   "gains less")
    return out
