"""Zero-shot classification transfer (MLDoc-style; Schwenk & Li 2018, as used by Mao et al. 2021 §4.3).

A linear classifier (scikit-learn's multinomial logistic regression) is trained on *frozen*
embeddings of labelled source-language texts and tested on target-language texts. Each seed draws
a 10% validation split of the training texts, picks the regularisation C from {0.1, 1, 10} on it,
and refits on the whole training side; the figures are the mean and spread over seeds. Reported:
accuracy and macro-F1 (means over seeds) with 95% bootstrap CIs of those means (test items
resampled), per-class F1 and the confusion matrix (seed 0), and — when target-language training texts are given — the in-language
upper bound (train and test in the target language) next to the transfer figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from xlsent.encoding.encoder import TextEncoder

C_GRID = (0.1, 1.0, 10.0)


@dataclass
class ClassifyResult:
    accuracy: float
    macro_f1: float
    accuracy_ci95: list[float]
    macro_f1_ci95: list[float]
    accuracy_seeds: list[float]
    macro_f1_seeds: list[float]
    per_class_f1: dict[str, float]
    labels: list[str]
    confusion: list[list[int]]
    n_train: int
    n_test: int
    chosen_c: list[float] = field(default_factory=list)

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["accuracy_std"] = float(np.std(self.accuracy_seeds))
        d["macro_f1_std"] = float(np.std(self.macro_f1_seeds))
        return d


def _fit(x: np.ndarray, y: np.ndarray, seed: int):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    xt, xv, yt, yv = train_test_split(x, y, test_size=0.1, random_state=seed, stratify=y)
    best = max(C_GRID, key=lambda c: LogisticRegression(C=c, max_iter=2000).fit(xt, yt).score(xv, yv))
    return LogisticRegression(C=best, max_iter=2000).fit(x, y), best


def _boot(y: np.ndarray, preds: list[np.ndarray], fn, resamples: int, seed: int) -> list[float]:
    """95% interval of the seeds' mean ``fn(y, p)``, resampling test items (the same items for every seed), so
    that the interval is around the mean the table reports."""
    from xlsent.evaluation.bootstrap import bootstrap_ci

    def stat(idx):
        idx = np.asarray(idx, dtype=int)
        return float(np.mean([fn(y[idx], p[idx]) for p in preds]))

    return bootstrap_ci(stat, len(y), resamples, seed, vectorized=False)


def classify_embeddings(x_train: np.ndarray, y_train: list[str], x_test: np.ndarray, y_test: list[str],
                        seeds: int = 5, resamples: int = 1000) -> ClassifyResult:
    """Train on (x_train, y_train), test on (x_test, y_test), over ``seeds`` validation splits."""
    from sklearn.metrics import accuracy_score, confusion_matrix, f1_score

    labels = sorted(set(y_train) | set(y_test))
    ytr, yte = np.asarray(y_train), np.asarray(y_test)
    accs, f1s, cs, preds = [], [], [], []
    for seed in range(seeds):
        clf, c = _fit(x_train, ytr, seed)
        pred = clf.predict(x_test)
        accs.append(float(accuracy_score(yte, pred)))
        f1s.append(float(f1_score(yte, pred, labels=labels, average="macro", zero_division=0)))
        cs.append(c)
        preds.append(pred)
    first = preds[0]
    macro = lambda a, b: f1_score(a, b, labels=labels, average="macro", zero_division=0)  # noqa: E731
    per = f1_score(yte, first, labels=labels, average=None, zero_division=0)
    return ClassifyResult(
        accuracy=float(np.mean(accs)), macro_f1=float(np.mean(f1s)),
        accuracy_ci95=_boot(yte, preds, accuracy_score, resamples, 0), macro_f1_ci95=_boot(yte, preds, macro, resamples, 0),
        accuracy_seeds=accs, macro_f1_seeds=f1s, per_class_f1={k: float(v) for k, v in zip(labels, per)},
        labels=labels, confusion=confusion_matrix(yte, first, labels=labels).tolist(),
        n_train=len(ytr), n_test=len(yte), chosen_c=cs)


def evaluate_classification(encoder: TextEncoder, train, test, train_target=None, seeds: int = 5,
                            resamples: int = 1000) -> dict:
    """``train``/``test``/``train_target``: :class:`~xlsent.data.formats.labelled.Labelled`. Returns
    ``{"transfer": …, "in_language": … or None}`` as dicts."""
    x_tr = encoder.encode(train.texts, train.lang or None)
    x_te = encoder.encode(test.texts, test.lang or None)
    out = {"transfer": classify_embeddings(x_tr, train.labels, x_te, test.labels, seeds, resamples).to_dict(),
           "in_language": None}
    if train_target is not None:
        x_tt = encoder.encode(train_target.texts, train_target.lang or None)
        out["in_language"] = classify_embeddings(x_tt, train_target.labels, x_te, test.labels, seeds, resamples).to_dict()
    return out
