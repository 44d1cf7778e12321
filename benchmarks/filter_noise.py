#!/usr/bin/env python3
"""How much injected noise the default pair filters remove, and how many true pairs they lose — on several clean
sources, not one.

    python benchmarks/filter_noise.py [--split dev|test] [--sources bible,editorial,udhr,udhr-all,aligned] [--n 2000]

Sources (``--split dev`` chooses settings; ``--split test`` is reported once):

* ``bible``: Bible verse pairs (dev: ``bible-en-ny:dev``, eight Old-Testament books; test: ``bible-en-ny:test``,
  the New Testament);
* ``editorial``: the same verses with the editorial habits of other translations applied to 40% of them — a
  translator's insertion in square brackets, a clause in parentheses, a quotation in quotation marks, a footnote
  asterisk — and every verse of five words or fewer added (short verses are real sentences);
* ``udhr``: the UDHR paragraphs, one run per language, each with its own declared code (dev: the 24 ``udhr-dev``
  languages; test: the 47 of ``udhr``);
* ``udhr-all``: the same over the long tail (dev: the 211 languages of ``udhr-all:dev``; test: the 234 of
  ``udhr-all:test``), most of them languages CLD2 does not know, and close relatives among them (Malay and
  Indonesian, Croatian and Serbian, Rundi and Kinyarwanda, Chinese and Quechua varieties);
* ``aligned``: what ``docs/your-language.sh`` trains on — whole chapters aligned into pairs by ``xlsent.align``
  with the default model, every block taken as a true pair (dev: the eight Old-Testament books of
  ``bible-en-ny:dev``; test: every New-Testament epistle, Romans to Jude — 21 books, fixed before they were read;
  the alignment is cached under ``~/.cache/xlsent/bench``).

Each source gets the same noise: 5% of its pairs each get one kind — the target replaced by its English (the
source), the target copied from the source with case and punctuation changed, the target replaced by a sentence of
another language (a UDHR paragraph of the split's languages), the pair a near-duplicate of an earlier pair (case and
punctuation changed on both sides), the target cut to its first third. The filters are ``xlsent data filter-pairs``' defaults (its cleaning and the five
noise filters; ranking removes nothing), with the declared languages. Printed per source: the share of each noise
kind removed, of all noise, and of the true pairs (targets: ≥ 95% and ≤ 1%), what each filter removed, and the
true pairs lost. A true pair is counted once however often it occurs (an aligned epistle has "God forbid. |||
Msatero ai." six times) and is lost when no copy of it is in the output — the exact-duplicate step keeps one.
"""

from __future__ import annotations

import argparse
import json
import random
import re

KINDS = ("english", "copy", "other-language", "near-duplicate", "cut")
UDHR_OTHER = {"nya", "eng"}


def defect(text: str) -> bool:
    """A side that holds no word: the bundled UDHR has placeholders ("&1") for a few paragraphs of a few languages."""
    return not re.search(r"\w{2,}", text)


def inject(src: list[str], tgt: list[str], other: list[str], rng: random.Random):
    """5% of the pairs each get one kind of noise (the first rows stay true: a near-duplicate needs an earlier pair).
    A pair already broken in the source (:func:`defect`) is labelled ``defect``: neither true nor injected noise."""
    src, tgt = list(src), list(tgt)
    n = len(src)
    label = ["defect" if defect(s) or defect(t) else "true" for s, t in zip(src, tgt)]
    per = max(1, n // 20)
    start = min(per * 2, n // 4)
    chosen = rng.sample([i for i in range(start, n) if label[i] == "true"], per * len(KINDS))
    for k, kind in enumerate(KINDS):
        for i in chosen[k * per:(k + 1) * per]:
            label[i] = kind
            if kind == "english":
                tgt[i] = src[i]
            elif kind == "copy":
                tgt[i] = src[i].lower().rstrip(".;:,") + "!"
            elif kind == "other-language":
                tgt[i] = rng.choice(other)
            elif kind == "near-duplicate":
                j = rng.choice([j for j in range(i) if label[j] == "true"])
                src[i], tgt[i] = src[j].upper().rstrip(".") + " .", tgt[j].lower().replace(",", "")
            else:
                tgt[i] = tgt[i][: max(1, len(tgt[i]) // 3)]
    return src, tgt, label


def _words(text: str) -> int:
    return len(text.split())


def editorial(src: list[str], tgt: list[str], rng: random.Random, share: float = 0.4):
    """Other translations' habits on ``share`` of the pairs: [insertions], (clauses), "quotations", footnote*."""
    out_s, out_t = [], []
    for s, t in zip(src, tgt):
        if rng.random() < share:
            habit = rng.choice(("brackets", "parentheses", "quotes", "asterisk"))
            ws, wt = s.split(), t.split()
            if habit == "brackets" and len(ws) > 3:  # a translator's insertion, on the English side
                i = rng.randrange(1, len(ws) - 1)
                ws[i] = f"[{ws[i]}]"
            elif habit == "parentheses" and len(ws) > 4 and len(wt) > 4:
                for w in (ws, wt):
                    i = rng.randrange(1, len(w) - 2)
                    w[i], w[i + 1] = "(" + w[i], w[i + 1] + ")"
            elif habit == "quotes" and len(ws) > 3 and len(wt) > 3:
                for w in (ws, wt):
                    i = rng.randrange(1, len(w) - 1)
                    w[i], w[-1] = "\u201c" + w[i], w[-1] + "\u201d"
            else:  # a footnote mark on one word, one side or both
                i = rng.randrange(len(ws))
                ws[i] += "*"
                if rng.random() < 0.5:
                    j = rng.randrange(len(wt))
                    wt[j] += "*"
            s, t = " ".join(ws), " ".join(wt)
        out_s.append(s)
        out_t.append(t)
    return out_s, out_t


def _bible(split: str):
    from xlsent.data.bundled import load_bundled

    return load_bundled(f"bible-en-ny:{split}")


#: the UDHR languages of each split and source: the runs' languages, and the other-language noise (the udhr pool for
#: the Bible sources)
UDHR_POOL = {("udhr", "dev"): "udhr-dev", ("udhr", "test"): "udhr",
             ("udhr-all", "dev"): "udhr-all:dev", ("udhr-all", "test"): "udhr-all:test"}


def _others(split: str, exclude: set[str], source: str = "udhr") -> list[str]:
    from xlsent.data.bundled import load_bundled

    udhr = load_bundled(UDHR_POOL[source, split])
    return [t for t, lang in zip(udhr["tgt"], udhr["tgt_lang"]) if lang not in exclude]


def source_runs(name: str, split: str, n: int, rng: random.Random):
    """(run name, src, tgt, label, (src_lang, tgt_lang)) for one source; several runs for the UDHR (a language each)."""
    if name in ("bible", "editorial"):
        ds = _bible(split)
        rows = rng.sample(range(len(ds)), min(n, len(ds)))
        src, tgt = [ds[i]["src"] for i in rows], [ds[i]["tgt"] for i in rows]
        if name == "editorial":
            short = [i for i in range(len(ds)) if min(_words(ds[i]["src"]), _words(ds[i]["tgt"])) <= 5]
            extra = [i for i in short if i not in set(rows)]
            src += [ds[i]["src"] for i in extra]
            tgt += [ds[i]["tgt"] for i in extra]
            order = list(range(len(src)))
            rng.shuffle(order)
            src, tgt = [src[i] for i in order], [tgt[i] for i in order]
            src, tgt = editorial(src, tgt, rng)
        yield (name, *inject(src, tgt, _others(split, UDHR_OTHER), rng), ("en", "ny"))
    elif name in ("udhr", "udhr-all"):
        from xlsent.data.bundled import load_bundled, split_by_language

        for lang, part in split_by_language(load_bundled(UDHR_POOL[name, split])).items():
            others = _others(split, UDHR_OTHER | {lang}, name)
            yield (f"udhr:{lang}", *inject(list(part["src"]), list(part["tgt"]), others, rng), ("en", lang))
    elif name == "aligned":
        src, tgt = aligned_pairs(split)
        yield (name, *inject(src, tgt, _others(split, UDHR_OTHER), rng), ("en", "ny"))
    else:
        raise SystemExit(f"unknown source {name!r}: bible, editorial, udhr, udhr-all, aligned")


ALIGNED_BOOKS = {
    "dev": ("Joshua", "Ruth", "Ecclesiastes", "Lamentations", "Daniel", "Jonah", "Micah", "Malachi"),
    "test": ("Romans", "1 Corinthians", "2 Corinthians", "Galatians", "Ephesians", "Philippians", "Colossians",
             "1 Thessalonians", "2 Thessalonians", "1 Timothy", "2 Timothy", "Titus", "Philemon", "Hebrews", "James",
             "1 Peter", "2 Peter", "1 John", "2 John", "3 John", "Jude"),
}


def aligned_pairs(split: str) -> tuple[list[str], list[str]]:
    """Whole chapters of the split's books as raw text, split and aligned by xlsent.align (docs/your-language.sh's
    steps); cached, since the alignment does not depend on the filters."""
    import hashlib

    import xlsent
    from xlsent.data.bundled import load_bundled
    from xlsent.data.splitting import split_sentences
    from xlsent.utils.io import cache_dir, write_json_atomic

    key = hashlib.sha1(repr((split, ALIGNED_BOOKS[split], xlsent.__version__)).encode()).hexdigest()[:12]
    cache = cache_dir() / "bench" / f"aligned-{key}.json"
    if cache.exists():
        data = json.loads(cache.read_text(encoding="utf-8"))
        return data["src"], data["tgt"]
    ds = load_bundled("bible-en-ny:dev" if split == "dev" else "bible-en-ny:test")
    src, tgt = [], []
    for book in ALIGNED_BOOKS[split]:
        chapters: dict = {}
        for r in ds:
            if r["book"] == book:
                chapters.setdefault(r["chapter"], ([], []))
                chapters[r["chapter"]][0].append(r["src"])
                chapters[r["chapter"]][1].append(r["tgt"])
        for en, ny in chapters.values():
            s = [x for v in en for x in split_sentences(v, "en")]
            t = [x for v in ny for x in split_sentences(v, "ny")]
            for b in xlsent.align(s, t):
                if b.src_ids and b.tgt_ids:
                    src.append(" ".join(s[i] for i in b.src_ids))
                    tgt.append(" ".join(t[j] for j in b.tgt_ids))
    write_json_atomic(cache, {"books": ALIGNED_BOOKS[split], "src": src, "tgt": tgt})
    return src, tgt


def run(src, tgt, label, langs, preset: str | None = None) -> tuple[list[bool], dict]:
    """The filters of ``xlsent data filter-pairs`` (its defaults, or ``--preset``; ranking and the top N are left
    out): which pairs stay."""
    from datasets import Dataset

    from xlsent.api.mining import FILTER_PRESETS
    from xlsent.data.cleaning import SPECIAL_PATTERNS
    from xlsent.data.noise_filters import NOISE_FILTERS
    from xlsent.data.pair_filter import screen

    from xlsent.data.langid import pair_languages

    langs, _ = pair_languages(src, tgt, langs)  # the declared codes as the command normalises them (tha → th)
    default = FILTER_PRESETS[preset]
    pattern = SPECIAL_PATTERNS[default["special_pattern"]]
    ids = [f"{i}" for i in range(len(src))]
    kept, report, noise, _ = screen(Dataset.from_dict({"src": src, "tgt": tgt, "id": ids}), default["min_words"],
                                    pattern, NOISE_FILTERS, langs)
    alive = set(kept["id"])
    steps = {name: removed for name, removed, _ in report.steps if removed}
    steps.update({f.name: f.removed for f in (noise.filters if noise else []) if f.removed})
    return [i in alive for i in ids], steps


def summarise(name, src, tgt, label, keep, steps) -> dict:
    out = {"source": name, "pairs": len(src)}
    for kind in KINDS:
        idx = [i for i, x in enumerate(label) if x == kind]
        out[kind] = f"{sum(not keep[i] for i in idx)}/{len(idx)}"
    noise = [i for i, x in enumerate(label) if x in KINDS]
    true = [i for i, x in enumerate(label) if x == "true"]
    defects = [i for i, x in enumerate(label) if x == "defect"]
    out["source_defects_removed"] = [sum(not keep[i] for i in defects), len(defects)]
    out["noise_removed"] = [sum(not keep[i] for i in noise), len(noise)]
    # a true pair is lost when it is not in the output: a repeat of a pair that is kept (a verse such as "God forbid."
    # aligned the same way six times) is removed by the exact-duplicate step and lost nothing
    kept_pairs = {(src[i], tgt[i]) for i in range(len(src)) if keep[i]}
    first: dict = {}
    for i in true:  # each distinct true pair once
        first.setdefault((src[i], tgt[i]), i)
    true = sorted(first.values())
    out["true_removed"] = [sum((src[i], tgt[i]) not in kept_pairs for i in true), len(true)]
    out["filters"] = steps
    out["lost"] = [(src[i], tgt[i]) for i in true if (src[i], tgt[i]) not in kept_pairs]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="dev", choices=("dev", "test"))
    ap.add_argument("--sources", default="bible,editorial,udhr,udhr-all,aligned")
    ap.add_argument("--n", type=int, default=2000, help="Bible pairs drawn (bible, editorial)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default="", help="also write every figure here")
    ap.add_argument("--preset", default=None, choices=("paper",), help="the filters of --preset paper instead of "
                    "the defaults (its top 2,016 left out)")
    args = ap.parse_args()
    results = []
    for source in args.sources.split(","):
        rng = random.Random(args.seed)
        runs = [summarise(name, s, t, label, *run(s, t, label, langs, args.preset))
                for name, s, t, label, langs in source_runs(source, args.split, args.n, rng)]
        if len(runs) > 1:  # one figure for the source: every run's counts added
            total = {"source": source, "pairs": sum(r["pairs"] for r in runs), "languages": len(runs)}
            for kind in KINDS:
                a = [tuple(map(int, r[kind].split("/"))) for r in runs]
                total[kind] = f"{sum(x for x, _ in a)}/{sum(y for _, y in a)}"
            for key in ("noise_removed", "true_removed", "source_defects_removed"):
                total[key] = [sum(r[key][0] for r in runs), sum(r[key][1] for r in runs)]
            filters: dict = {}
            for r in runs:
                for k, v in r["filters"].items():
                    filters[k] = filters.get(k, 0) + v
            total["filters"] = filters
            total["lost"] = [(r["source"], *p) for r in runs for p in r["lost"]]
            total["worst_languages"] = sorted(((r["source"], r["true_removed"][0]) for r in runs if r["true_removed"][0]),
                                              key=lambda x: -x[1])[:8]
            runs = [total]
        results += runs
    print(f"split {args.split}, filters: {args.preset or 'the defaults'}; targets: noise removed ≥ 95%, true pairs "
          "removed ≤ 1%")
    print(f"{'source':<10} {'pairs':>6} " + " ".join(f"{k:>14}" for k in KINDS) + f" {'noise removed':>14} {'true removed':>16}")
    for r in results:
        nr, tr = r["noise_removed"], r["true_removed"]
        ok = "met" if nr[0] / nr[1] >= 0.95 and tr[0] / tr[1] <= 0.01 else "NOT met"
        print(f"{r['source']:<10} {r['pairs']:>6} " + " ".join(f"{r[k]:>14}" for k in KINDS)
              + f" {nr[0] / nr[1]:>13.1%} {tr[0] / tr[1]:>9.2%} ({tr[0]}/{tr[1]})  {ok}")
    for r in results:
        print(f"\n{r['source']}: filters {json.dumps(r['filters'])}")
        if r["source_defects_removed"][1]:
            print(f"  pairs broken in the source itself (a placeholder such as '&1' for a side), not counted above: "
                  f"{r['source_defects_removed'][0]} of {r['source_defects_removed'][1]} removed")
        if "worst_languages" in r:
            print(f"  true pairs lost by language: {r['worst_languages']}")
        for lost in r["lost"][:12]:
            print("  lost: " + " ||| ".join(re.sub(r"\s+", " ", x)[:80] for x in lost))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
