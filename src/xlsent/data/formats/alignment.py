"""Sentence alignments of translated documents: the block type, the two file formats, document and batch-list
readers, and the bundled gold (``bible-align``).

Formats (ids 0-based; a block with one side empty is a deletion):

* **TSV** (xlsent's): ``src_ids<TAB>tgt_ids<TAB>score<TAB>src_text<TAB>tgt_text``, ids comma-separated;
* **vecalign**: ``[0, 1]:[2]:0.231`` — Vecalign's own output and gold format.

Either is read back by :func:`read_alignment` (the format is told by the first character of each line).

``bible-align`` gold is built from the bundled New Testament (``bible-en-ny:test``; the development variant
``bible-align:dev`` from the ``bible-en-ny:dev`` books): each chapter is a document; on both sides each verse is
split into sentences with xlsent's splitter, so a verse whose two sides split into different numbers of
sentences is a real 1-N or N-M block; a verse split into as many sentences on both sides is taken as that many
1-1 blocks, in order (an assumption: the gold is verse-level, so a sentence boundary that falls elsewhere on one
side is not known — the gold is silver in that respect). The ``…-deletions`` variants remove 5% of the verses from one side (the
side drawn per verse, seed 0): each removed verse's sentences on the other side become 1-0 (or 0-1) blocks.
"""

from __future__ import annotations

import ast
import random
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from xlsent.data.formats.readers import read_lines
from xlsent.utils.errors import InputFormatError, XlsentError
from xlsent.utils.io import write_text_atomic

FORMATS = ("tsv", "vecalign")
BIBLE_ALIGN = ("bible-align", "bible-align:deletions", "bible-align:dev", "bible-align:dev-deletions")
DELETED_VERSES = 0.05


@dataclass
class Alignment:
    """Blocks of one document pair, in order: sentence ids on each side and a score (lower is better)."""

    src: list[list[int]]
    tgt: list[list[int]]
    score: list[float] = field(default_factory=list)

    def blocks(self) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        return [(tuple(s), tuple(t)) for s, t in zip(self.src, self.tgt)]

    def types(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s, t in zip(self.src, self.tgt):
            key = f"{len(s)}-{len(t)}"
            out[key] = out.get(key, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


@dataclass
class DocumentPair:
    name: str
    src: list[str]
    tgt: list[str]
    gold: Alignment | None = None


def _ids(ids: list[int]) -> str:
    return ",".join(map(str, ids))


def format_alignment(a: Alignment, src: list[str] | None = None, tgt: list[str] | None = None,
                     fmt: str = "tsv") -> str:
    scores = a.score or [0.0] * len(a.src)
    lines = []
    for s, t, c in zip(a.src, a.tgt, scores):
        if fmt == "vecalign":
            lines.append(f"{list(s)}:{list(t)}:{c:.6f}")
        else:
            st = " ".join(src[i] for i in s) if src is not None else ""
            tt = " ".join(tgt[j] for j in t) if tgt is not None else ""
            lines.append(f"{_ids(s)}\t{_ids(t)}\t{c:.6f}\t{st}\t{tt}")
    return "".join(line + "\n" for line in lines)


def write_alignment(path: str | Path, a: Alignment, src: list[str] | None = None, tgt: list[str] | None = None,
                    fmt: str = "tsv") -> None:
    if fmt not in FORMATS:
        raise XlsentError(f"unknown alignment format '{fmt}': use one of {', '.join(FORMATS)}")
    write_text_atomic(path, format_alignment(a, src, tgt, fmt))


def _parse_ids(path: Path, n: int, text: str, fix: str) -> list[int]:
    text = text.strip()
    try:
        ids = [int(x) for x in text.split(",")] if text else []
    except ValueError:
        raise InputFormatError(path, n, f"sentence ids '{text}' are not comma-separated integers", fix) from None
    if any(i < 0 for i in ids):
        raise InputFormatError(path, n, f"negative sentence id in '{text}'", fix)
    return ids


def read_alignment(path: str | Path) -> Alignment:
    """An alignment file in either format (vecalign's ``[..]:[..]:score`` or xlsent's TSV), one block a line."""
    path = Path(path)
    out = Alignment([], [], [])
    fix = "one block a line: 'SRC_IDS<TAB>TGT_IDS<TAB>SCORE…' or vecalign's '[0, 1]:[2]:0.23'"
    for n, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        if line.lstrip().startswith("["):
            parts = line.strip().split(":")
            try:
                s, t = (ast.literal_eval(p) for p in parts[:2])
                if not (isinstance(s, list) and isinstance(t, list) and all(isinstance(i, int) for i in s + t)):
                    raise ValueError
            except (ValueError, SyntaxError):
                raise InputFormatError(path, n, "not a vecalign block", fix) from None
            score = parts[2] if len(parts) > 2 else "0"
        else:
            cols = line.split("\t")
            if len(cols) < 2:
                raise InputFormatError(path, n, "expected at least two tab-separated columns of ids", fix)
            s, t = _parse_ids(path, n, cols[0], fix), _parse_ids(path, n, cols[1], fix)
            score = cols[2] if len(cols) > 2 else "0"
        if not s and not t:
            raise InputFormatError(path, n, "a block with no sentence on either side", fix)
        try:
            out.score.append(float(score))
        except ValueError:
            raise InputFormatError(path, n, f"score '{score}' is not a number", fix) from None
        out.src.append(s)
        out.tgt.append(t)
    return out


def read_document(path: str | Path) -> list[str]:
    """A document of one sentence per line (vecalign's convention); blank lines are refused."""
    path = Path(path)
    if not path.exists():
        raise XlsentError(f"{path}: no such file — check the path")
    if path.is_file() and not path.read_bytes().strip():
        raise InputFormatError(path, None, "the document is empty", "give a file with one sentence per line")
    lines = read_lines(path)
    for n, line in enumerate(lines, 1):
        if not line.strip():
            raise InputFormatError(path, n, "blank line in a one-sentence-a-line document",
                                   "remove it (or give raw text with --split SRC,TGT)")
    return [line.strip() for line in lines]


def read_raw_document(path: str | Path, lang: str) -> list[str]:
    """A document of raw text split into sentences with xlsent's splitter (:mod:`xlsent.data.text.splitting`)."""
    from xlsent.data.text.splitting import split_sentences

    path = Path(path)
    if not path.exists():
        raise XlsentError(f"{path}: no such file — check the path")
    sentences = [s for line in read_lines(path) for s in split_sentences(line, lang)]
    if not sentences:
        raise InputFormatError(path, None, "the document has no sentence", "give a non-empty document")
    return sentences


def read_batch(path: str | Path) -> list[tuple[Path, Path]]:
    """A batch list: one ``src<TAB>tgt`` pair of document paths a line (relative paths from the list's folder);
    every file is checked here, so a missing one is reported before any model loads."""
    path = Path(path)
    out = []
    for n, line in enumerate(read_lines(path), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cols = line.rstrip("\r").split("\t")
        if len(cols) != 2:
            raise InputFormatError(path, n, f"expected 'SRC_FILE<TAB>TGT_FILE', found {len(cols)} column(s)",
                                   "one document pair a line, the two paths separated by a tab")
        pair = tuple(p if p.is_absolute() else path.parent / p for p in map(Path, cols))
        for p in pair:
            if not p.is_file():
                raise InputFormatError(path, n, f"{p}: no such file", "fix the path (relative paths are read "
                                       "from the list's folder)")
        out.append(pair)
    if not out:
        raise InputFormatError(path, None, "the batch list names no document pair", "one 'SRC<TAB>TGT' a line")
    return out


def bible_align(name: str) -> list[DocumentPair]:
    """The bundled alignment gold (module docstring): one :class:`DocumentPair` a chapter, with its gold blocks."""
    from xlsent.data.sets.bundled import load_bundled
    from xlsent.data.text.splitting import split_sentences

    if name not in BIBLE_ALIGN:
        raise XlsentError(f"unknown alignment dataset '{name}': use one of {', '.join(BIBLE_ALIGN)}")
    dev = ":dev" in name
    deletions = name.endswith("deletions")
    ds = load_bundled("bible-en-ny:dev" if dev else "bible-en-ny:test")
    chapters: dict[str, list[dict]] = {}
    for row in ds:
        chapters.setdefault(f"{row['book']} {row['chapter']}", []).append(row)
    rng = random.Random(0)
    docs = []
    for chapter, verses in chapters.items():
        src, tgt, gold = [], [], Alignment([], [], [])
        for v in verses:
            s = split_sentences(v["src"], "en") or [v["src"]]
            with warnings.catch_warnings():  # sentencex has no Chichewa rules: the punctuation splitter, as intended
                warnings.simplefilter("ignore")
                t = split_sentences(v["tgt"], "ny") or [v["tgt"]]
            drop = rng.random() < DELETED_VERSES if deletions else False
            side = rng.choice(("src", "tgt")) if drop else None
            s_ids = list(range(len(src), len(src) + len(s))) if side != "src" else []
            t_ids = list(range(len(tgt), len(tgt) + len(t))) if side != "tgt" else []
            if side != "src":
                src.extend(s)
            if side != "tgt":
                tgt.extend(t)
            if side is None and len(s_ids) == len(t_ids):  # as many sentences on both sides: taken 1-1, in order
                gold.src.extend([i] for i in s_ids)
                gold.tgt.extend([j] for j in t_ids)
            elif side is None:
                gold.src.append(s_ids)
                gold.tgt.append(t_ids)
            else:  # the verse is on one side only: each of its sentences is a deletion
                for i in s_ids:
                    gold.src.append([i])
                    gold.tgt.append([])
                for j in t_ids:
                    gold.src.append([])
                    gold.tgt.append([j])
        gold.score = [0.0] * len(gold.src)
        docs.append(DocumentPair(chapter, src, tgt, gold))
    return docs
