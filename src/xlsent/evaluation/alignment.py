"""Sentence-alignment scores: strict and lax precision, recall and F1 as Vecalign's scorer defines them (after
Véronis & Langlais's ARCADE metrics), micro-averaged over documents.

* A predicted block is a **strict** match when the gold holds exactly that block.
* It is a **lax** match when it is a strict one, or when its target ids meet the target ids of any gold block
  that shares a source id with it. A deletion (one side empty) can only match strictly.
* **Precision** counts every predicted block (deletions included) against the gold; **recall** counts every gold
  block against the prediction, with the blocks that have an empty side removed from both — so a missed
  deletion lowers nothing, a wrongly predicted one lowers precision.
* Counts are summed over every document before the ratios are taken (micro average).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Sequence

from xlsent.data.formats.alignment import Alignment, DocumentPair

Block = tuple[tuple[int, ...], tuple[int, ...]]


def _matches(test: list[Block], gold: list[Block]) -> tuple[int, int, int]:
    """(predicted blocks, strict matches, lax matches) of ``test`` against ``gold``."""
    gold_set = set(gold)
    tgt_of: dict[int, set[int]] = {}
    for s, t in gold:
        for i in s:
            tgt_of.setdefault(i, set()).update(t)
    tests = list(dict.fromkeys(b for b in test if b[0] or b[1]))
    strict = lax = 0
    for s, t in tests:
        if (s, t) in gold_set:
            strict += 1
            lax += 1
        elif s and t and set(t) & set().union(*(tgt_of.get(i, set()) for i in s)):
            lax += 1
    return len(tests), strict, lax


@dataclass
class AlignmentScores:
    strict_precision: float
    strict_recall: float
    strict_f1: float
    lax_precision: float
    lax_recall: float
    lax_f1: float
    documents: int
    predicted_blocks: int
    gold_blocks: int

    def to_dict(self) -> dict:
        return asdict(self)


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r else 0.0


def score_alignments(gold: Sequence[Alignment], pred: Sequence[Alignment]) -> AlignmentScores:
    """Strict and lax P/R/F1 of ``pred`` against ``gold``, document by document, micro-averaged."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(pred)} predicted documents for {len(gold)} gold ones")
    n_p = sp = lp = n_r = sr = lr = 0
    n_gold = 0
    for g, p in zip(gold, pred):
        gb, pb = g.blocks(), p.blocks()
        n_gold += len(gb)
        n, s, lx = _matches(pb, gb)
        n_p, sp, lp = n_p + n, sp + s, lp + lx
        full = lambda blocks: [b for b in blocks if b[0] and b[1]]  # noqa: E731
        n, s, lx = _matches(full(gb), full(pb))
        n_r, sr, lr = n_r + n, sr + s, lr + lx
    ratio = lambda a, b: a / b if b else 0.0  # noqa: E731
    spr, srr, lpr, lrr = ratio(sp, n_p), ratio(sr, n_r), ratio(lp, n_p), ratio(lr, n_r)
    return AlignmentScores(spr, srr, _f1(spr, srr), lpr, lrr, _f1(lpr, lrr), len(gold), n_p, n_gold)


def evaluate_alignment(docs: Sequence[DocumentPair], align: Callable[[DocumentPair], Alignment]
                       ) -> tuple[AlignmentScores, list[Alignment]]:
    """Align every gold document pair with ``align`` and score the result."""
    pred = [align(d) for d in docs]
    return score_alignments([d.gold for d in docs], pred), pred
