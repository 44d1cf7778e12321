"""Texts to embed, read by row range: one text per line, TSV, JSONL or Parquet.

A large corpus is embedded in shards (row ranges) by workers that may sit on other machines, so a shard must
read its rows without the rest of the file: line-based files keep each line's byte offset beside them
(:func:`line_offsets`, one pass, then a seek per shard); Parquet is read by row groups. A source is checked when
it is opened (the file, the named columns), so a wrong column is one line before any model loads; a blank
text is an error naming its row (it would shift the rows).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlsent.utils.errors import InputFormatError, XlsentError, named
from xlsent.utils.io import atomic_path
from xlsent.utils.text import FIX as NOT_UNICODE_FIX
from xlsent.utils.text import unencodable_problem

KINDS = ("lines", "tsv", "jsonl", "parquet")


def line_offsets(path: Path, cache: Path | None = None) -> np.ndarray:
    """The byte offset of every line's start, then the file's size (lines + 1 values), found in one pass over the
    file and kept in ``cache`` (default beside it, ``PATH.offsets``; a NumPy array, read back memory-mapped), so
    that a shard seeks to its lines instead of rescanning the file from its first line."""
    path = Path(path)
    cache = Path(cache) if cache is not None else path.with_name(path.name + ".offsets")
    if cache.exists() and cache.stat().st_mtime_ns >= path.stat().st_mtime_ns:
        return np.load(cache, mmap_mode="r")
    ends, base = [np.zeros(1, dtype=np.int64)], 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            ends.append(np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10).astype(np.int64) + base + 1)
            base += len(chunk)
    offsets = np.concatenate(ends)
    if offsets[-1] != base:  # a last line without its newline
        offsets = np.append(offsets, base)
    with atomic_path(cache) as tmp:
        with open(tmp, "wb") as f:
            np.save(f, offsets)
    return offsets


def decode_line(path: Path, line: bytes, number: int) -> str:
    """One line (without its newline) as text; invalid UTF-8 or a NUL byte (no text holds one: a binary file, a
    broken copy) is an error naming the file and the line (1-based)."""
    nul = line.find(b"\0")
    if nul >= 0:
        raise InputFormatError(path, number, f"a NUL byte (byte {nul + 1} of the line): binary or corrupt data",
                               "check that this is the text file you meant, or remove the NUL bytes")
    try:
        return line.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError as e:
        raise InputFormatError(path, number, f"invalid UTF-8 (byte {e.start + 1} of the line)",
                               "re-encode the file as UTF-8 (e.g. iconv -t UTF-8)") from None


def load_json_line(line: str) -> tuple[object, str | None]:
    """``(value, None)`` for a line of JSON, or ``(None, problem)``: invalid JSON, and JSON that Python cannot
    hold (nesting too deep, a number of thousands of digits) — never another exception."""
    try:
        return json.loads(line), None
    except json.JSONDecodeError as e:
        return None, f"invalid JSON ({e.msg})"
    except RecursionError:
        return None, "invalid JSON (nested too deeply)"
    except ValueError:  # e.g. an integer over Python's digit limit
        return None, "invalid JSON (a value Python cannot hold)"


def read_lines_range(path: Path, start: int, stop: int, cache: Path | None = None) -> list[str]:
    """Lines [start, stop) of a UTF-8 file, read from their stored byte offsets (``cache``: see :func:`line_offsets`)."""
    offsets = line_offsets(path, cache)
    stop = min(stop, len(offsets) - 1)
    if start >= stop:
        return []
    with open(path, "rb") as f:
        f.seek(int(offsets[start]))
        data = f.read(int(offsets[stop] - offsets[start]))
    lines = data.split(b"\n")  # only "\n" ends a line (a sentence may hold U+2028 or a form feed)
    lines = lines[:-1] if data.endswith(b"\n") else lines
    return [decode_line(path, x, i) for i, x in enumerate(lines, start + 1)]


def read_lines_at(path: Path, numbers, cache: Path | None = None, gap: int = 64) -> list[str]:
    """The lines numbered ``numbers`` (0-based, any order, repeats allowed), read by their byte offsets; lines at
    most ``gap`` apart come in one read."""
    offsets = line_offsets(path, cache)
    numbers = np.asarray(numbers, dtype=np.int64)
    order = np.argsort(numbers, kind="stable")
    wanted = numbers[order]
    out: list[str] = [""] * len(numbers)
    breaks = np.flatnonzero(np.diff(wanted) > gap) + 1
    with open(path, "rb") as f:
        for run in np.split(np.arange(len(wanted)), breaks):
            if not len(run):
                continue
            first, last = int(wanted[run[0]]), int(wanted[run[-1]])
            f.seek(int(offsets[first]))
            lines = f.read(int(offsets[last + 1] - offsets[first])).split(b"\n")
            for k in run:
                n = int(wanted[k])
                out[order[k]] = decode_line(path, lines[n - first], n + 1)
    return out


def _kind(path: Path) -> str:
    suffix = path.suffix.lower()
    return {".parquet": "parquet", ".jsonl": "jsonl", ".tsv": "tsv"}.get(suffix, "lines")


@dataclass(frozen=True)
class TextSource:
    """A file of texts (and optional ids), read by row range; open one with :func:`open_source`."""

    path: Path
    kind: str
    rows: int
    text_column: str = ""  # jsonl / parquet: a field name; tsv: a 1-based column number
    id_column: str = ""

    def read(self, start: int, stop: int) -> tuple[list, list[str]]:
        """(ids, texts) of rows [start, stop): ids are the id column's values, or the row numbers."""
        if self.kind == "parquet":
            import pyarrow.parquet as pq

            f = pq.ParquetFile(self.path)
            cols = [self.text_column, *([self.id_column] if self.id_column else [])]
            parts, first = [], 0
            for g in range(f.num_row_groups):
                n = f.metadata.row_group(g).num_rows
                if first + n > start and first < stop:
                    parts.append(f.read_row_group(g, columns=cols).slice(max(0, start - first),
                                                                            min(stop, first + n) - max(start, first)))
                first += n
            import pyarrow as pa

            table = pa.concat_tables(parts) if parts else None
            texts = [] if table is None else table.column(self.text_column).to_pylist()
            ids = table.column(self.id_column).to_pylist() if self.id_column and table is not None else None
        else:
            lines = read_lines_range(self.path, start, stop)
            texts, ids = [], [] if self.id_column else None
            for i, line in enumerate(lines, start + 1):
                if self.kind == "lines":
                    texts.append(line)
                    continue
                if self.kind == "tsv":
                    fields = line.split("\t")
                    row = {str(j): v for j, v in enumerate(fields, 1)}
                else:
                    row, problem = load_json_line(line)
                    if problem:
                        raise InputFormatError(self.path, i, problem.replace("invalid JSON", "not JSON"),
                                               "one JSON object per line")
                    row = row if isinstance(row, dict) else {}
                for col in filter(None, (self.text_column, self.id_column)):
                    if col not in row:
                        raise InputFormatError(self.path, i, f"no column {col!r}",
                                               "every row needs the text (and id) column")
                    problem = unencodable_problem(row[col], col)
                    if problem:
                        raise InputFormatError(self.path, i, problem, NOT_UNICODE_FIX)
                texts.append(str(row[self.text_column]))
                if ids is not None:
                    ids.append(row[self.id_column])
        for i, t in enumerate(texts, start + 1):
            if t is None or not str(t).strip():
                raise InputFormatError(self.path, i, "blank line" if self.kind == "lines" else "blank text",
                                       "remove it, or put a text on it; rows must match the embeddings")
        return (ids if ids is not None else list(range(start, start + len(texts)))), [str(t) for t in texts]


def open_source(path: str | Path, text_column: str = "", id_column: str = "") -> TextSource:
    """A :class:`TextSource` for ``path`` (kind by ending: .parquet, .jsonl, .tsv, anything else one text a line),
    its columns checked. Defaults: JSONL and Parquet ``text``, TSV column 1, no id column (ids are row numbers)."""
    path = Path(path)
    if not path.exists():
        raise XlsentError(f"{path}: no such file — check the path")
    if path.is_dir():
        raise XlsentError(f"{path}: is a folder, expected a file")
    kind = _kind(path)
    if kind == "lines" and (text_column or id_column):
        raise XlsentError(f"{path}: one text a line has no columns — text_column= and id_column= go with .tsv, "
                          ".jsonl or .parquet")
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            f = pq.ParquetFile(path)
        except Exception as e:  # pyarrow's own error types vary by version
            raise XlsentError(f"{path}: not a Parquet file ({str(e).splitlines()[0][:120]})") from None
        text_column = text_column or "text"
        names = f.schema_arrow.names
        for col, option in ((text_column, "text_column"), (id_column, "id_column")):
            if col and col not in names:
                raise XlsentError(f"{path}: {named(option, col)}: no such column — it has {', '.join(names[:12])}")
        return TextSource(path, kind, int(f.metadata.num_rows), text_column, id_column)
    if kind == "tsv":
        text_column = text_column or "1"
        for col, option in ((text_column, "text_column"), (id_column, "id_column")):
            if col and not (col.isdigit() and int(col) >= 1):
                raise XlsentError(f"{path}: {named(option, col)} — a TSV column is a number from 1")
    if kind == "jsonl":
        text_column = text_column or "text"
    rows = len(line_offsets(path)) - 1
    if rows == 0:
        raise InputFormatError(path, None, "the file is empty", "give one text a line")
    source = TextSource(path, kind, rows, text_column, id_column)
    source.read(0, 1)  # the first row has the columns: a wrong one is one line now
    return source
