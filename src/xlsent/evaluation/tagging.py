"""Scores of a token tagger: entity-level F1 (seqeval) for NER, accuracy for POS, with bootstrap CIs.

NER: seqeval's default (CoNLL ``conlleval``) entity extraction; micro F1 over all entities, macro F1
= the mean of the per-label F1, and per-label precision/recall/F1/support — the figures
``seqeval.metrics.classification_report`` gives. Entities never cross a sentence boundary, so the
per-sentence counts (true positives, predicted, gold per label) sum to the corpus figures; the
bootstrap resamples sentences (B times, seeded) and recomputes micro and macro F1 from those counts,
and the 95% CI is the 2.5/97.5 percentile. :func:`paired_bootstrap` compares two prediction sets on
the same gold sentences (base vs perturbed): the same resampled sentences score both.

POS: accuracy over the tokens whose gold tag is not ``_`` (unlabelled silver tokens), bootstrapped
over sentences the same way, and per-tag accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from xlsent.data.formats.conll import UNLABELLED
from xlsent.evaluation.bootstrap import bootstrap_ci, percentile_interval, resample_indices, two_sided_p


@dataclass
class SentenceCounts:
    """Per sentence and label: true positives, predicted and gold entities (NER) or correct and gold tokens (POS)."""

    labels: list[str]
    tp: np.ndarray  # [N, L]
    pred: np.ndarray  # [N, L]
    gold: np.ndarray  # [N, L]


def _entities(tags: list[str]) -> set[tuple[str, int, int]]:
    from seqeval.metrics.sequence_labeling import get_entities

    return {(t, s, e) for t, s, e in get_entities(list(tags))}


def ner_counts(gold: list[list[str]], pred: list[list[str]]) -> SentenceCounts:
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred)} predicted")
    per = []
    labels: set[str] = set()
    for g, p in zip(gold, pred):
        if len(g) != len(p):
            raise ValueError("a predicted sentence differs in length from its gold sentence")
        ge, pe = _entities(g), _entities(p)
        labels |= {e[0] for e in ge}
        per.append((ge, pe))
    labs = sorted(labels)
    index = {lab: k for k, lab in enumerate(labs)}
    n = len(gold)
    tp, np_, ng = (np.zeros((n, len(labs))) for _ in range(3))
    for i, (ge, pe) in enumerate(per):
        for e in ge:
            ng[i, index[e[0]]] += 1
        for e in pe:
            if e[0] in index:  # a label absent from the gold file counts against no gold label's precision
                np_[i, index[e[0]]] += 1
                if e in ge:
                    tp[i, index[e[0]]] += 1
    return SentenceCounts(labs, tp, np_, ng)


def pos_counts(gold: list[list[str]], pred: list[list[str]]) -> SentenceCounts:
    labels = sorted({t for s in gold for t in s if t != UNLABELLED})
    index = {lab: k for k, lab in enumerate(labels)}
    n = len(gold)
    tp, ng = np.zeros((n, len(labels))), np.zeros((n, len(labels)))
    for i, (g, p) in enumerate(zip(gold, pred)):
        for a, b in zip(g, p):
            if a == UNLABELLED:
                continue
            ng[i, index[a]] += 1
            tp[i, index[a]] += a == b
    return SentenceCounts(labels, tp, ng.copy(), ng)


def _f1(tp, pred, gold):
    with np.errstate(invalid="ignore", divide="ignore"):
        denom = pred + gold
        return np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), 0.0)


def micro_f1(c: SentenceCounts, rows=None) -> np.ndarray | float:
    """Micro F1 of all sentences, or of each row of resampled sentence indices ``rows`` [B, N]."""
    if rows is None:
        return float(_f1(c.tp.sum(), c.pred.sum(), c.gold.sum()))
    return _f1(c.tp.sum(1)[rows].sum(1), c.pred.sum(1)[rows].sum(1), c.gold.sum(1)[rows].sum(1))


def macro_f1(c: SentenceCounts, rows=None) -> np.ndarray | float:
    if rows is None:
        return float(np.mean(_f1(c.tp.sum(0), c.pred.sum(0), c.gold.sum(0)))) if c.labels else 0.0
    return _f1(c.tp[rows].sum(1), c.pred[rows].sum(1), c.gold[rows].sum(1)).mean(-1)


def accuracy(c: SentenceCounts, rows=None) -> np.ndarray | float:
    if rows is None:
        total = c.gold.sum()
        return float(c.tp.sum() / total) if total else 0.0
    t, g = c.tp.sum(1)[rows].sum(1), c.gold.sum(1)[rows].sum(1)
    return np.where(g > 0, t / np.where(g > 0, g, 1), 0.0)


@dataclass
class TaggingScores:
    task: str
    sentences: int
    metrics: dict = field(default_factory=dict)  # micro_f1/macro_f1 (NER) or accuracy (POS): {value, ci95}
    per_label: dict = field(default_factory=dict)  # label: {precision, recall, f1, support} / {accuracy, support}
    notes: list[str] = field(default_factory=list)
    predictions: list[list[str]] | None = None

    def main(self) -> float:
        return self.metrics["micro_f1" if self.task == "ner" else "accuracy"]["value"]

    def to_dict(self) -> dict:
        return {"task": self.task, "sentences": self.sentences, **self.metrics, "per_label": self.per_label,
                "notes": self.notes}


def score(task: str, gold: list[list[str]], pred: list[list[str]], bootstrap: int = 1000,
          seed: int = 0) -> TaggingScores:
    """Scores of ``pred`` against ``gold`` with bootstrap 95% CIs over sentences (see the module docstring)."""
    c = ner_counts(gold, pred) if task == "ner" else pos_counts(gold, pred)
    out = TaggingScores(task, len(gold))
    fns = {"micro_f1": micro_f1, "macro_f1": macro_f1} if task == "ner" else {"accuracy": accuracy}
    for name, fn in fns.items():
        stat = lambda i, axis=-1, fn=fn: fn(c, i) if np.ndim(i) == 2 else fn(c, i[None])[0]  # noqa: E731
        out.metrics[name] = {"value": fn(c), "ci95": bootstrap_ci(stat, len(gold), bootstrap, seed) if bootstrap
                             else None}
    tp, pr, gd = c.tp.sum(0), c.pred.sum(0), c.gold.sum(0)
    for k, lab in enumerate(c.labels):
        if task == "ner":
            out.per_label[lab] = {"precision": float(tp[k] / pr[k]) if pr[k] else 0.0,
                                  "recall": float(tp[k] / gd[k]) if gd[k] else 0.0,
                                  "f1": float(_f1(tp[k], pr[k], gd[k])), "support": int(gd[k])}
        else:
            out.per_label[lab] = {"accuracy": float(tp[k] / gd[k]) if gd[k] else 0.0, "support": int(gd[k])}
    return out


@dataclass(frozen=True)
class PairedDelta:
    """Δ = score(other) − score(base) on the same sentences: the point figure, its 95% CI and two-sided p from a
    paired bootstrap over sentences, and (over seeds) each seed's own Δ."""

    delta: float
    ci95: tuple[float, float]
    p: float
    bootstrap: int
    per_seed: tuple[float, ...] | None = None

    def to_dict(self) -> dict:
        out = {"delta": self.delta, "ci95": list(self.ci95), "p": self.p, "bootstrap": self.bootstrap}
        return out if self.per_seed is None else {**out, "per_seed": list(self.per_seed)}


def paired_bootstrap(task: str, gold: list[list[str]], base: list[list[str]], other: list[list[str]],
                     bootstrap: int = 1000, seed: int = 0, gold_other: list[list[str]] | None = None) -> PairedDelta:
    """Δ = score(other) − score(base) on the same resampled sentences: mean, 95% CI and a two-sided p.

    ``gold_other`` is the gold of ``other`` when its sentences differ in tokens (a perturbed test file
    whose replacements changed lengths); sentence i of both must be the same sentence."""
    cb = ner_counts(gold, base) if task == "ner" else pos_counts(gold, base)
    go = gold if gold_other is None else gold_other
    co = ner_counts(go, other) if task == "ner" else pos_counts(go, other)
    fn = micro_f1 if task == "ner" else accuracy
    rows = resample_indices(len(gold), bootstrap, seed)
    d = fn(co, rows) - fn(cb, rows)
    return PairedDelta(float(fn(co) - fn(cb)), tuple(percentile_interval(d)), two_sided_p(d), bootstrap)


def paired_bootstrap_seeds(task: str, gold: list[list[str]], bases: list[list[list[str]]],
                           others: list[list[list[str]]], bootstrap: int = 1000, seed: int = 0) -> PairedDelta:
    """Two sets of taggers (seed i of each trained alike) on the same sentences: the seed-averaged
    Δ = mean_i [score(other_i) − score(base_i)], its 95% CI and two-sided p from resampling sentences (every
    seed scored on the same resample), and each seed's own Δ. Answers "does encoder B beat encoder A under
    this tagger?" with both sources of noise in view: the seeds (the per-seed Δs) and the test sentences."""
    if len(bases) != len(others) or not bases:
        raise ValueError("give as many compared taggers as base taggers (seed i against seed i)")
    counts = lambda preds: ner_counts(gold, preds) if task == "ner" else pos_counts(gold, preds)  # noqa: E731
    fn = micro_f1 if task == "ner" else accuracy
    rows = resample_indices(len(gold), bootstrap, seed)
    cb, co = [counts(b) for b in bases], [counts(o) for o in others]
    per_seed = [float(fn(o) - fn(b)) for b, o in zip(cb, co)]
    d = np.mean([fn(o, rows) - fn(b, rows) for b, o in zip(cb, co)], axis=0)
    return PairedDelta(float(np.mean(per_seed)), tuple(percentile_interval(d)), two_sided_p(d), bootstrap,
                       tuple(per_seed))


def over_seeds(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation of one figure over several taggers (seeds); sd 0 for one."""
    import statistics

    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def sample_corpus(corpus, sample: int, seed: int):
    """A seeded sample of ``sample`` sentences (all when 0 or larger than the corpus), in file order."""
    import random

    if not sample or sample >= len(corpus):
        return corpus
    return corpus.subset(sorted(random.Random(seed).sample(range(len(corpus)), sample)))


def evaluate_tagger(model, tokenizer, corpus, task: str, bootstrap: int = 1000, seed: int = 0,
                    max_length: int = 128, batch_size: int = 32) -> TaggingScores:
    """Predict ``corpus`` with a loaded tagger and score it (words past ``max_length`` pieces count as O / wrong)."""
    from xlsent.models.tagger import predict

    preds, cut = predict(model, tokenizer, corpus.tokens, batch_size=batch_size, max_length=max_length,
                         default="O" if task == "ner" else "_")
    out = score(task, corpus.tags, preds, bootstrap, seed)
    out.notes += list(corpus.notes)
    if cut:
        out.notes.append(f"{cut} test word(s) past {max_length} pieces were not tagged (scored as missed)")
    out.predictions = preds
    return out
