"""Multiple-choice files for title selection (Manafi 2025 §3.1.1, after Kakwani et al. 2020).

One example per line: ``text<TAB>gold<TAB>distractor<TAB>distractor…`` — a section's text, its true
title, then the titles of other sections of the same article (the paper: 4 candidates). Every line
must have the same number of candidates (at least 2); a line with a missing or empty field, or a
distractor equal to the gold title, is an error naming the file and line. Blank lines and lines
starting with ``#`` are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from xlsent.data.formats.readers import read_lines  # a line that is not UTF-8: file:line, not a traceback
from xlsent.utils.errors import InputFormatError, XlsentError


@dataclass
class ChoiceSet:
    texts: list[str]
    candidates: list[list[str]]  # gold first
    path: str = ""
    lines: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def n_choices(self) -> int:
        return len(self.candidates[0]) if self.candidates else 0


def read_choices(path: str | Path) -> ChoiceSet:
    p = Path(path).expanduser()
    if not p.is_file():
        raise XlsentError(f"{p}: no such file — check the path")
    out = ChoiceSet([], [], str(p))
    fix = "write text<TAB>gold title<TAB>distractor<TAB>… (the same number of titles on every line)"
    for n, raw in enumerate(read_lines(p), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        cols = [c.strip() for c in raw.split("\t")]
        if len(cols) < 3:
            raise InputFormatError(p, n, f"{len(cols)} field(s); a text, its title and at least one distractor "
                                   "are needed", fix)
        if any(not c for c in cols):
            raise InputFormatError(p, n, f"empty field {cols.index('') + 1}", fix)
        if cols[1] in cols[2:]:
            raise InputFormatError(p, n, f"the gold title {cols[1]!r} is also a distractor", "give distinct titles")
        if out.candidates and len(cols) - 1 != out.n_choices:
            raise InputFormatError(p, n, f"{len(cols) - 1} titles, but line {out.lines[0]} has {out.n_choices}",
                                   fix)
        out.texts.append(cols[0])
        out.candidates.append(cols[1:])
        out.lines.append(n)
    if not out.texts:
        raise InputFormatError(p, None, "no examples", fix)
    return out
