#!/usr/bin/env python3
"""Held-out language identification on the UDHR (issue 61, first measurement): the character n-gram model of
:mod:`xlsent.data.identify` learned from each language's UDHR paragraphs of three articles in five, scored on a fourth (``--split dev``:
articles 3, 8, …, 28, for choosing settings) or the fifth (``--split test``: articles 5, 10, …, 30, read once) —
split by article, never by line — beside CLD2 on the languages both know.

    python benchmarks/langid_heldout.py --split dev                  # every udhr-all language (and English)
    python benchmarks/langid_heldout.py --split dev --ngrams 1,5 --alpha 0.1

Prints macro-F1 over every language (each held-out paragraph judged among all of them), the false-positive rate
(the share of other languages' paragraphs a language claims, averaged over languages), the worst languages and the
time per line; CLD2's macro-F1 on the paragraphs of languages it knows (its codes mapped to macrolanguages, as the
filters compare them; a paragraph CLD2 cannot place counts as wrong).
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("dev", "test"), default="dev")
    ap.add_argument("--ngrams", default="1,4", help="n-gram lengths, lo,hi")
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--min-count", type=int, default=1, help="keep a language's n-grams seen this many times")
    ap.add_argument("--worst", type=int, default=12, help="list this many languages with the lowest F1")
    a = ap.parse_args(argv)

    from sklearn.metrics import f1_score

    from xlsent.data.identify import NgramIdentifier, udhr_texts
    from xlsent.data.langid import detect, detectable_macros, macro

    train = udhr_texts("train")
    test = [(lang, text) for lang, texts in udhr_texts(a.split).items() for text in texts]
    lo, hi = (int(x) for x in a.ngrams.split(","))
    t0 = time.perf_counter()
    model = NgramIdentifier.learn(train, ngrams=(lo, hi), alpha=a.alpha, min_count=a.min_count)
    learn_s = time.perf_counter() - t0
    gold = [g for g, _ in test]
    texts = [t for _, t in test]
    t0 = time.perf_counter()
    pred = [x.lang or "" for x in model.identify(texts)]
    per_line = (time.perf_counter() - t0) / len(texts)
    labels = sorted(set(gold))
    f1 = f1_score(gold, pred, labels=labels, average=None, zero_division=0)
    macro_f1 = float(f1.mean())
    fp = [sum(1 for g, p in zip(gold, pred) if p == lang and g != lang) / max(1, sum(g != lang for g in gold))
          for lang in labels]
    print(f"{len(labels)} languages, {sum(len(v) for v in train.values())} training and {len(test)} {a.split} "
          f"paragraphs; vocabulary {len(model.vocabulary):,} n-grams; learned in {learn_s:.1f} s")
    print(f"n-gram model: macro-F1 {macro_f1:.3f}, mean false-positive rate {sum(fp) / len(fp):.5f}, "
          f"{per_line * 1000:.2f} ms a paragraph ({1 / per_line:,.0f} lines/s)")
    worst = sorted(zip(f1, labels))[:a.worst]
    print("lowest F1: " + ", ".join(f"{lang} {v:.2f}" for v, lang in worst))
    known = detectable_macros()
    both = [i for i, g in enumerate(gold) if macro(g) in known]
    both_labels = sorted({gold[i] for i in both})
    t0 = time.perf_counter()
    cld = [macro(detect(texts[i]).lang) or "" for i in both]
    cld_line = (time.perf_counter() - t0) / max(1, len(both))
    ours = [macro(pred[i]) or "" for i in both]
    truth = [macro(gold[i]) for i in both]
    truth_labels = sorted(set(truth))
    print(f"on the {len(both_labels)} languages CLD2 knows ({len(both)} paragraphs, compared as macrolanguages): "
          f"n-gram model macro-F1 {f1_score(truth, ours, labels=truth_labels, average='macro', zero_division=0):.3f}, "
          f"CLD2 {f1_score(truth, cld, labels=truth_labels, average='macro', zero_division=0):.3f} "
          f"({cld_line * 1000:.2f} ms a paragraph)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
