"""Adversarial robustness of HRL→LRL transfer (Manafi 2025, §3.1): base vs P1–P5 over seeds × conditions.

For every language pair (L1 training file, L2 training file, L2 test file) and seed, a tagger is
trained in each condition — **native** (L2 train → L2 test) and **transfer** (L1 train → L2 test) —
with the tagger recipe's config (resumable: finished runs are skipped). The test file is perturbed
per condition against that condition's training file ("L1-train" in the paper means the model's own
training file: the native hi→hi P3 drop against the unchanged ar→hi shows it) and every tagger is
scored on the base and each perturbed file.

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

import numpy as np

from xlsent.evaluation.tagging import accuracy, micro_f1, ner_counts, pos_counts, resample


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
    rows = {pair: resample(len(next(r for r in runs if r.pair == pair).gold["base"]), bootstrap, seed + k)
            for k, pair in enumerate(pairs)} if bootstrap else {}
    for cond in conditions:
        for p in perts:
            units = [r for r in runs if r.condition == cond and p in r.pred]
            if not units:
                continue
            base = [fn(_counts(task, r.gold["base"], r.pred["base"])) for r in units]
            pert = [fn(_counts(task, r.gold[p], r.pred[p])) for r in units]
            e = Effect(cond, p, len(units), 100 * float(np.mean(base)), 100 * float(np.mean(pert)),
                       100 * float(np.mean(np.subtract(pert, base))), t_test(base, pert))
            if bootstrap:
                d = np.zeros(bootstrap)
                for r in units:
                    rw = rows[r.pair]
                    d += fn(_counts(task, r.gold[p], r.pred[p]), rw) - fn(_counts(task, r.gold["base"], r.pred["base"]), rw)
                d = 100 * d / len(units)
                e.boot_ci = [float(np.percentile(d, 2.5)), float(np.percentile(d, 97.5))]
                e.boot_p = min(1.0, 2 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
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
    fig.savefig(path, dpi=120)
    plt.close(fig)


@dataclass
class PairSpec:
    """One language pair: the L1 (high-resource) training file, the L2 training and test files, L2's code."""

    name: str
    l1_train: str
    l2_train: str
    l2_test: str
    lang: str


def parse_pair(text: str) -> PairSpec:
    """``NAME=L1_TRAIN,L2_TRAIN,L2_TEST`` (NAME like ``en-ny``: L2's code is the part after the last '-')."""
    from xlsent.utils.errors import XlsentError

    name, eq, files = text.partition("=")
    parts = [x.strip() for x in files.split(",")]
    if not eq or len(parts) != 3 or not all(parts) or "-" not in name:
        raise XlsentError(f"--pair {text!r}: expected L1-L2=L1_TRAIN,L2_TRAIN,L2_TEST "
                          "(e.g. en-ny=silver-ner:en:train,silver-ner:ny:train,silver-ner:ny:test)")
    return PairSpec(name.strip(), *parts, name.strip().rsplit("-", 1)[1])


def run_adversarial(cfg, pairs: list[PairSpec], seeds: list[int], perturbations: list[str], output, test_sample: int,
                    bootstrap: int = 1000, names=None, places=None, stopwords=None, on_note=None,
                    progress: bool = True) -> dict:
    """Train (or reuse) every tagger, perturb every test file, score all, and return the report (see module doc)."""
    import copy
    import json
    from pathlib import Path

    from xlsent.data.stopwords import read_stopword_file, stopwords_for
    from xlsent.data.tagging import load_tagged
    from xlsent.evaluation.tagging import evaluate_tagger, sample_corpus, score
    from xlsent.models.tagger import load_tagger
    from xlsent.perturbations.overlap import entity_overlap
    from xlsent.perturbations.suite import PerturbInputs, perturb, write_perturbed
    from xlsent.recipes.tagger import read_training, scheme_of, train_tagger
    from xlsent.utils.io import write_json_atomic

    note = on_note or (lambda s: None)
    output = Path(output)
    task = cfg.tagger.task
    plans = []  # (pair, condition, seed, cfg, training corpus)
    tests, inputs = {}, {}
    for pair in pairs:  # read every file before any model loads
        test = sample_corpus(load_tagged(pair.l2_test, scheme_of(cfg), strict=cfg.train.strict, task=task),
                             test_sample, 0)
        tests[pair.name] = test
        target_train = load_tagged(pair.l2_train, scheme_of(cfg), strict=cfg.train.strict, task=task)
        for condition, train_file in (("native", pair.l2_train), ("transfer", pair.l1_train)):
            c = copy.deepcopy(cfg)
            c.train.data = train_file
            train_c, _ = read_training(c)
            if stopwords is not None:
                sw, sw_note = read_stopword_file(str(stopwords)), f"stop words: {stopwords}"
            else:
                sw, sw_note = stopwords_for(pair.lang, [*test.tokens, *target_train.tokens])
            inputs[(pair.name, condition)] = PerturbInputs(test, train_c, target_train, names, places, sw, sw_note,
                                                           cfg.models.base, only_o=task == "ner")
            for s in seeds:
                cs = copy.deepcopy(c)
                cs.optim.seed = s
                cs.eval.test = ""
                plans.append((pair, condition, s, cs))
    files: dict[tuple[str, str], dict[str, object]] = {}
    overlaps = {}
    for (pname, condition), inp in inputs.items():
        folder = output / pname / condition / "perturbed"
        folder.mkdir(parents=True, exist_ok=True)
        variants = {"base": tests[pname]}
        for p in perturbations:
            out = perturb(p, inp, 0)
            write_perturbed(out, folder / f"{p}.conll", inp, 0)
            variants[p] = out.corpus(str(folder / f"{p}.conll"))
            note(f"{pname} {condition} {p}: {len(out.replacements)} replacement(s) ({folder / (p + '.conll')}.json)")
        files[(pname, condition)] = variants
        if task == "ner":
            overlaps[f"{pname} {condition}"] = entity_overlap(inp.train, tests[pname])
    runs = []
    per_run = []
    for pair, condition, s, c in plans:
        run_dir = output / pair.name / condition / f"seed-{s}"
        result = train_tagger(c, run_dir, note, progress)
        model, tok = load_tagger(result.model)
        gold, pred, f1 = {}, {}, {}
        for vname, corpus in files[(pair.name, condition)].items():
            sc = evaluate_tagger(model, tok, corpus, task, 0, 0, c.models.max_seq_length)
            gold[vname], pred[vname] = corpus.tags, sc.predictions
            f1[vname] = sc.main()
        write_json_atomic(run_dir / "adversarial_scores.json", {"pair": pair.name, "condition": condition,
                                                                 "seed": s, "scores": f1})
        runs.append(RunScores(pair.name, condition, s, gold, pred))
        per_run.append({"pair": pair.name, "condition": condition, "seed": s, **f1})
        note(f"{pair.name} {condition} seed {s}: " + ", ".join(f"{k} {v:.3f}" for k, v in f1.items()))
    effs = effects(runs, task, bootstrap)
    base_ci = {}
    for pname, test in tests.items():
        for condition in ("native", "transfer"):
            rs = [r for r in runs if r.pair == pname and r.condition == condition]
            if rs:
                base_ci[f"{pname} {condition}"] = score(task, rs[0].gold["base"], rs[0].pred["base"], bootstrap).metrics
    report = {"schema": "xlsent.adversarial/1", "task": task, "pairs": [p.__dict__ for p in pairs], "seeds": seeds,
              "perturbations": perturbations, "test_sentences": {k: len(v) for k, v in tests.items()},
              "labels": "silver" if any(str(p.l2_test).startswith("silver-") for p in pairs) else "as given",
              "runs": per_run, "effects": [e.to_dict() for e in effs], "overlap": overlaps,
              "base_seed0_ci": base_ci, "config": json.loads(json.dumps(cfg.to_dict()))}
    write_json_atomic(output / "adversarial.json", report)
    plot_effects(effs, output / "adversarial.png", f"{task.upper()} ΔF1 under perturbation "
                 f"({', '.join(p.name for p in pairs)}; {len(seeds)} seed(s); bootstrap 95%)")
    return report
