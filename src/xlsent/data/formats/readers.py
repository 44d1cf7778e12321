"""Readers for parallel corpora → Hugging Face ``datasets.Dataset``.

Formats:

* **TSV** — ``src<TAB>tgt`` per line. An optional first line of two language
  codes (``en<TAB>ny``, ``eng<TAB>nya``, ``zh-Hans<TAB>vi``) or ``src<TAB>tgt`` is a header.
  ``score<TAB>src<TAB>tgt`` lines (what ``xlsent mine`` and ``data filter-pairs`` write) are read as pairs.
* **JSONL** — one object per line with ``src`` and ``tgt`` (required),
  ``src_lang`` / ``tgt_lang`` (optional); other fields are kept.
* **Moses** — two aligned files, one sentence per line, given as ``A,B``
  (e.g. ``train.en,train.ny``); language codes from the file suffixes.

``.gz`` files are read transparently. Every rejected line is an error naming
file and line (default) or, with ``on_bad_lines="skip"``, is skipped and
counted in the returned :class:`ReadReport` — never dropped silently.
"""

from __future__ import annotations

import gzip
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from xlsent.data.filters.cleaning import normalize_text
from xlsent.data.formats.text_source import decode_line, load_json_line
from xlsent.utils.errors import InputFormatError, XlsentError
from xlsent.utils.text import FIX as NOT_UNICODE_FIX
from xlsent.utils.text import shown, unencodable_problem

LANG_CODE = re.compile(r"^[a-z]{2,3}([_-][A-Za-z0-9]{2,8})*$")
BAD_LINE_POLICIES = ("error", "skip")


@dataclass
class ReadReport:
    """What a reader kept and what it skipped, by reason."""

    source: str
    rows: int = 0
    skipped: Counter = field(default_factory=Counter)

    def lines(self) -> list[str]:
        return [f"{self.source}: skipped {n} line(s): {why}" for why, n in self.skipped.items()]


def read_lines(path: Path, report: "ReadReport | None" = None, policy: str | None = None) -> list:
    """The file's lines as text (``.gz`` too). A line that is not text (invalid UTF-8, a NUL byte) is an error
    naming the file and line; with ``policy="skip"`` it is counted in ``report`` instead and comes back as None,
    so that line numbers, and a Moses pair's two files, stay aligned (``policy="error"``: the error says that
    ``--on-bad-lines skip`` exists)."""
    if not path.exists():
        raise XlsentError(f"{path}: no such file — check the path")
    if path.is_dir():
        raise XlsentError(f"{path}: is a folder, expected a file")
    raw = gzip.open(path, "rb").read() if path.suffix == ".gz" else path.read_bytes()
    if not raw.strip():
        raise InputFormatError(path, None, "the file is empty", "give a file with one pair per line")
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out: list[str | None] = []
    for i, line in enumerate(lines, 1):
        try:
            out.append(decode_line(path, line, i))
        except InputFormatError as exc:
            if policy != "skip" or report is None:
                fix = exc.fix + (" (or pass --on-bad-lines skip)" if policy == "error" else "")
                raise InputFormatError(path, i, exc.problem, fix) from None
            report.skipped[exc.problem.split(" (")[0]] += 1
            out.append(None)
    return out


def read_fields(path: Path, names: tuple[str, ...], on_bad_lines: str, fix: str, headers: tuple = (),
                check=None) -> tuple[dict[str, list[str]], ReadReport]:
    """Tab-separated lines with exactly ``len(names)`` non-empty fields → columns, with file:line errors.

    A first line whose lower-cased fields equal one of ``headers`` is skipped. ``check(parts)``
    may return a further problem (a string) for a line. Bad lines raise
    :class:`InputFormatError` or, with ``on_bad_lines="skip"``, are counted in the report.
    """
    if on_bad_lines not in BAD_LINE_POLICIES:
        raise XlsentError(f"unknown --on-bad-lines {on_bad_lines!r}: use one of {', '.join(BAD_LINE_POLICIES)}")
    report = ReadReport(str(path))
    lines = read_lines(path, report, on_bad_lines)
    cols: dict[str, list[str]] = {n: [] for n in names}
    first = tuple(x.strip().lower() for x in (lines[0] or "").split("\t"))
    start = 1 if first in headers else 0
    for i, line in enumerate(lines[start:], start + 1):
        if line is None:  # not text: counted by read_lines
            continue
        parts = line.split("\t")
        problem = None
        if not line.strip():
            problem = "blank line"
        elif len(parts) != len(names):
            problem = f"{len(parts)} tab-separated field(s), expected {len(names)}"
        elif any(not p.strip() for p in parts):
            problem = f"empty {names[[not p.strip() for p in parts].index(True)]} field"
        elif check is not None:
            problem = check(parts)
        if problem:
            if on_bad_lines == "error":
                raise InputFormatError(path, i, problem, fix + " (or pass --on-bad-lines skip)")
            report.skipped[problem] += 1
            continue
        for n, p in zip(names, parts):
            cols[n].append(p.strip())
    report.rows = len(cols[names[0]])
    return cols, report


def read_sentences(path: str | Path, split=None) -> tuple[list[str], ReadReport]:
    """Monolingual text, one sentence per line (``.gz`` too): NFC, whitespace collapsed, blank lines and exact
    repeats skipped and counted in the report. ``split(line) -> list[str]`` (e.g. a sentence splitter) turns
    each line (a document or paragraph) into sentences first."""
    path = Path(path)
    return unique_sentences(read_lines(path), ReadReport(str(path)), split, path)


def unique_sentences(lines, report: ReadReport, split=None, path: str | Path | None = None,
                     blank: str = "blank line") -> tuple[list[str], ReadReport]:
    """The unique, normalised sentences of ``lines`` (each split by ``split`` first, when given); blank
    items (counted as ``blank``) and repeats are counted in ``report``. ``path`` names the source in the
    error for an empty input."""
    out, seen = [], set()
    repeat = "exact repeat of an earlier " + ("sentence" if split else "line")
    for line in lines:
        texts = [normalize_text(t) for t in split(line)] if split else [normalize_text(line)]
        texts = [t for t in texts if t]
        if not texts:
            report.skipped[blank] += 1
        for text in texts:
            if text in seen:
                report.skipped[repeat] += 1
            else:
                seen.add(text)
                out.append(text)
    if not out:
        raise InputFormatError(path or report.source, None, "no sentence in the input", "give one sentence per line")
    report.rows = len(out)
    return out, report


class _Collector:
    def __init__(self, path: Path, on_bad_lines: str) -> None:
        if on_bad_lines not in BAD_LINE_POLICIES:
            raise XlsentError(f"unknown --on-bad-lines {on_bad_lines!r}: use one of {', '.join(BAD_LINE_POLICIES)}")
        self.path = path
        self.policy = on_bad_lines
        self.report = ReadReport(str(path))
        self.rows: list[dict] = []

    def read(self, path: Path) -> list:
        """:func:`read_lines` under this policy (a line that is not text is None, counted, when skipping)."""
        return read_lines(path, self.report, self.policy)

    def bad(self, line: int, problem: str, fix: str, reason: str | None = None) -> None:
        """A rejected line: an error, or (skip) counted under ``reason`` (default: the problem itself)."""
        if self.policy == "error":
            raise InputFormatError(self.path, line, problem, fix + " (or pass --on-bad-lines skip)")
        self.report.skipped[reason or problem] += 1

    def add(self, line: int, row: dict) -> None:
        if not row["src"].strip() or not row["tgt"].strip():
            side = "source" if not row["src"].strip() else "target"
            self.bad(line, f"empty {side} side", "give both sides a sentence or remove the line")
            return
        self.rows.append(row)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_tsv(path: str | Path, on_bad_lines: str = "error", src_lang: str | None = None, tgt_lang: str | None = None):
    path = Path(path)
    c = _Collector(path, on_bad_lines)
    lines = c.read(path)
    start = 0
    first = (lines[0] or "").split("\t")
    if len(first) == 2 and (all(LANG_CODE.match(x.strip()) for x in first) or [x.strip() for x in first] == ["src", "tgt"]):
        if first != ["src", "tgt"]:
            src_lang, tgt_lang = src_lang or first[0].strip(), tgt_lang or first[1].strip()
        start = 1
    for i, line in enumerate(lines[start:], start + 1):
        if line is None:
            continue
        if not line.strip():
            c.bad(i, "blank line", "remove blank lines")
            continue
        parts = line.split("\t")
        if len(parts) == 3 and _is_number(parts[0]):  # xlsent mine / filter-pairs output: score<TAB>src<TAB>tgt
            parts = parts[1:]
        if len(parts) != 2:
            problem = "no tab between source and target" if len(parts) == 1 else f"{len(parts)} tab-separated fields, expected 2"
            c.bad(i, problem, "write each pair as source<TAB>target")
            continue
        c.add(i, {"src": parts[0], "tgt": parts[1], "src_lang": src_lang or "", "tgt_lang": tgt_lang or ""})
    return _finish(c)


def read_jsonl(path: str | Path, on_bad_lines: str = "error", src_lang: str | None = None, tgt_lang: str | None = None):
    path = Path(path)
    c = _Collector(path, on_bad_lines)
    for i, line in enumerate(c.read(path), 1):
        if line is None:
            continue
        if not line.strip():
            c.bad(i, "blank line", "remove blank lines")
            continue
        obj, problem = load_json_line(line)
        if problem:
            c.bad(i, problem, "write one JSON object per line")
            continue
        problem = unencodable_problem(obj)
        if problem:  # counted as one reason, whatever the character and its place
            c.bad(i, problem, NOT_UNICODE_FIX, "text that is not Unicode (a lone surrogate)")
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("src"), str) or not isinstance(obj.get("tgt"), str):
            c.bad(i, "missing string fields 'src' and 'tgt'", 'write {"src": "...", "tgt": "..."} objects')
            continue
        side = next((k for k in ("src_lang", "tgt_lang") if not isinstance(obj.get(k, ""), (str, type(None)))), None)
        if side:
            c.bad(i, f"'{side}' is not a string", f'write "{side}" as a language code such as "ny", or leave it out')
            continue
        for key, default in (("src_lang", src_lang), ("tgt_lang", tgt_lang)):
            if obj.get(key) is None:
                obj[key] = default or ""
        c.add(i, obj)
    return _finish(c)


def read_moses(src_path: str | Path, tgt_path: str | Path, on_bad_lines: str = "error", src_lang: str | None = None, tgt_lang: str | None = None):
    src_path, tgt_path = Path(src_path), Path(tgt_path)
    c = _Collector(src_path, on_bad_lines)
    a, b = c.read(src_path), c.read(tgt_path)
    if len(a) != len(b):
        raise InputFormatError(
            tgt_path,
            min(len(a), len(b)) + 1,
            f"ragged Moses pair: {src_path.name} has {len(a)} lines, {tgt_path.name} has {len(b)}",
            "the two files must be line-aligned",
        )
    src_lang = src_lang or src_path.suffix.lstrip(".")
    tgt_lang = tgt_lang or tgt_path.suffix.lstrip(".")
    for i, (s, t) in enumerate(zip(a, b), 1):
        if s is None or t is None:  # a line that is not text on either side: the pair is skipped (counted)
            continue
        c.add(i, {"src": s, "tgt": t, "src_lang": src_lang, "tgt_lang": tgt_lang})
    return _finish(c)


def _finish(c: _Collector):
    from datasets import Dataset

    if not c.rows:
        raise InputFormatError(c.path, None, "no usable pairs", "check the format (TSV src<TAB>tgt, JSONL, or Moses A,B)")
    c.report.rows = len(c.rows)
    keys = list(dict.fromkeys(k for r in c.rows for k in r))
    data = {k: [r.get(k) for r in c.rows] for k in keys}
    try:
        return Dataset.from_dict(data), c.report
    except Exception:  # pyarrow's errors: extra JSONL fields whose values differ in type between lines
        import pyarrow as pa

        for k in keys:
            try:
                pa.array(data[k])
            except Exception:
                raise InputFormatError(c.path, None, f"field {shown(k, 40)} has values of different types on "
                                       "different lines", "give it one type on every line, or remove it") from None
        raise


def read_pairs(spec: str | Path, on_bad_lines: str = "error", src_lang: str | None = None, tgt_lang: str | None = None):
    """Read a pairs file by its name: ``A,B`` → Moses; ``*.jsonl[.gz]`` → JSONL; else TSV.

    Returns ``(datasets.Dataset, ReadReport)``.
    """
    spec = str(spec)
    if "," in spec and not Path(spec).exists():
        a, b = spec.split(",", 1)
        return read_moses(a, b, on_bad_lines, src_lang, tgt_lang)
    name = Path(spec).name.removesuffix(".gz")
    if name.endswith((".jsonl", ".json")):
        return read_jsonl(spec, on_bad_lines, src_lang, tgt_lang)
    return read_tsv(spec, on_bad_lines, src_lang, tgt_lang)
