"""Reader for semantic-textual-similarity files in the STS2017 format: ``sent1<TAB>sent2<TAB>score``.

Scores are gold similarities on the 0–5 scale. An optional header line
(``sentence1<TAB>sentence2<TAB>score`` or ``sent1<TAB>sent2<TAB>score``) is skipped.
No gold STS set can be had offline here; the tests make small files.
"""

from __future__ import annotations

from pathlib import Path

from xlsent.data.readers import BAD_LINE_POLICIES, ReadReport, read_lines
from xlsent.utils.errors import InputFormatError, XlsentError

HEADERS = ({"sent1", "sent2", "score"}, {"sentence1", "sentence2", "score"})


def read_sts(path: str | Path, on_bad_lines: str = "error", min_score: float = 0.0, max_score: float = 5.0):
    """``(sentence1, sentence2, score)`` rows as a ``datasets.Dataset`` and a :class:`ReadReport`."""
    from datasets import Dataset

    if on_bad_lines not in BAD_LINE_POLICIES:
        raise XlsentError(f"unknown --on-bad-lines {on_bad_lines!r}: use one of {', '.join(BAD_LINE_POLICIES)}")
    path = Path(path)
    lines = read_lines(path)
    report = ReadReport(str(path))
    s1, s2, scores = [], [], []
    head = {x.strip().lower() for x in lines[0].split("\t")}
    start = 1 if head in HEADERS else 0
    fix = f"write each pair as sentence1<TAB>sentence2<TAB>score with a score from {min_score:g} to {max_score:g}"
    for i, line in enumerate(lines[start:], start + 1):
        parts = line.split("\t")
        problem = None
        if not line.strip():
            problem = "blank line"
        elif len(parts) != 3:
            problem = f"{len(parts)} tab-separated field(s), expected 3"
        elif not parts[0].strip() or not parts[1].strip():
            problem = "empty sentence"
        else:
            try:
                score = float(parts[2])
            except ValueError:
                problem = f"score {parts[2]!r} is not a number"
            else:
                if not min_score <= score <= max_score:
                    problem = f"score {score:g} outside {min_score:g}–{max_score:g}"
        if problem:
            if on_bad_lines == "error":
                raise InputFormatError(path, i, problem, fix + " (or pass --on-bad-lines skip)")
            report.skipped[problem] += 1
            continue
        s1.append(parts[0].strip())
        s2.append(parts[1].strip())
        scores.append(score)
    if len(scores) < 2:
        raise InputFormatError(path, None, f"{len(scores)} valid pair(s); correlations need at least 2", fix)
    report.rows = len(scores)
    return Dataset.from_dict({"sentence1": s1, "sentence2": s2, "score": scores}), report
