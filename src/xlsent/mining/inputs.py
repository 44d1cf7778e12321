"""One side of a mining job: a text file, one sentence per line, de-duplicated without holding it in one process.

A crawl is mined from files of hundreds of millions of lines, so no step may read every sentence into one
process. The file is read once to find each line's byte offset (kept in the work folder); then one task per
block of lines (:class:`HashTask`, run by the job's engine, here or on a cluster) normalises each line (NFC,
whitespace collapsed, :func:`xlsent.data.filters.cleaning.normalize_text`) and writes a 16-byte BLAKE2b digest of it
(zeros for a blank line). One reduce step here keeps the first line of every digest, in input order
(:func:`unique_lines`): 16 bytes a line, not the text. The sentences are read back by line number when a
shard is encoded and when the pairs are written.

These are the sentences :func:`xlsent.data.formats.readers.read_sentences` keeps (the same normalisation, first
occurrences in file order); two different sentences are taken for one only if their 128-bit digests collide.

Layout, in ``folder`` (``NAME`` is ``src`` or ``tgt``)::

    NAME.offsets           each line's byte offset in the input file
    dedupe/NAME-…/00000.npy   the digests of one block of lines (removed once reduced)
    NAME.rows.npy          the line numbers of the unique sentences, in input order
    NAME.json              the input file (path, size, modification time), line counts, and the sentences' digest
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from xlsent.data.filters.cleaning import normalize_text
from xlsent.data.formats.readers import ReadReport
from xlsent.data.formats.text_source import line_offsets, read_lines_at, read_lines_range
from xlsent.utils.errors import InputFormatError, XlsentError
from xlsent.utils.io import atomic_path, write_json_atomic

DIGEST_BYTES = 16
BLANK = np.zeros(1, dtype=f"V{DIGEST_BYTES}")[0]


def digest(text: str) -> bytes:
    """The digest of one normalised sentence (all zeros for a blank one)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=DIGEST_BYTES).digest() if text else bytes(DIGEST_BYTES)


@dataclass(frozen=True)
class HashTask:
    """Digests of lines [start, stop) of ``texts`` → ``out`` (.npy of 16-byte values, one per line)."""

    texts: Path
    offsets: Path
    start: int
    stop: int
    out: Path

    def done(self) -> bool:
        return self.out.exists()

    def run(self, cache: dict | None = None) -> None:
        lines = read_lines_range(self.texts, self.start, self.stop, self.offsets)
        values = np.frombuffer(b"".join(digest(normalize_text(t)) for t in lines), dtype=f"V{DIGEST_BYTES}")
        with atomic_path(self.out, "the lines' digests (finding repeats)", resumes=True) as tmp:
            with open(tmp, "wb") as f:
                np.save(f, values)


def unique_lines(digests: np.ndarray) -> tuple[np.ndarray, int, int]:
    """The reduce step: (line numbers of each digest's first line, in input order, blanks left out; blank lines;
    repeated lines)."""
    _, first = np.unique(digests, return_index=True)
    first = np.sort(first)
    first = first[digests[first] != BLANK]
    blank = int((digests == BLANK).sum())
    return first.astype(np.int64), blank, len(digests) - blank - len(first)


@dataclass(frozen=True)
class SideInput:
    """A de-duplicated input file: its unique sentences are lines ``rows`` of ``path``."""

    name: str
    path: Path
    offsets: Path
    rows: Path
    lines: int
    blank: int
    repeats: int
    sentences: str  # digest of the unique sentences in order (names them in the job's record)

    def __len__(self) -> int:
        return self.lines - self.blank - self.repeats

    def line_numbers(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        return np.asarray(np.load(self.rows, mmap_mode="r")[start:stop])

    def texts(self, index) -> list[str]:
        """The unique sentences numbered ``index`` (0 … len − 1), normalised."""
        numbers = np.load(self.rows, mmap_mode="r")[np.asarray(index, dtype=np.int64)]
        return [normalize_text(t) for t in read_lines_at(self.path, numbers, self.offsets)]

    def report(self) -> ReadReport:
        """What :func:`xlsent.data.formats.readers.read_sentences` reports for the same file."""
        skipped = {"blank line": self.blank, "exact repeat of an earlier line": self.repeats}
        return ReadReport(str(self.path), len(self), Counter({k: v for k, v in skipped.items() if v}))


def deduplicate(path: str | Path, folder: str | Path, name: str, block: int = 50_000, engine=None,
                advance=lambda: None) -> SideInput:
    """``path`` (one sentence per line) read once for its line offsets, its blocks hashed on ``engine`` (default
    here), the first lines of every sentence kept; reused when ``folder`` already holds it for the same file."""
    from xlsent.mining.engine import LocalEngine

    path, folder = Path(path).absolute(), Path(folder).absolute()  # a worker may start in another folder
    if not path.exists():
        raise XlsentError(f"{path}: no such file — check the path")
    if path.is_dir():
        raise XlsentError(f"{path}: is a folder, expected a file")
    stat = path.stat()
    source = {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "block": block}
    record = folder / f"{name}.json"
    if record.exists():
        old = json.loads(record.read_text())
        if old.get("source") == source:
            return SideInput(**{**old["input"], "path": path, "offsets": Path(old["input"]["offsets"]),
                                "rows": Path(old["input"]["rows"])})
    folder.mkdir(parents=True, exist_ok=True)
    offsets = folder / f"{name}.offsets"
    n = len(line_offsets(path, offsets)) - 1
    # the blocks' digests, in a folder of this version of the file: a stopped run resumes from its finished blocks
    parts = folder / "dedupe" / f"{name}-{hashlib.sha1(json.dumps(source).encode()).hexdigest()[:12]}"
    tasks = [HashTask(path, offsets, a, min(n, a + block), parts / f"{a // block:05d}.npy") for a in range(0, n, block)]
    (engine if engine is not None else LocalEngine()).compute([t for t in tasks if not t.done()], advance)
    digests = np.concatenate([np.load(t.out) for t in tasks]) if tasks else np.zeros(0, f"V{DIGEST_BYTES}")
    rows, blank, repeats = unique_lines(digests)
    if not len(rows):
        raise InputFormatError(path, None, "no sentence in the input", "give one sentence per line")
    rows_path = folder / f"{name}.rows.npy"
    with atomic_path(rows_path, "the input's unique lines", resumes=True) as tmp:
        with open(tmp, "wb") as f:
            np.save(f, rows)
    side = SideInput(name, path, offsets, rows_path, n, blank, repeats,
                     hashlib.sha1(digests[rows].tobytes()).hexdigest()[:16])
    write_json_atomic(record, {"source": source, "input": {**asdict(side), "path": str(path), "offsets": str(offsets),
                                                           "rows": str(rows_path)}})
    shutil.rmtree(parts, ignore_errors=True)
    return side
