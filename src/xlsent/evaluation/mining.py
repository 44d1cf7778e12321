"""Thresholded bitext-mining precision / recall / F1 (BUCC 2017/2018 style).

Mining runs over a comparable corpus (:mod:`xlsent.data.formats.comparable`) without a threshold; the
candidates, best first, are compared with the gold pairs. The threshold that maximises F1 on
the **dev** corpus is then applied to the **test** corpus, whose figures are the result; the
test gold never chooses anything. Beside it, ``auto_threshold``: the cut ``xlsent mine`` makes by
default (:mod:`xlsent.mining.threshold`), estimated from the test candidates' scores alone (no gold,
no dev set), and the test F1 at it.

Kept apart, and labelled as such: ``top1_gold_sources``, the share of gold source sentences
whose cosine nearest target is their gold partner. That is what MTEB reports as bitext-mining
"F1" (on BUCC too): it only asks gold sentences, never has to reject a sentence without a
partner, needs no threshold, and so is a different, easier metric.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass

import numpy as np

from xlsent.data.formats.comparable import ComparableCorpus


@dataclass
class Candidates:
    """Mined pairs over a corpus, best first: (score, src id, tgt id), plus cosine top-1 per source."""

    scored: list[tuple[float, str, str]]
    top1: dict[str, str]
    auto: dict  # what ``xlsent mine --threshold auto`` estimates on these candidates (mining.threshold)


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 of a set of mined pairs against the gold pairs."""

    precision: float
    recall: float
    f1: float
    predicted: int
    correct: int

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class MiningResult:
    """What :func:`evaluate_mining` measured; ``to_dict()`` is the JSON ``xlsent eval mining -o`` writes."""

    model: str
    dataset: str
    dev: dict               # the dev corpus's summary
    mining: dict            # the mining settings that matter (k, mode, margin, dedupe, center, dtype)
    threshold: float        # chosen on dev
    dev_at_threshold: PRF
    test_corpus: dict       # the test corpus's summary (gold pairs, sentences a side)
    test: PRF               # test figures at the dev threshold: the result
    top1_gold_sources: float
    auto: dict              # xlsent mine's automatic cut on the test scores (mining.threshold)
    auto_test: PRF          # test figures at that cut

    NOTE = ("threshold tuned on dev, applied to test; auto_threshold: estimated from the test scores alone "
            "(what xlsent mine does by default); top1_gold_sources is MTEB's easier top-1 figure")

    def to_dict(self) -> dict:
        return {"model": self.model, "dataset": self.dataset, "dev": self.dev, "mining": self.mining,
                "threshold": self.threshold, "dev_at_threshold": self.dev_at_threshold.to_dict(),
                "test": {**self.test_corpus, **self.test.to_dict()}, "top1_gold_sources": self.top1_gold_sources,
                "auto_threshold": {**self.auto, "test": self.auto_test.to_dict()}, "note": self.NOTE}


def prf(tp: int, n_pred: int, n_gold: int) -> PRF:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return PRF(p, r, 2 * p * r / (p + r) if p + r else 0.0, n_pred, tp)


def best_threshold(scored: list[tuple[float, str, str]], gold: set[tuple[str, str]]) -> tuple[float, PRF]:
    """The score threshold (keep pairs ≥ it) with the highest F1, and the figures at it."""
    if not scored:
        return float("inf"), prf(0, 0, len(gold))
    hits = np.cumsum([(s, t) in gold for _, s, t in scored])
    n = np.arange(1, len(scored) + 1)
    f1 = 2 * hits / (n + len(gold))
    scores = np.array([x for x, _, _ in scored])
    # only cut between distinct scores: a threshold keeps every pair tied with the last one kept
    last_of_tie = np.r_[scores[1:] < scores[:-1], True]
    f1 = np.where(last_of_tie, f1, -1.0)
    i = int(np.argmax(f1))
    return float(scores[i]), prf(int(hits[i]), int(n[i]), len(gold))


def at_threshold(scored: list[tuple[float, str, str]], gold: set[tuple[str, str]], threshold: float) -> PRF:
    kept = [(s, t) for x, s, t in scored if x >= threshold]
    return prf(sum(p in gold for p in kept), len(kept), len(gold))


def mine_candidates(encoder, corpus: ComparableCorpus, cfg, model_name: str = "", workdir=None,
                    show_progress: bool = False) -> Candidates:
    """Mine ``corpus`` with ``cfg`` (its threshold ignored) and return all selected pairs with ids."""
    from dataclasses import replace

    from xlsent.mining.job import MiningJob
    from xlsent.mining.tasks import load_knn

    cfg = replace(cfg, threshold=None)
    src_text = [t for _, t in corpus.src]
    tgt_text = [t for _, t in corpus.tgt]
    with tempfile.TemporaryDirectory() as tmp:
        job = MiningJob(workdir or tmp, src_text, tgt_text, model_name or "model", cfg, encoder=encoder,
                        src_lang=corpus.src_lang, tgt_lang=corpus.tgt_lang)
        job.run(show_progress=show_progress)
        pairs = job.select()  # every one-to-one candidate: the dev threshold is tuned over them
        counts: dict = {}
        job.select(counts, threshold="auto")  # xlsent mine's default cut, for its estimate
        fwd = load_knn(job.knn_paths("fwd"))[1][:, 0]
        # the job embeds each side's unique sentences: row i is line line_numbers()[i] of the corpus, not line i
        src_line, tgt_line = job.inputs["src"].line_numbers(), job.inputs["tgt"].line_numbers()
    src_id = [corpus.src[n][0] for n in src_line]
    tgt_id = [corpus.tgt[n][0] for n in tgt_line]
    scored = [(float(x), src_id[i], tgt_id[j]) for x, i, j in zip(pairs.score, pairs.src, pairs.tgt)]
    top1 = {src_id[i]: tgt_id[j] for i, j in enumerate(fwd) if j >= 0}
    return Candidates(scored, top1, counts["auto_threshold"])


def evaluate_mining(encoder, dev: ComparableCorpus, test: ComparableCorpus, cfg, model_name: str = "",
                    show_progress: bool = False) -> MiningResult:
    """Tune the threshold on ``dev``, apply it to ``test``."""
    d = mine_candidates(encoder, dev, cfg, model_name, show_progress=show_progress)
    t = mine_candidates(encoder, test, cfg, model_name, show_progress=show_progress)
    threshold, dev_best = best_threshold(d.scored, dev.gold)
    cut = t.auto["threshold"]
    gold_src = {s: tt for s, tt in test.gold}
    top1 = sum(t.top1.get(s) == tt for s, tt in gold_src.items()) / max(1, len(gold_src))
    settings = {k: v for k, v in asdict(cfg).items() if k in ("k", "mode", "margin", "dedupe", "center", "dtype")}
    return MiningResult(model_name, test.name, dev.summary(), settings, threshold, dev_best, test.summary(),
                        at_threshold(t.scored, test.gold, threshold), top1, dict(t.auto),
                        at_threshold(t.scored, test.gold, -np.inf if cut is None else cut))
