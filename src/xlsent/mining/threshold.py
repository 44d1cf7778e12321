"""``--threshold auto``: a mining cut estimated from the candidates' own scores, without gold.

Margin scores depend on the model: e5-small's ratio margins sit between 1.00 and 1.06, where
LASER's usual 1.04–1.06 would keep almost nothing, so no fixed number serves every model. The
one-to-one candidates of a comparable corpus are a mix of translations (high scores) and best
guesses for sentences whose translation is not there (low scores); the cut should fall where
keeping more would add more wrong pairs than right ones. Two estimates, each where it works:

**Gaussian mixture over score and runner-up** (from :data:`BIC_MIN_CANDIDATES` = 200 candidates on, what
``xlsent mine`` hands it). Each candidate is a point (its score, its *decoy*: the runner-up score of its source's or
its target's list, the larger — see below). A wrong candidate scores just above its own runner-up (both are the best
of unrelated lines, so the two move together), a translation far above it (its runner-up is an unrelated line,
whatever the translation scores). Mixtures of 1, 2 and 3 full-covariance Gaussians are fitted to the standardised
points (at most :data:`FIT_MAX` of them, a random sample) and BIC picks one; the component with the highest mean
score is the translations, each candidate's posterior of it is read as the chance that it is a translation, and
the cut is where the expected F1 ``2 Σ_{i≤n} p_i / (n + Σ_i p_i)`` peaks (over candidates sorted by score). When
one Gaussian fits best there is nothing to cut between and every candidate is kept. Scores alone leave the mixture
weakly identified on hard corpora: on comparable corpora with near-translations, neighbouring lines and other
languages (``benchmarks/mining/mining_cut.py``) the likelihood of the true two classes was within 4 nats of the fitted
one, and the score-only fit cut 14.9 F1 points below the best cut where 10% of the candidates were translations
(kept everything, 5.1 points below, where 69% were); the runner-up brings those to 4.1 and 0.9 on development
sets, but on the held-out ones it was no better than the scores alone, and worse where most candidates were
translations (14.8 points below the best cut against 7.7: BIC took three components and split the translations)
(``docs/experiments/bitext-mining.md``, "The automatic cut on hard data"). Without decoys (``filter-pairs``, a
caller with scores only) the mixture is fitted to the scores alone, two components, BIC against one.

**Target–decoy** (20 to 199 candidates). Too few scores to fit a mixture: BIC found a second
population in only a minority of simulated 30-score samples shaped like UDHR isiZulu (half translations),
and on isiZulu itself (30 candidates) the mixture, forced to cut, cut far too high.
Instead, every candidate gets a *decoy*: the runner-up score of its source's or its target's list
(the larger) — by construction not the sentence's partner, so a sample of how high a
non-translation scores in this corpus, with this model and margin. The share of wrong candidates
π₀ is estimated as in Storey's FDR method, ``#{candidates ≤ λ} / #{decoys ≤ λ}`` with λ the
decoys' median; keeping the candidates ≥ t then holds about ``K(t) − π₀·D(t)`` right pairs
(``D(t)``: decoys ≥ t) out of ``N·(1 − π₀)``, and the cut is where that expected F1 peaks.
On isiZulu it estimated π₀ close to the truth and matched the dev-tuned cut's test F1. It is not used from
200 candidates on: a wrong pair's decoy is its sentence's *second*-best non-translation, a little below the best
one, and over thousands of candidates that bias dominates (on the Bible it underestimated π₀ and cut far too
low). Figures: ``docs/experiments/bitext-mining.md``.

**Anchored on known pairs** (:func:`anchored_threshold`: ``xlsent.mine(..., known_pairs=…)``, which ``xlsent train
bootstrap`` gives its held-out seed pairs). A few pairs known to be translations, each scored with the same margin
in the same pool (:meth:`xlsent.mining.job.MiningJob.known_margins`), show where translations score — those the
model *retrieves* (no other line nearer, by cosine, to a sentence than its partner, in one direction or the other):
a proxy for being a candidate, and a known pair the model does not retrieve scores low for a reason few candidates
share (with held-out translations on dev, keeping them let a few of them drag the cut down to 60% precision). A
Gaussian fitted to their scores is held fixed as the translations' component while EM fits the other candidates'
(one Gaussian, and the share of translations, bounded below by the share of candidates scoring above the known
pairs' median — without that bound the free component can swallow the translations where most candidates are
translations) — a positive–unlabelled mixture. For n known pairs the cut is n / (n + :data:`ANCHOR_PRIOR`) of the
way from the unanchored cut above to this mixture's expected-F1 cut: a few known pairs fit a Gaussian loosely, so
they move the cut less. The bound was chosen on the development mining sets of ``benchmarks/mining/mining_cut.py``, the
weight and the retrieval condition on held-out translations as the known pairs (``benchmarks/mining/anchored_cut.py``;
``docs/experiments/bitext-mining.md``, "Anchored on known pairs"). The unanchored cut stands, said in the note, with
fewer than :data:`ANCHOR_MIN` known pairs retrieved, where the known pairs' median scores no higher than the
candidates' runner-ups' (they score like non-translations: pairs of the wrong sides, or of another text), and where
the mixture finds no translation among the candidates.

Under :data:`MIN_CANDIDATES` (20) candidates nothing is estimated and all are kept; the ``note``
of every estimate says which rule made the cut and why.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

MIN_CANDIDATES = 20
BIC_MIN_CANDIDATES = 200  # from here on BIC can tell one population from two
ANCHOR_MIN = 10  # known pairs needed to anchor the cut (fewer: their Gaussian is a guess)
#: the anchored cut's share of the final cut is n / (n + ANCHOR_PRIOR) for n known pairs (the rest: the unanchored
#: cut's) — the unanchored cut counts as this many known pairs' worth of evidence: 20 known pairs, half the way; 60,
#: three quarters. Chosen on dev with held-out translations as the known pairs (benchmarks/mining/anchored_cut.py)
ANCHOR_PRIOR = 20


@dataclass
class AutoThreshold:
    threshold: float | None  # keep pairs scoring ≥ this; None = keep all
    expected_precision: float
    expected_recall: float
    expected_f1: float
    share_translations: float  # estimated share of the candidates that are translations (1 − π₀)
    method: str = "target-decoy"  # target-decoy | gaussian-mixture | anchored | none
    means: tuple[float, float] = (0.0, 0.0)  # mixture: component means, in score units (low, high)
    stds: tuple[float, float] = (0.0, 0.0)
    ashman_d: float = 0.0  # mixture: separation of the two components (> 2: bimodal)
    decoy_median: float | None = None  # target-decoy: λ
    note: str = ""

    def to_dict(self) -> dict:
        return {**asdict(self), "method": f"auto ({self.method}, expected-F1 cut)"}


def _best_cut(xs: np.ndarray, tp: np.ndarray, gold: float) -> int:
    """Index into descending ``xs`` of the cut with the highest expected F1 (``tp``: expected right pairs kept)."""
    n = np.arange(1, len(xs) + 1)
    f1 = 2 * tp / (n + gold)
    last_of_tie = np.r_[xs[1:] < xs[:-1], True]  # a cut keeps every pair tied with the last one kept
    return int(np.argmax(np.where(last_of_tie, f1, -1.0)))


def auto_threshold(scores: np.ndarray, decoys: np.ndarray | None = None, seed: int = 0) -> AutoThreshold:
    """The cut over one-to-one candidate ``scores`` (any order) where the expected F1 peaks.

    ``decoys`` (one per candidate: the runner-up score of its source's or target's list) select the
    target–decoy estimate below 200 candidates and the mixture over (score, decoy) from 200 on; without them
    the mixture is fitted to the scores alone.
    """
    x = np.asarray(scores, dtype=np.float64)
    ok = np.isfinite(x)
    if ok.sum() < MIN_CANDIDATES:
        return AutoThreshold(None, 0.0, 1.0, 0.0, 1.0, method="none",
                             note=f"only {int(ok.sum())} candidates: too few to estimate a cut — all kept")
    if decoys is not None:
        d = np.asarray(decoys, dtype=np.float64)[ok]
        fin = np.isfinite(d)
        if ok.sum() < BIC_MIN_CANDIDATES:
            if fin.sum() >= MIN_CANDIDATES:
                return _target_decoy(x[ok], d[fin])
        elif fin.mean() >= 0.5:  # a candidate without a runner-up (k = 1, a tiny side) gets the lowest decoy seen
            return _joint_mixture(x[ok], np.where(fin, d, d[fin].min()), seed)
    return _mixture(x[ok], seed)


def _target_decoy(x: np.ndarray, d: np.ndarray) -> AutoThreshold:
    lam = float(np.median(d))
    pi0 = min(1.0, float((x <= lam).sum()) / max(1, int((d <= lam).sum())))
    gold = len(x) * (1 - pi0)
    if gold < 1:
        return AutoThreshold(None, 0.0, 1.0, 0.0, 0.0, decoy_median=lam,
                             note=f"the candidates score like their decoys (π₀ = {pi0:.2f}): no translations to "
                                  "separate — all kept")
    xs = np.sort(x)[::-1]
    ds = np.sort(d)
    wrong = pi0 * (len(ds) - np.searchsorted(ds, xs, side="left"))  # π₀ · #decoys ≥ each cut
    tp = np.maximum(0.0, np.arange(1, len(xs) + 1) - wrong)
    i = _best_cut(xs, tp, gold)
    n = i + 1
    return AutoThreshold(float(xs[i]), float(tp[i] / n), float(min(1.0, tp[i] / gold)),
                         float(2 * tp[i] / (n + gold)), 1 - pi0, decoy_median=lam,
                         note=f"{n} of {len(xs)} candidates kept (target-decoy: under {BIC_MIN_CANDIDATES} candidates); "
                              f"about {pi0:.0%} of them score like non-translations (each sentence's runner-up)")


def _mixture(x: np.ndarray, seed: int) -> AutoThreshold:
    from sklearn.mixture import GaussianMixture

    mu, sd = float(x.mean()), float(x.std()) or 1.0
    z = ((x - mu) / sd).reshape(-1, 1)
    gm = GaussianMixture(2, covariance_type="full", n_init=3, random_state=seed).fit(z)
    hi = int(np.argmax(gm.means_[:, 0]))
    lo = 1 - hi
    means = gm.means_[:, 0] * sd + mu
    stds = np.sqrt(gm.covariances_[:, 0, 0]) * sd
    ashman = float(np.sqrt(2) * abs(means[hi] - means[lo]) / np.sqrt(stds[0] ** 2 + stds[1] ** 2))
    one = GaussianMixture(1, random_state=seed).fit(z)
    order = np.argsort(-x, kind="stable")
    xs = x[order]
    tp = np.cumsum(gm.predict_proba(z[order])[:, hi])
    i = _best_cut(xs, tp, tp[-1])
    est = AutoThreshold(float(xs[i]), float(tp[i] / (i + 1)), float(tp[i] / tp[-1]),
                        float(2 * tp[i] / (i + 1 + tp[-1])), float(gm.weights_[hi]), "gaussian-mixture",
                        (float(means[lo]), float(means[hi])), (float(stds[lo]), float(stds[hi])), ashman,
                        note=f"{i + 1} of {len(xs)} candidates kept (Gaussian mixture, Ashman's D {ashman:.2f})")
    if len(x) < BIC_MIN_CANDIDATES:
        est.note = (f"{len(x)} candidates and no decoys: too few to test for a second population (BIC needs "
                    f"about {BIC_MIN_CANDIDATES}); cut at the mixture's expected-F1 peak")
    elif one.bic(z) <= gm.bic(z):
        est.threshold = None
        est.note = (f"the scores show no second population (one Gaussian fits them better than two; means "
                    f"{means[lo]:.4f} and {means[hi]:.4f}) — all candidates kept")
    return est


#: the joint mixture is fitted on at most this many candidates (a random sample; every candidate is then scored)
FIT_MAX = 200_000


def _joint_mixture(x: np.ndarray, d: np.ndarray, seed: int) -> AutoThreshold:
    """The mixture over (score, decoy): 1, 2 or 3 full-covariance Gaussians (BIC), translations = the component
    with the highest mean score."""
    from sklearn.mixture import GaussianMixture

    mu, sd = float(x.mean()), float(x.std()) or 1.0
    dmu, dsd = float(d.mean()), float(d.std()) or 1.0
    z = np.c_[(x - mu) / sd, (d - dmu) / dsd]
    fit = z
    if len(z) > FIT_MAX:
        fit = z[np.random.default_rng(seed).choice(len(z), FIT_MAX, replace=False)]
    fits = [GaussianMixture(k, covariance_type="full", n_init=5 if k > 1 else 1, random_state=seed).fit(fit)
            for k in (1, 2, 3)]
    bics = [g.bic(fit) for g in fits]
    gm = fits[int(np.argmin(bics))]
    k = gm.n_components
    hi = int(np.argmax(gm.means_[:, 0]))
    post = gm.predict_proba(z) if k > 1 else np.ones((len(z), 1))
    p = post[:, hi]
    # component summaries in score units: the translations' component, and the rest pooled
    w_hi = float(gm.weights_[hi])
    m_hi, s_hi = gm.means_[hi, 0] * sd + mu, np.sqrt(gm.covariances_[hi, 0, 0]) * sd
    rest = [c for c in range(k) if c != hi]
    if rest:
        w = gm.weights_[rest] / gm.weights_[rest].sum()
        m_lo = float(w @ gm.means_[rest, 0])
        v_lo = float(w @ (gm.covariances_[rest, 0, 0] + (gm.means_[rest, 0] - m_lo) ** 2))
        m_lo, s_lo = m_lo * sd + mu, np.sqrt(v_lo) * sd
        ashman = float(np.sqrt(2) * abs(m_hi - m_lo) / np.sqrt(s_hi ** 2 + s_lo ** 2))
    else:
        m_lo, s_lo, ashman = m_hi, s_hi, 0.0
    if k == 1:
        return AutoThreshold(None, 1.0, 1.0, 1.0, 1.0, "gaussian-mixture", (float(m_lo), float(m_hi)),
                             (float(s_lo), float(s_hi)), 0.0,
                             note=f"the candidates show no second population (over score and runner-up, one "
                                  f"Gaussian fits them better than two or three; mean score {m_hi:.4f}) — all "
                                  "candidates kept")
    order = np.argsort(-x, kind="stable")
    xs = x[order]
    tp = np.cumsum(p[order])
    i = _best_cut(xs, tp, tp[-1])
    return AutoThreshold(float(xs[i]), float(tp[i] / (i + 1)), float(tp[i] / tp[-1]),
                         float(2 * tp[i] / (i + 1 + tp[-1])), w_hi, "gaussian-mixture",
                         (float(m_lo), float(m_hi)), (float(s_lo), float(s_hi)), ashman,
                         note=f"{i + 1} of {len(xs)} candidates kept (Gaussian mixture over score and runner-up, "
                              f"{k} components by BIC; Ashman's D {ashman:.2f})")


def anchored_threshold(scores: np.ndarray, decoys: np.ndarray | None, known: np.ndarray, seed: int = 0,
                       given: int | None = None, weight: float | None = None,
                       base: AutoThreshold | None = None) -> AutoThreshold:
    """The cut over ``scores`` (with their ``decoys``, as :func:`auto_threshold` takes them), anchored on ``known``:
    the margin scores, in the same pool, of pairs known to be translations that the model retrieves (see the
    module's docstring). ``given``: how many known pairs there were, retrieved or not (for the note); ``weight``:
    the anchored cut's share of the final cut (default: n / (n + :data:`ANCHOR_PRIOR`) for n known pairs);
    ``base``: the unanchored estimate, where the caller has it already."""
    base = auto_threshold(scores, decoys, seed) if base is None else replace(base)
    k = np.asarray(known, dtype=np.float64)
    k = k[np.isfinite(k)]
    x = np.asarray(scores, dtype=np.float64)
    x = x[np.isfinite(x)]
    of = f" of {given}" if given is not None and given != len(k) else ""
    if len(k) < ANCHOR_MIN or len(x) < MIN_CANDIDATES or base.method == "none":
        base.note += (f"; only {len(k)}{of} known pairs scored{' and retrieved' if of else ''}: the cut is not "
                      f"anchored (it needs {ANCHOR_MIN})" if len(k) < ANCHOR_MIN else "")
        return base
    d = np.asarray(decoys, dtype=np.float64) if decoys is not None else np.zeros(0)
    d = d[np.isfinite(d)]
    # what a non-translation scores: the runner-ups (the decoys), else the lower half of the candidates — not the
    # candidates' median, which is a translation's score where most candidates are translations
    wrong = float(np.median(d)) if len(d) else float(np.quantile(x, 0.25))
    if np.median(k) <= wrong:
        base.note += (f"; the {len(k)} known pairs score like non-translations (median {float(np.median(k)):.4f}, "
                      f"the candidates' runner-ups {wrong:.4f}) — are their sides swapped, or from another text? "
                      "The cut is not anchored")
        return base
    post, share = _known_mixture(x, k, seed)
    order = np.argsort(-x, kind="stable")
    xs = x[order]
    tp = np.cumsum(post[order])
    if tp[-1] < 1:
        base.note += f"; anchored on {len(k)} known pairs the mixture finds no translation: the cut is not anchored"
        return base
    i = _best_cut(xs, tp, tp[-1])
    own = float(xs[i])
    unanchored = base.threshold if base.threshold is not None else float(xs[-1])
    w = len(k) / (len(k) + ANCHOR_PRIOR) if weight is None else float(weight)
    cut = unanchored + w * (own - unanchored)
    n = int((x >= cut).sum())
    kept = tp[n - 1] if n else 0.0
    recall_known = float((k >= cut).mean())
    return AutoThreshold(cut, float(kept / max(n, 1)), float(kept / max(tp[-1], 1e-9)),
                         float(2 * kept / (n + tp[-1])), share, "anchored",
                         base.means, base.stds, base.ashman_d, base.decoy_median,
                         note=f"{n} of {len(x)} candidates kept (anchored on {len(k)}{of} known pairs"
                              f"{', those the model retrieves' if of else ''}: their scores "
                              f"{float(np.median(k)):.4f} median, {recall_known:.0%} of them at or above the cut; "
                              f"{w:.0%} of the way from the unanchored {base.method} cut "
                              f"{unanchored:.4f} to the known pairs' mixture cut {own:.4f})")


def _known_mixture(x: np.ndarray, known: np.ndarray, seed: int = 0, iters: int = 300,
                   tol: float = 1e-7) -> tuple[np.ndarray, float]:
    """Each candidate's posterior of being a translation, and their share: EM over ``x`` (at most :data:`FIT_MAX`
    of them, a random sample) with the translations' component a Gaussian fixed to the ``known`` scores, the rest
    one Gaussian fitted with the share."""
    from scipy.stats import norm

    m1 = float(known.mean())
    s1 = max(float(known.std(ddof=1)), 0.25 * float(x.std()), 1e-9)  # identical known scores: no zero-width Gaussian
    # half the translations score above the known pairs' median: the candidates up there, if at least half of them
    # are translations, bound the share from below — without it the free component can swallow the translations
    floor = min(float((x >= np.median(known)).mean()), 0.95)
    fit = x if len(x) <= FIT_MAX else x[np.random.default_rng(seed).choice(len(x), FIT_MAX, replace=False)]
    f1 = norm.pdf(fit, m1, s1)
    w, m0, s0 = max(0.5, floor), float(np.quantile(fit, 0.25)), float(fit.std()) or 1.0
    for _ in range(iters):
        a = w * f1
        b = (1 - w) * norm.pdf(fit, m0, s0)
        q = 1 - a / (a + b + 1e-300)
        if q.sum() <= 1e-9:
            break
        new = (max(float(1 - q.mean()), floor), float((q * fit).sum() / q.sum()))
        s0 = max(float(np.sqrt((q * (fit - new[1]) ** 2).sum() / q.sum())), 1e-9)
        done = abs(new[0] - w) < tol and abs(new[1] - m0) < tol * (abs(m0) + 1)
        w, m0 = new
        if done:
            break
    a = w * norm.pdf(x, m1, s1)
    return a / (a + (1 - w) * norm.pdf(x, m0, s0) + 1e-300), w
