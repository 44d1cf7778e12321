"""CoNLL / WikiANN-style token files: one ``token<TAB or SPACE>tag`` per line, a blank line between sentences.

The token is the first column and the tag the last (``tag_column`` picks another, e.g. column 1 of
the bundled silver files ``token UPOS NER``). ``-DOCSTART-`` lines are document markers and are
skipped; a gzipped file (``.gz``) is read the same way.

Tag schemes (``scheme``):

* ``"iob2"`` (also called BIO; the default for NER): every entity starts with ``B-``. An ``I-X``
  that does not continue an entity of type X (after ``O``, at the start of a sentence, or after
  another type) is repaired to ``B-X`` and counted — or, with ``strict=True``, is an error naming
  the line.
* ``"iob1"`` (the original CoNLL-2003 scheme: ``I-`` starts entities, ``B-`` only separates two
  adjacent entities of one type): read and converted to IOB2. Nothing is counted as a repair.
* ``"plain"`` (POS and other per-token labels): any tag; ``_`` marks a token without a label
  (ignored in training and in accuracy, e.g. a silver POS tag that could not be projected).

A NER file with a tag of another scheme (``E-``, ``S-``, ``L-``, ``U-`` of BIOES/BILOU, or a bare
label such as ``PER``) is an error naming the line, as is a line without a tag and an empty token.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Literal

from xlsent.data.formats.text_source import decode_line
from xlsent.utils.errors import InputFormatError, XlsentError
from xlsent.utils.io import write_text_atomic

Scheme = Literal["iob2", "iob1", "plain"]
SCHEMES = ("iob2", "iob1", "plain")
UNLABELLED = "_"
_OTHER_SCHEMES = ("E-", "S-", "L-", "U-")


@dataclass
class TaggedCorpus:
    """Sentences of tokens with one tag each; ``lines[i]`` is the 1-based line where sentence i starts."""

    tokens: list[list[str]]
    tags: list[list[str]]
    lines: list[int] = field(default_factory=list)
    path: str = ""
    repairs: int = 0  # I- after O (or at a sentence start, or after another type) repaired to B-
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.tokens)

    def labels(self) -> list[str]:
        """Entity types (``PER``, ``LOC`` …) for BIO tags, or the tags themselves for plain files; sorted."""
        out = set()
        for sent in self.tags:
            for t in sent:
                if t != UNLABELLED:
                    out.add(t[2:] if t[:2] in ("B-", "I-") else t)
        out.discard("O")
        return sorted(out)

    def tag_set(self) -> list[str]:
        """Every tag that occurs (``_`` excluded), ``O`` first, then sorted."""
        seen = {t for sent in self.tags for t in sent if t != UNLABELLED}
        return (["O"] if "O" in seen else []) + sorted(seen - {"O"})

    def subset(self, index: Iterable[int]) -> "TaggedCorpus":
        idx = list(index)
        return TaggedCorpus([self.tokens[i] for i in idx], [self.tags[i] for i in idx],
                            [self.lines[i] for i in idx] if self.lines else [], self.path)


def _text_lines(path: Path) -> Iterator[str]:
    """The file's lines (``.gz`` too), each decoded on its own: a line that is not UTF-8 (or holds a NUL byte) is
    an error naming the file and the line, not a traceback."""
    with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as f:
        for n, raw in enumerate(f, 1):
            yield decode_line(path, raw.rstrip(b"\n"), n)


def check_tag(tag: str, scheme: Scheme, path: str | Path, line: int) -> None:
    """Raise on a tag the scheme cannot hold (see the module docstring)."""
    if scheme == "plain":
        return
    if tag == "O":
        return
    if tag[:2] in ("B-", "I-") and len(tag) > 2:
        return
    if tag[:2] in _OTHER_SCHEMES:
        raise InputFormatError(path, line, f"tag {tag!r} belongs to the BIOES/BILOU scheme, not BIO",
                               "convert the file to BIO/IOB2 (S-X → B-X, E-X → I-X, U-X → B-X, L-X → I-X)")
    raise InputFormatError(path, line, f"tag {tag!r} is not O, B-TYPE or I-TYPE (unknown tag scheme)",
                           "use BIO/IOB2 tags for NER, or --scheme plain for POS-style tags")


def repair_iob(tags: list[str], scheme: Scheme, strict: bool, path: str | Path, first_line: int) -> tuple[list[str], int]:
    """Convert IOB1 to IOB2, or repair IOB2's stray ``I-`` (counted; an error when ``strict``)."""
    out, repairs, prev = [], 0, "O"
    for k, tag in enumerate(tags):
        if tag.startswith("I-") and (prev == "O" or prev[2:] != tag[2:]):
            if scheme == "iob2":
                if strict:
                    raise InputFormatError(path, first_line + k, f"{tag} follows {prev} (an I- tag must continue an "
                                           "entity of its type)", f"write B-{tag[2:]}, or drop --strict to repair it")
                repairs += 1
            tag = "B-" + tag[2:]
        out.append(tag)
        prev = tag
    return out, repairs


def read_conll(path: str | Path, scheme: Scheme = "iob2", tag_column: int = -1, strict: bool = False) -> TaggedCorpus:
    """Read a CoNLL-style file (see the module docstring); every problem names the file and line."""
    path = Path(path).expanduser()
    if scheme not in SCHEMES:
        raise XlsentError(f"unknown tag scheme {scheme!r}: use one of {', '.join(SCHEMES)}")
    if not path.is_file():
        raise XlsentError(f"{path}: no such file — check the path")
    corpus = TaggedCorpus([], [], [], str(path))
    toks: list[str] = []
    tags: list[str] = []
    start = 0

    def flush() -> None:
        nonlocal toks, tags
        if toks:
            fixed, n = (repair_iob(tags, scheme, strict, path, start) if scheme != "plain" else (tags, 0))
            corpus.tokens.append(toks)
            corpus.tags.append(fixed)
            corpus.lines.append(start)
            corpus.repairs += n
        toks, tags = [], []

    for n, line in enumerate(_text_lines(path), 1):
        if not line.strip():
            flush()
            continue
        if line.startswith("-DOCSTART-"):
            flush()
            continue
        cols = line.split("\t") if "\t" in line else line.split()
        if len(cols) < 2:
            raise InputFormatError(path, n, f"no tag on this line ({line.strip()[:40]!r})",
                                   "write token<TAB>tag, and a blank line between sentences")
        try:
            tag = cols[tag_column].strip()
        except IndexError:
            raise InputFormatError(path, n, f"no column {tag_column} (the line has {len(cols)})",
                                   "choose the tag column with --tag-column") from None
        token = cols[0].strip()
        if not token:
            raise InputFormatError(path, n, "empty token", "every line needs a token in its first column")
        if not tag:
            raise InputFormatError(path, n, "empty tag", "every token needs a tag (O outside entities)")
        check_tag(tag, scheme, path, n)
        if not toks:
            start = n
        toks.append(token)
        tags.append(tag)
    flush()
    if not corpus.tokens:
        raise InputFormatError(path, None, "no sentences", "give token<TAB>tag lines, a blank line between sentences")
    if corpus.repairs:
        corpus.notes.append(f"{path}: {corpus.repairs} I- tag(s) that did not continue an entity repaired to B- "
                            "(use --strict to make this an error)")
    return corpus


def format_conll(tokens: list[list[str]], *columns: list[list[str]]) -> str:
    """CoNLL text: ``token<TAB>col1<TAB>col2…`` per line, a blank line after each sentence."""
    out = []
    for i, sent in enumerate(tokens):
        for k, tok in enumerate(sent):
            out.append("\t".join([tok, *(c[i][k] for c in columns)]))
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def write_conll(path: str | Path, tokens: list[list[str]], *columns: list[list[str]]) -> None:
    """Write a CoNLL file atomically (gzipped when the name ends in ``.gz``)."""
    for i, sent in enumerate(tokens):
        for c in columns:
            if len(c[i]) != len(sent):
                raise XlsentError(f"sentence {i}: {len(sent)} tokens but {len(c[i])} tags")
        for tok in sent:
            if not tok or any(ch in tok for ch in "\t\n") or tok != tok.strip():
                raise XlsentError(f"sentence {i}: token {tok!r} is empty or holds a tab, newline or edge space")
    text = format_conll(tokens, *columns)
    path = Path(path)
    if path.suffix == ".gz":
        from xlsent.utils.io import write_bytes_atomic

        write_bytes_atomic(path, gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        write_text_atomic(path, text)
