#!/usr/bin/env python3
"""Mining a crawl in a language CLD2 does not know, where the noise is a related language (issue 61, §2): mined-pair
precision with and without the n-gram identifier's check.

    python benchmarks/clean_pairs/mine_related.py --split dev              # choosing (udhr-all:dev languages)
    python benchmarks/clean_pairs/mine_related.py --split test             # reported once (udhr-all:test languages)

For each ``udhr-all`` language of the split that CLD2 does not know and that has a neighbour (the other language of
the same script and another macrolanguage whose character n-grams are most alike:
``filter_noise.neighbours``) — every ``--every``-th of them, in code order — a comparable corpus:

* source: the English of every UDHR unit of the language;
* target: the language's own paragraph for half of the units (alternate units), and for the other half the
  neighbour's translation of that unit — a true translation into the related language, which a multilingual
  encoder cannot tell from a translation into the declared one. That is the crawl the issue describes: the same
  text in the neighbouring language is the main noise.

``xlsent.mine`` (the default model, ``threshold="auto"``, no filters) mines each corpus; then the language filter of
``xlsent mine --filters`` judges the mined pairs twice: **without the check** — as before issue 61, for a language
CLD2 does not know only the side's own vocabulary is checked (an identifier that knows none of these languages) —
and **with it** — the n-gram identifier (cross-fitted as in ``filter_noise.py``: each UDHR paragraph judged by a
model that never saw it). Printed: mined pairs, precision (a mined pair is right when its target is the language's
own paragraph of that unit), recall of the language's own units, and the wrong-language pairs left, summed over the
languages and per language for the worst.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import filter_noise  # noqa: E402  (the neighbours and the cross-fitted identifier)


def corpora(split: str, every: int):
    """(language, neighbour, English units, target lines, gold {target line: unit index}) per chosen language."""
    from xlsent.data.langid import detectable_macros, macro
    from xlsent.data.sets.bundled import load_bundled, split_by_language

    neighbours = filter_noise.neighbours()
    by_lang = filter_noise._udhr_by_language()
    parts = split_by_language(load_bundled(f"udhr-all:{split}"))
    langs = sorted(lang for lang in parts if macro(lang) not in detectable_macros() and lang in neighbours)
    for lang in langs[::every]:
        part, other = parts[lang], by_lang[neighbours[lang]]
        src, tgt, gold = [], [], {}
        for k, (uid, en, own) in enumerate(zip(part["id"], part["src"], part["tgt"])):
            if k % 2 == 0 or uid not in other:
                gold[own] = len(src)
                tgt.append(own)
            else:
                tgt.append(other[uid])
            src.append(en)
        yield lang, neighbours[lang], src, tgt, gold


def score(pairs, src, gold) -> dict:
    index = {s: i for i, s in enumerate(src)}
    right = sum(t in gold and gold[t] == index.get(s) for s, t in pairs)
    wrong_language = sum(t not in gold for _, t in pairs)
    return {"mined": len(pairs), "right": right, "wrong_language": wrong_language, "gold": len(gold)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="dev", choices=("dev", "test"))
    ap.add_argument("--every", type=int, default=4, help="every N-th eligible language, in code order")
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--json", default="", help="also write every figure here")
    args = ap.parse_args()

    import xlsent
    from xlsent.data.filters.noise_filters import apply_noise_filters
    from xlsent.data.langid import pair_languages
    from xlsent.data.langid.ngram import NgramIdentifier

    checked = filter_noise.cross_fitted()
    rows = []
    t0 = time.perf_counter()
    for lang, neighbour, src, tgt, gold in corpora(args.split, args.every):
        mined = [(s, t) for _, s, t in xlsent.mine(src, tgt, model=args.model, threshold="auto", filters="none").pairs]
        row = {"lang": lang, "neighbour": neighbour, "units": len(src)}
        if mined:
            s, t = [p[0] for p in mined], [p[1] for p in mined]
            langs, _ = pair_languages(s, t, ("en", lang))
            blind = NgramIdentifier.learn({"eng": s})  # knows none of these languages: the check as before
            for name, identifier in (("without", blind), ("with", checked)):
                keep, _ = apply_noise_filters(s, t, langs, ("language",), identifier=identifier)
                row[name] = score([p for p, k in zip(mined, keep) if k], src, gold)
        else:
            row["without"] = row["with"] = score([], src, gold)
        row["mined"] = score(mined, src, gold)
        rows.append(row)
        print(f"{lang} (neighbour {neighbour}): mined {row['mined']['mined']}, right {row['mined']['right']}; "
              f"without the check {row['without']['right']}/{row['without']['mined']}, with it "
              f"{row['with']['right']}/{row['with']['mined']}", flush=True)
    print(f"\n{len(rows)} languages of udhr-all:{args.split} unknown to CLD2, each with its neighbour's translations "
          f"for half its units; {time.perf_counter() - t0:.0f} s")
    print(f"{'':<24} {'pairs':>6} {'precision':>10} {'recall':>8} {'wrong-language pairs':>22}")
    for name, label in (("mined", "mined (no filter)"), ("without", "language filter, before"),
                        ("with", "language filter, n-gram")):
        mined = sum(r[name]["mined"] for r in rows)
        right = sum(r[name]["right"] for r in rows)
        gold = sum(r[name]["gold"] for r in rows)
        wrong = sum(r[name]["wrong_language"] for r in rows)
        print(f"{label:<24} {mined:>6} {right / max(1, mined):>10.1%} {right / max(1, gold):>8.1%} {wrong:>22}")
    worst = sorted(rows, key=lambda r: -r["with"]["wrong_language"])[:8]
    print("most wrong-language pairs left with the check: " + ", ".join(
        f"{r['lang']} ({r['neighbour']}) {r['with']['wrong_language']}" for r in worst if r["with"]["wrong_language"]))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
