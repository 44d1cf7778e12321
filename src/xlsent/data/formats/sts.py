"""Reader for semantic-textual-similarity files in the STS2017 format: ``sent1<TAB>sent2<TAB>score``.

Scores are gold similarities on the 0–5 scale. An optional header line
(``sentence1<TAB>sentence2<TAB>score`` or ``sent1<TAB>sent2<TAB>score``) is skipped.
No gold STS set can be had offline here; the tests make small files.
"""

from __future__ import annotations

from pathlib import Path

from xlsent.data.formats.readers import read_fields
from xlsent.utils.errors import InputFormatError

HEADERS = (("sent1", "sent2", "score"), ("sentence1", "sentence2", "score"))


def read_sts(path: str | Path, on_bad_lines: str = "error", min_score: float = 0.0, max_score: float = 5.0):
    """``(sentence1, sentence2, score)`` rows as a ``datasets.Dataset`` and a :class:`ReadReport`."""
    from datasets import Dataset

    path = Path(path)
    fix = f"write each pair as sentence1<TAB>sentence2<TAB>score with a score from {min_score:g} to {max_score:g}"

    def check(parts: list[str]) -> str | None:
        try:
            score = float(parts[2])
        except ValueError:
            return f"score {parts[2].strip()!r} is not a number"
        return None if min_score <= score <= max_score else f"score {score:g} outside {min_score:g}–{max_score:g}"

    cols, report = read_fields(path, ("sentence1", "sentence2", "score"), on_bad_lines, fix, HEADERS, check)
    if len(cols["score"]) < 2:
        raise InputFormatError(path, None, f"{len(cols['score'])} valid pair(s); correlations need at least 2", fix)
    return Dataset.from_dict({"sentence1": cols["sentence1"], "sentence2": cols["sentence2"],
                              "score": [float(x) for x in cols["score"]]}), report
