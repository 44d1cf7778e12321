"""Statistics of the adversarial runs (Manafi 2025, §3.1): base vs P1–P5 over seeds × conditions.

The runs themselves (training, perturbing, scoring) are :mod:`xlsent.recipes.adversarial`.

Statistics, per condition and perturbation:

* **mean ΔF1** (perturbed − base, in F1 points ×100 as in Table 3.6) over the units;
* a **paired two-tailed t-test** (``scipy.stats.ttest_rel``) of perturbed vs base F1 over the units
  there are: runs (seeds) × language pairs — with one pair and three seeds, df = 2 (the paper had
  13 pairs);
* a **paired bootstrap over sentences**: the test sentences of each pair are resampled B times; on
  each resample every run's perturbed and base F1 are recomputed on the same sentences and ΔF1
  averaged over the runs and pairs; 95% interval and a two-sided p (twice the smaller tail share
  of Δ ≤ 0 / Δ ≥ 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from xlsent.evaluation.bootstrap import percentile_interval, resample_indices, two_sided_p
from xlsent.evaluation.tagging import accuracy, micro_f1, ner_counts, pos_counts


@dataclass
class RunScores:
    """One trained tagger's predictions on the base and perturbed test files of its pair."""

    pair: str
    condition: str  # native | transfer
    seed: int
    gold: dict[str, list[list[str]]]  # perturbation name ("base" included) → gold tags
    pred: dict[str, list[list[str]]]


def _counts(task, gold, pred):
    return ner_counts(gold, pred) if task == "ner" else pos_counts(gold, pred)


def t_test(base: list[float], perturbed: list[float]) -> float | None:
    """Two-tailed paired t-test p (None with fewer than 2 units or no variation)."""
    from scipy.stats import ttest_rel

    if len(base) < 2:
        return None
    d = np.asarray(perturbed) - np.asarray(base)
    if np.allclose(d, d[0]):
        return 0.0 if abs(d[0]) > 0 else 1.0
    return float(ttest_rel(perturbed, base).pvalue)


@dataclass
class Effect:
    condition: str
    perturbation: str
    units: int
    base_mean: float
    perturbed_mean: float
    delta: float  # mean ΔF1 ×100
    t_p: float | None
    boot_ci: list[float] = field(default_factory=list)  # ×100
    boot_p: float | None = None

    def to_dict(self) -> dict:
        return self.__dict__.copy()


def effects(runs: list[RunScores], task: str = "ner", bootstrap: int = 1000, seed: int = 0) -> list[Effect]:
    fn = micro_f1 if task == "ner" else accuracy
    out = []
    conditions = list(dict.fromkeys(r.condition for r in runs))
    perts = [p for p in dict.fromkeys(p for r in runs for p in r.pred) if p != "base"]
    pairs = list(dict.fromkeys(r.pair for r in runs))
    rows = {pair: resample_indices(len(next(r for r in runs if r.pair == pair).gold["base"]), bootstrap, seed + k)
            for k, pair in enumerate(pairs)} if bootstrap else {}
    base_counts = [_counts(task, r.gold["base"], r.pred["base"]) for r in runs]  # once per run, not per perturbation
    base_score = [fn(c) for c in base_counts]
    base_boot = [fn(c, rows[r.pair]) for r, c in zip(runs, base_counts)] if bootstrap else []
    for cond in conditions:
        for p in perts:
            idx = [k for k, r in enumerate(runs) if r.condition == cond and p in r.pred]
            if not idx:
                continue
            units = [runs[k] for k in idx]
            pert_counts = [_counts(task, r.gold[p], r.pred[p]) for r in units]
            base = [base_score[k] for k in idx]
            pert = [fn(c) for c in pert_counts]
            e = Effect(cond, p, len(units), 100 * float(np.mean(base)), 100 * float(np.mean(pert)),
                       100 * float(np.mean(np.subtract(pert, base))), t_test(base, pert))
            if bootstrap:
                d = np.zeros(bootstrap)
                for k, r, c in zip(idx, units, pert_counts):
                    d += fn(c, rows[r.pair]) - base_boot[k]
                d = 100 * d / len(units)
                e.boot_ci = percentile_interval(d)
                e.boot_p = two_sided_p(d)
            out.append(e)
    return out


def plot_effects(effs: list[Effect], path, title: str = "") -> None:
    """Bar plot of mean ΔF1 per perturbation, native next to transfer, bootstrap 95% intervals as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    perts = list(dict.fromkeys(e.perturbation for e in effs))
    conds = list(dict.fromkeys(e.condition for e in effs))
    x = np.arange(len(perts))
    w = 0.8 / max(1, len(conds))
    fig, ax = plt.subplots(figsize=(1.2 * len(perts) + 2, 3.6))
    for k, c in enumerate(conds):
        vals, lo, hi = [], [], []
        for p in perts:
            e = next((e for e in effs if e.condition == c and e.perturbation == p), None)
            vals.append(e.delta if e else np.nan)
            lo.append(e.delta - e.boot_ci[0] if e and e.boot_ci else 0)
            hi.append(e.boot_ci[1] - e.delta if e and e.boot_ci else 0)
        ax.bar(x + (k - (len(conds) - 1) / 2) * w, vals, w, yerr=[lo, hi], capsize=3, label=c)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, perts)
    ax.set_ylabel("ΔF1 (points)")
    ax.set_title(title, fontsize=9)
    ax.legend()
    fig.tight_layout()
    from xlsent.utils.io import atomic_path

    with atomic_path(path, "the plot") as tmp:
        fig.savefig(tmp, dpi=120, format=Path(path).suffix.lstrip(".") or "png")
    plt.close(fig)
