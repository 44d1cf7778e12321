#!/usr/bin/env python3
"""``xlsent mine --documents`` on real comparable text, scored by where the mined sentences come from.

    python benchmarks/mining/mining_real_text.py --src bible:eng --tgt bible:nya --books Mark [-m e5-small]
    python benchmarks/mining/mining_real_text.py --src udhr:eng --tgt udhr:zul

Both sides are bundled documents (:func:`xlsent.data.formats.documents.load_documents`; a document JSONL
works too): their sections (Bible chapters, UDHR articles) are split into sentences exactly as
``xlsent mine --documents`` does, and mined with ratio margin, k = 4, ``max`` mode. No sentence
alignment is known after splitting, but the section of every sentence is: a mined pair whose two
sentences come from the same section (same chapter, same article) is counted as plausible, one
that crosses sections as wrong. The same search results are also selected with plain cosine
(``absolute``, the peer: what one gets without LASER's margin), so the printed ratios compare
the two scores at equal numbers of pairs — the top 25/50/75/100% of the smaller side.
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace

import numpy as np

from xlsent.data.filters.cleaning import normalize_text
from xlsent.data.formats.documents import clean, load_documents
from xlsent.data.text.splitting import split_sentences
from xlsent.mining.job import MineConfig, MiningJob
from xlsent.mining.mine import document_sentences
from xlsent.models.registry import DEFAULT_MODEL


def sentences_with_sections(spec: str, books: set[str]):
    docs = [d for d in load_documents(spec) if not books or d.id in books]
    if not docs:
        raise SystemExit(f"{spec}: no document among --books {sorted(books)}")
    sents, report = document_sentences(docs, source=spec)
    where: dict[str, set[str]] = {}
    for d in docs:
        for s in d.sections:
            for t in split_sentences(clean(s.text), d.lang):
                where.setdefault(normalize_text(t), set()).add(f"{d.id}/{s.title}")
    sections = sum(len(d.sections) for d in docs)
    return sents, [where[t] for t in sents], report, sections


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default="udhr:eng")
    ap.add_argument("--tgt", default="udhr:zul")
    ap.add_argument("--books", default="", help="comma-separated document ids to keep (Bible books: Mark,Luke)")
    ap.add_argument("-m", "--model", default=DEFAULT_MODEL)
    ap.add_argument("--workdir", default="", help="keep the job here (default: a temporary folder)")
    a = ap.parse_args()
    books = {b.strip() for b in a.books.split(",") if b.strip()}
    src, src_where, src_report, n_sec = sentences_with_sections(a.src, books)
    tgt, tgt_where, tgt_report, _ = sentences_with_sections(a.tgt, books)
    for r in (src_report, tgt_report):
        print(f"{r.source}: {r.rows:,} sentences" + "".join(f"; skipped {n} ({why})" for why, n in r.skipped.items()))
    with tempfile.TemporaryDirectory() as tmp:
        job = MiningJob(a.workdir or tmp, src, tgt, a.model, MineConfig())
        job.run(show_progress=False)
        n_min = min(len(src), len(tgt))
        print(f"{n_sec} sections; a random pair shares one with probability ≈ {1 / n_sec:.3f}")
        print("top pairs (share of the smaller side; capped by the pairs mined) | same-section share: ratio margin | plain cosine | ratio")
        results = {}
        for margin in ("ratio", "absolute"):
            job.cfg = replace(job.cfg, margin=margin)
            pairs = job.select()
            same = np.array([bool(src_where[i] & tgt_where[j]) for i, j in zip(pairs.src, pairs.tgt)])
            results[margin] = (pairs, same)
        for frac in (0.25, 0.5, 0.75, 1.0):
            n = min(int(frac * n_min), *(len(results[m][1]) for m in results))
            r, c = (results[m][1][:n].mean() if n else float("nan") for m in ("ratio", "absolute"))
            print(f"{n:>6} ({frac:>4.0%}) | {r:.3f} | {c:.3f} | {r / c:.2f}×")
        pairs, same = results["ratio"]
        print("best-scored pairs (ratio margin):")
        for i in range(min(3, len(pairs))):
            print(f"  {pairs.score[i]:.3f} {'ok ' if same[i] else 'X  '} {src[pairs.src[i]][:70]!r} ↔ "
                  f"{tgt[pairs.tgt[i]][:70]!r}")


if __name__ == "__main__":
    main()
