#!/usr/bin/env python3
"""The automatic mining cut on hard data (issue 76, §7): ``--threshold auto`` against the best cut, on comparable
corpora with realistic noise.

    python benchmarks/mining/mining_cut.py --split dev     # choosing (Old Testament dev books, udhr-all:dev languages)
    python benchmarks/mining/mining_cut.py --split test    # reported once (New Testament, udhr-all:test languages)

Each set is a comparable corpus, English against another language, where only a part of each side is translation of
the other. The rest of each side:

* **near-translations**: a translated line with a clause (or about half its words) dropped, or the first half of
  one translated line joined to the second half of another — on the other-language side, and a few on the English
  side; the line's own translation is absent;
* **neighbouring lines** (Bible): an English verse opposite the translation of the verse after it, which is about
  the same thing (neither verse's own translation is present);
* **other languages**: the translation into a neighbouring language (``udhr-all``, same script, another
  macrolanguage, the most alike by the bundled identifier's character n-grams, a language of the same split) of
  English lines present on the English side — a true translation in the wrong language, not a gold pair;
* **unrelated lines**: lines of either side whose translation is not there, and (Bible) verses of other books.

Sets: ``bible`` (about 2,500 lines a side, 559 of them translated), ``bible-sparse`` (about 2,750 a side, 195
translated), ``bible-600`` (about 480 a side: the mixture's regime near its 200-candidate floor), ``bible-dense``
(about 1,750 a side, 1,004 translated), and one UDHR set per language (30–50 candidates: the target–decoy regime) — dev: the Old Testament's development books (unrelated
verses from the other Old Testament books, never the New Testament) and six ``udhr-all:dev`` languages; test: the
New Testament and six ``udhr-all:test`` languages, Indonesian among them.

Every set is mined once with ``xlsent.mine`` (the default model, ``threshold=None``, ``filters="none"``: every
one-to-one candidate of LASER's ``max`` mode) and its candidates — score, decoy (the larger runner-up of its two
sentences' lists: what the automatic cut is handed), gold or not, what kind of line each side is — are saved under
``--cache`` (``runs/mining-cut/``), so a rerun reads them and mines nothing. For each set it prints the candidates,
the automatic cut (``xlsent.mining.threshold.auto_threshold`` as ``xlsent mine`` calls it) with its F1, precision
and recall against the gold, the best cut (an oracle: the threshold with the highest F1 against the gold) and the
gap between them in F1 points. ``--known 20,60``: the same for the cut anchored on that many known pairs (what
``xlsent train bootstrap`` gives ``xlsent.mine``: its 20 or 60 held-out seed pairs), drawn ``--draws`` times from the
gold candidates — a draw of gold *candidates* (pairs the mining found), where bootstrap scores its held-out pairs
whether or not the mining would have found them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
UDHR_LANGS = {"dev": ("nld", "pol", "mar", "kin", "tsn", "ewe"),
              "test": ("ind", "zul", "hau", "swh", "som", "rus")}
LABELS = ("gold", "near", "neighbour-line", "other-language", "unrelated")


# -- noise ---------------------------------------------------------------------------------------------------------

def drop_part(text: str, rng: random.Random) -> str:
    """A near-translation: one clause dropped when a clause holds at least 30% of the words, else the last 40–55%."""
    words = text.split()
    clauses = [c for c in re.split(r"(?<=[,;:])\s+", text) if c]
    if len(clauses) >= 2:
        k = rng.randrange(len(clauses))
        if len(clauses[k].split()) >= 0.3 * len(words) and len(clauses[k].split()) <= 0.7 * len(words):
            return " ".join(c for i, c in enumerate(clauses) if i != k)
    keep = max(1, round(len(words) * rng.uniform(0.45, 0.6)))
    return " ".join(words[:keep])


def join_halves(a: str, b: str) -> str:
    """A near-translation: the first half of ``a`` and the second half of ``b``."""
    wa, wb = a.split(), b.split()
    return " ".join(wa[:max(1, len(wa) // 2)] + wb[len(wb) // 2:])


def near(text: str, other: str, rng: random.Random) -> str:
    return drop_part(text, rng) if rng.random() < 0.6 else join_halves(text, other)


class Corpus:
    """Two sides built line by line; each line's kind and, for a translated line, its partner."""

    def __init__(self):
        self.src: list[str] = []
        self.tgt: list[str] = []
        self.src_kind: list[str] = []
        self.tgt_kind: list[str] = []
        self.gold: list[tuple[int, int]] = []
        self._seen = (set(), set())

    def add(self, side: int, text: str, kind: str) -> int:
        text = " ".join(text.split())
        if not text or text in self._seen[side]:
            return -1
        self._seen[side].add(text)
        lines, kinds = (self.src, self.src_kind) if side == 0 else (self.tgt, self.tgt_kind)
        lines.append(text)
        kinds.append(kind)
        return len(lines) - 1

    def pair(self, en: str, xx: str) -> None:
        if en in self._seen[0] or xx in self._seen[1]:
            return
        i, j = self.add(0, en, "gold"), self.add(1, xx, "gold")
        self.gold.append((i, j))


def fill(c: Corpus, pairs: list[tuple[str, str]], shares: dict[str, float], rng: random.Random,
         adjacent: bool) -> None:
    """Lay ``pairs`` (in text order: neighbours are next to each other) out on the two sides by ``shares`` of
    gold | near | neighbour | en-only | xx-only."""
    kinds, weights = zip(*shares.items())
    i = 0
    while i < len(pairs):
        en, xx = pairs[i]
        kind = rng.choices(kinds, weights)[0]
        if kind == "neighbour" and not (adjacent and i + 1 < len(pairs)):
            kind = "en-only"
        if kind == "gold":
            c.pair(en, xx)
        elif kind == "near":
            other = pairs[rng.randrange(len(pairs))]
            if rng.random() < 0.8:  # most on the other-language side, as a crawl's
                c.add(0, en, "near")
                c.add(1, near(xx, other[1], rng), "near")
            else:
                c.add(0, near(en, other[0], rng), "near")
                c.add(1, xx, "near")
        elif kind == "neighbour":
            c.add(0, en, "neighbour-line")
            c.add(1, pairs[i + 1][1], "neighbour-line")
            i += 1  # the next verse is used up: neither of its sides appears with its partner
        elif kind == "en-only":
            c.add(0, en, "unrelated")
        else:
            c.add(1, xx, "unrelated")
        i += 1


# -- data ----------------------------------------------------------------------------------------------------------

def split_languages(split: str) -> set[str]:
    from xlsent.data.sets.bundled import load_bundled

    return set(load_bundled(f"udhr-all:{split}")["tgt_lang"])


def neighbour(lang: str, split: str) -> str:
    """``lang``'s closest ``udhr-all`` language of the same split: same script, another macrolanguage, the most alike
    character n-gram counts (as ``filter_noise.neighbours``, limited to the split's languages)."""
    from sklearn.preprocessing import normalize

    from xlsent.data.langid import macro, script
    from xlsent.data.langid.ngram import bundled_identifier, udhr_texts

    model = bundled_identifier()
    texts = udhr_texts("train")
    allowed = split_languages(split)
    langs = list(model.languages)
    i = langs.index(lang)
    x = normalize(model.counts.astype(np.float64))
    sim = (x[i] @ x.T).toarray().ravel()
    own = script(" ".join(texts[lang][:3]))
    ok = [j for j, other in enumerate(langs) if other != lang and other in allowed and macro(other) != macro(lang)
          and script(" ".join(texts[other][:3])) == own]
    return langs[max(ok, key=lambda j: sim[j])]


def udhr_units() -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    from xlsent.data.sets.bundled import load_bundled

    ds = load_bundled("udhr-all")
    english, by_lang = {}, {}
    for pid, src, tgt, lang in zip(ds["id"], ds["src"], ds["tgt"], ds["tgt_lang"]):
        english[pid] = src
        by_lang.setdefault(lang, {})[pid] = tgt
    return english, by_lang


def bible_set(split: str, name: str, seed: int) -> Corpus:
    from xlsent.data.sets.bundled import load_bundled

    rng = random.Random(seed)
    core = load_bundled("bible-en-ny:dev" if split == "dev" else "bible-en-ny:test")
    verses = list(zip(core["src"], core["tgt"]))
    if split == "dev":  # unrelated verses: the other Old Testament books (never the New Testament)
        extra = list(zip(*(load_bundled("bible-en-ny:dev-train")[k] for k in ("src", "tgt"))))
    else:  # the New Testament alone is large enough: the first verses the sets' own, the rest the unrelated ones
        extra, verses = verses[4000:], verses[:4000]
    size = {"bible": (1684, 1300), "bible-sparse": (1684, 1700), "bible-600": (420, 170),
            "bible-dense": (1684, 300)}[name]  # (the set's own verses, unrelated verses a side)
    start = rng.randrange(0, max(1, len(verses) - size[0] + 1))
    own = verses[start:start + size[0]]  # a run of consecutive verses: neighbours stay neighbours
    shares = {"bible": dict(gold=.36, near=.12, neighbour=.10, **{"en-only": .2, "xx-only": .22}),
              "bible-sparse": dict(gold=.14, near=.12, neighbour=.12, **{"en-only": .31, "xx-only": .31}),
              "bible-600": dict(gold=.36, near=.12, neighbour=.10, **{"en-only": .2, "xx-only": .22}),
              "bible-dense": dict(gold=.62, near=.1, neighbour=.06, **{"en-only": .1, "xx-only": .12})}[name]
    c = Corpus()
    fill(c, own, shares, rng, adjacent=True)
    picks = rng.sample(range(len(extra)), 2 * size[1])
    for k, idx in enumerate(picks):  # different verses on each side: none is the other's translation
        c.add(k % 2, extra[idx][k % 2], "unrelated")
    # other languages: Chichewa's neighbours' translations of English UDHR paragraphs present on the English side
    english, by_lang = udhr_units()
    first = neighbour("nya", split) if "nya" in split_languages(split) else _nya_neighbour(split)
    second = neighbour(first, split)
    units = sorted(english)
    rng.shuffle(units)
    n_other = {"bible": 60, "bible-sparse": 60, "bible-600": 24, "bible-dense": 40}[name]
    for k, uid in enumerate(units[:n_other]):
        lang = first if k % 2 == 0 else second
        if uid in by_lang[lang]:
            if c.add(0, english[uid], "other-language") >= 0:
                c.add(1, by_lang[lang][uid], "other-language")
    c.note = f"other languages: {first}, {second}"  # type: ignore[attr-defined]
    return c


def _nya_neighbour(split: str) -> str:
    """Chichewa is a test language: a dev set's closest dev language to it instead."""
    from sklearn.preprocessing import normalize

    from xlsent.data.langid import macro
    from xlsent.data.langid.ngram import bundled_identifier

    model = bundled_identifier()
    langs = list(model.languages)
    i = langs.index("nya")
    allowed = split_languages(split)
    x = normalize(model.counts.astype(np.float64))
    sim = (x[i] @ x.T).toarray().ravel()
    ok = [j for j, other in enumerate(langs) if other in allowed and macro(other) != macro("nya")]
    return langs[max(ok, key=lambda j: sim[j])]


def udhr_set(split: str, lang: str, seed: int) -> Corpus:
    from xlsent.data.sets.bundled import load_bundled

    rng = random.Random(seed)
    english, by_lang = udhr_units()
    other = neighbour(lang, split)
    units = sorted(by_lang[lang])
    rng.shuffle(units)
    c = Corpus()
    for uid in units:
        en, xx = english[uid], by_lang[lang][uid]
        kind = rng.choices(("gold", "near", "other", "en-only", "xx-only"), (.4, .1, .2, .15, .15))[0]
        if kind == "other" and uid not in by_lang[other]:
            kind = "en-only"
        if kind == "gold":
            c.pair(en, xx)
        elif kind == "near":
            alt = by_lang[lang][units[rng.randrange(len(units))]]
            c.add(0, en, "near")
            c.add(1, near(xx, alt, rng), "near")
        elif kind == "other":
            c.add(0, en, "other-language")
            c.add(1, by_lang[other][uid], "other-language")
        elif kind == "en-only":
            c.add(0, en, "unrelated")
        else:
            c.add(1, xx, "unrelated")
    # unrelated English text beside it (a crawl's English side is larger than the translated part)
    bible = load_bundled("bible-en-ny:dev" if split == "dev" else "bible-en-ny:test")["src"]
    for idx in rng.sample(range(len(bible)), 100):
        c.add(0, bible[idx], "unrelated")
    c.note = f"other language: {other}"  # type: ignore[attr-defined]
    return c


BIBLE_SETS = ("bible", "bible-sparse", "bible-600", "bible-dense")


def sets(split: str, only: set[str] | None = None):
    """(name, corpus) of every set of the split (``only``: these names), built as they are needed."""
    for seed, name in enumerate(BIBLE_SETS):
        if not only or name in only:
            yield name, bible_set(split, name, seed)
    for k, lang in enumerate(UDHR_LANGS[split]):
        if not only or f"udhr:{lang}" in only:
            yield f"udhr:{lang}", udhr_set(split, lang, 100 + k)


# -- mining, once ----------------------------------------------------------------------------------------------------

def candidates(name: str, c: Corpus, split: str, model: str, cache: Path) -> dict[str, np.ndarray]:
    """Every one-to-one candidate of ``xlsent.mine`` (``threshold=None``) with its decoy, gold flag and line kinds;
    read from ``cache`` when these very lines were mined before."""
    key = hashlib.sha1(json.dumps([model, c.src, c.tgt]).encode()).hexdigest()[:12]
    path = cache / f"{split}-{name.replace(':', '-')}-{key}.npz"
    if path.exists():
        return dict(np.load(path))
    import xlsent
    from xlsent.mining.margin import select_from_candidates
    from xlsent.mining.tasks import load_candidates

    with tempfile.TemporaryDirectory(prefix="mining-cut-") as tmp:
        work = Path(tmp) / "work"
        res = xlsent.mine(c.src, c.tgt, model=model, threshold=None, filters="none", workdir=work,
                          show_progress_bar=False)
        scores = work / "knn" / "score-ratio"
        fwd = load_candidates(sorted(scores.glob("fwd-*.npz")))
        bwd = load_candidates(sorted(scores.glob("bwd-*.npz")))
    if len(fwd.best) != len(c.src) or len(bwd.best) != len(c.tgt):
        raise SystemExit(f"{name}: the job read {len(fwd.best)} × {len(bwd.best)} lines, not {len(c.src)} × "
                         f"{len(c.tgt)}")
    pairs = select_from_candidates(fwd, bwd, "max", None)
    mined = {(s, t) for _, s, t in res.pairs}
    if mined != {(c.src[i], c.tgt[j]) for i, j in zip(pairs.src, pairs.tgt)}:
        raise SystemExit(f"{name}: the candidates read back are not the pairs xlsent.mine returned")
    gold = set(c.gold)
    out = {"src": pairs.src, "tgt": pairs.tgt, "score": pairs.score,
           "decoy": np.maximum(fwd.second[pairs.src], bwd.second[pairs.tgt]),
           "fwd_second": fwd.second[pairs.src], "bwd_second": bwd.second[pairs.tgt],
           "gold": np.array([(i, j) in gold for i, j in zip(pairs.src, pairs.tgt)]),
           "src_kind": np.array([c.src_kind[i] for i in pairs.src]),
           "tgt_kind": np.array([c.tgt_kind[j] for j in pairs.tgt]),
           "n_gold": np.array(len(gold)), "n_src": np.array(len(c.src)), "n_tgt": np.array(len(c.tgt))}
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, **out)
    return out


# -- cuts ------------------------------------------------------------------------------------------------------------

def f1_at(score: np.ndarray, gold: np.ndarray, n_gold: int, threshold: float | None) -> tuple[float, float, float]:
    keep = np.ones(len(score), bool) if threshold is None else score >= threshold
    tp, n = int(gold[keep].sum()), int(keep.sum())
    p, r = (tp / n if n else 0.0), (tp / n_gold if n_gold else 0.0)
    return (2 * p * r / (p + r) if p + r else 0.0), p, r


def best_cut(score: np.ndarray, gold: np.ndarray, n_gold: int) -> tuple[float, float]:
    order = np.argsort(-score, kind="stable")
    s, hits = score[order], np.cumsum(gold[order])
    f1 = 2 * hits / (np.arange(1, len(s) + 1) + n_gold)
    f1 = np.where(np.r_[s[1:] < s[:-1], True], f1, -1.0)
    i = int(np.argmax(f1))
    return float(s[i]), float(f1[i])


def evaluate(name: str, cand: dict[str, np.ndarray]) -> dict:
    from xlsent.mining.threshold import auto_threshold

    score, gold, n_gold = cand["score"], cand["gold"], int(cand["n_gold"])
    est = auto_threshold(score, cand["decoy"])
    f1, p, r = f1_at(score, gold, n_gold, est.threshold)
    best_t, best_f1 = best_cut(score, gold, n_gold)
    return {"set": name, "lines": [int(cand["n_src"]), int(cand["n_tgt"])], "candidates": len(score),
            "gold": n_gold, "gold_among_candidates": int(gold.sum()), "auto_method": est.method,
            "auto_threshold": est.threshold, "auto_f1": f1, "auto_p": p, "auto_r": r,
            "auto_kept": int((score >= est.threshold).sum()) if est.threshold is not None else len(score),
            "best_threshold": best_t, "best_f1": best_f1, "gap_points": 100 * (best_f1 - f1)}


def anchored(cand: dict[str, np.ndarray], n_known: int, draws: int, seed: int = 0) -> dict | None:
    """The cut anchored on ``n_known`` known pairs (``xlsent.mine(..., known_pairs=…)``, which bootstrap gives its
    held-out seed pairs): ``draws`` times, ``n_known`` of the gold candidates are drawn as the known pairs and their
    scores anchor the cut; the F1 gap to the best cut, mean and largest over the draws. None where the set has too
    few gold candidates to draw them and leave most to find."""
    from xlsent.mining.threshold import anchored_threshold, auto_threshold

    score, gold, n_gold = cand["score"], cand["gold"], int(cand["n_gold"])
    rows = np.flatnonzero(gold)
    if len(rows) < 2 * n_known:
        return None
    _, best_f1 = best_cut(score, gold, n_gold)
    rng = np.random.default_rng(seed)
    base = auto_threshold(score, cand["decoy"])  # the unanchored estimate, once: no draw changes it
    gaps = [100 * (best_f1 - f1_at(score, gold, n_gold, anchored_threshold(
        score, cand["decoy"], score[rng.choice(rows, n_known, replace=False)], base=base).threshold)[0])
        for _ in range(draws)]
    return {"known": n_known, "draws": draws, "gap_mean": float(np.mean(gaps)), "gap_max": float(np.max(gaps))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="dev", choices=("dev", "test"))
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--cache", default=str(ROOT / "runs" / "mining-cut"), help="candidate lists, mined once")
    ap.add_argument("--json", default="", help="also write every figure here")
    ap.add_argument("--sets", default="", help="only these sets, comma-separated (e.g. bible,udhr:ind)")
    ap.add_argument("--known", default="20,60", help="the cut anchored on this many known pairs (bootstrap's "
                    "held-out seed pairs at 100 and 300 seed pairs), comma-separated; '' for none")
    ap.add_argument("--draws", type=int, default=20, help="draws of the known pairs a set")
    args = ap.parse_args()
    known = [int(x) for x in args.known.split(",") if x]

    t0 = time.perf_counter()
    rows = []
    for name, c in sets(args.split, set(filter(None, args.sets.split(","))) or None):
        t = time.perf_counter()
        cand = candidates(name, c, args.split, args.model, Path(args.cache))
        row = evaluate(name, cand)
        row["anchored"] = [a for a in (anchored(cand, n, args.draws) for n in known) if a]
        row["note"] = getattr(c, "note", "")
        row["seconds"] = round(time.perf_counter() - t, 1)
        rows.append(row)
        print(f"{name}: {row['lines'][0]} × {row['lines'][1]} lines, {row['gold']} gold pairs ({c.note}); "
              f"{row['seconds']} s", flush=True)
    print(f"\n{args.model}, ratio margin, max mode, k = 4; split {args.split}\n")
    print("| set | lines a side | gold | candidates | auto: rule, threshold → F1 (P, R) | best cut → F1 | gap |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        t = "all kept" if r["auto_threshold"] is None else f"{r['auto_threshold']:.4f}"
        print(f"| {r['set']} | {r['lines'][0]:,} × {r['lines'][1]:,} | {r['gold']} | {r['candidates']:,} | "
              f"{r['auto_method']}, {t} → {r['auto_f1']:.3f} ({r['auto_p']:.3f}, {r['auto_r']:.3f}) | "
              f"{r['best_threshold']:.4f} → {r['best_f1']:.3f} | {r['gap_points']:.1f} |")
    worst = max(r["gap_points"] for r in rows)
    print(f"\nlargest gap {worst:.1f} points; mean {np.mean([r['gap_points'] for r in rows]):.1f}; "
          f"{time.perf_counter() - t0:.0f} s")
    if known:
        print(f"\nanchored on known pairs (gold candidates drawn as the known ones, {args.draws} draws; sets with at "
              "least twice as many gold candidates): F1 gap to the best cut, mean / largest over the draws\n")
        print("| set | unanchored gap | " + " | ".join(f"anchored on {n}" for n in known) + " |")
        print("|---|---|" + "---|" * len(known))
        for r in rows:
            by = {a["known"]: f"{a['gap_mean']:.1f} / {a['gap_max']:.1f}" for a in r["anchored"]}
            if by:
                print(f"| {r['set']} | {r['gap_points']:.1f} | " + " | ".join(by.get(n, "–") for n in known) + " |")
    print("command: python benchmarks/mining/mining_cut.py " + " ".join(sys.argv[1:]))
    if args.json:
        Path(args.json).write_text(json.dumps({"split": args.split, "model": args.model, "sets": rows}, indent=1))


if __name__ == "__main__":
    main()
