"""No measured figure in src/: docstrings, comments, help strings and config comments state the decision in words
and point to docs/results.md or a page under docs/experiments/, where each figure lives once.

Scans every string literal and comment of ``src/xlsent/**/*.py`` (with :mod:`tokenize`) and every comment of
``src/xlsent/**/*.yaml``, and flags:

* a change between two measured decimals: ``0.592 → 0.724``, ``0.38 -> 0.49``;
* ``from X to Y`` or ``X against Y`` / ``X vs Y`` with P@1/F1-like decimals (``from 0.966 to 0.976``);
* a metric name followed closely by a 3-decimal figure: ``P@1 0.918``, ``test F1 0.624``, ``strict F1 from 0.966``;
* a signed point difference: ``−2.8 points``.

Format samples (``[0, 1]:[2]:0.231``), version numbers (``3.10``, ``1.2.3``), settings (``cosine ≥ 0.99999``,
``lr 2e-5``) and DOIs pass.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "xlsent"

# a decimal that reads as a measurement: not part of a longer number, a version ("1.2.3"), a format sample
# ("[2]:0.231") or an identifier
_DEC = r"(?<![\w.:/])[−-]?\d{1,3}\.\d{2,}(?![\d.]*\d)"
_DEC3 = r"(?<![\w.:/])[−-]?\d{0,3}\.\d{3}(?!\d)(?!\.\d)"
_VERSION_BEFORE = re.compile(r"(?:python|version|release|v)\s*$", re.IGNORECASE)

PATTERNS = {
    # "0.592 → 0.724", "0.38 -> 0.49"
    "arrow": re.compile(rf"{_DEC}\s*(?:→|->|⟶)\s*{_DEC}"),
    # "from 0.966 to 0.976", "from 0.81 to 0.001" (at least one side with three decimals)
    "from-to": re.compile(rf"\bfrom\s+(?:{_DEC3}\s+to\s+{_DEC}|{_DEC}\s+to\s+{_DEC3})"),
    # "0.975 against 0.973", "0.978 vs 0.977"
    "against": re.compile(rf"{_DEC3}\s+(?:against|vs\.?|versus)\s+{_DEC3}"),
    # "P@1 0.918", "test F1 0.624", "strict F1 from 0.966", "P@1 xx→en / en→xx 0.056"
    "metric": re.compile(
        r"(?:\bP@\d+|\bR@\d+|\brecall@\d+|\bnDCG(?:@\d+)?|\bMRR\b|\bF1\b|\baccuracy\b|\btop-1\b)"
        rf"[^\d\n]{{0,30}}?{_DEC3}"),
    # "−2.8 points", "+6.4 points" (a target "≤ 2 points" has no sign)
    "points": re.compile(r"(?:(?<=[\s(])-|[+−])\d+(?:\.\d+)?\s?points?\b"),
}


def figures(text: str) -> list[tuple[int, str]]:
    """(offset, matched text) of every measured-figure-like span in ``text``."""
    found = []
    for kind, pattern in PATTERNS.items():
        for m in pattern.finditer(text):
            if kind == "arrow" and _VERSION_BEFORE.search(text[max(0, m.start() - 10):m.start()]):
                continue
            found.append((m.start(), f"{kind}: {m.group()!r}"))
    return found


_TEXT_TOKENS = {tokenize.STRING, tokenize.COMMENT} | (
    {tokenize.FSTRING_MIDDLE} if hasattr(tokenize, "FSTRING_MIDDLE") else set())
_YAML_COMMENT = re.compile(r"(?:^|\s)#(.*)$")


# every pattern's match holds one of these: the scan looks only around them
_CUE = re.compile(r"\.\d\d|points?\b")


def _might_hold_figures(source: str) -> bool:
    """Whether any pattern matches anywhere in ``source`` (code included).

    A token's text is a slice of the source, so a file with no match anywhere has none in its strings or comments
    either; only the few files that might are tokenized (the slow part). To keep it fast the patterns run only on
    the lines around each cue (two either side), not over the whole file.
    """
    for cue in _CUE.finditer(source):
        start = cue.start()
        for _ in range(3):
            start = source.rfind("\n", 0, start) if start > 0 else -1
        end = cue.end()
        for _ in range(3):
            end = source.find("\n", end + 1) if end != -1 else -1
        if figures(source[start + 1:len(source) if end == -1 else end]):
            return True
    return False


def python_hits(source: str, name: str = "<string>") -> list[str]:
    """``name:line: kind: 'match'`` for every measured figure in a string literal or comment of ``source``."""
    if not _might_hold_figures(source):
        return []
    hits = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in _TEXT_TOKENS:
            for offset, what in figures(tok.string):
                line = tok.start[0] + tok.string.count("\n", 0, offset)
                hits.append(f"{name}:{line}: {what}")
    return hits


def yaml_hits(text: str, name: str = "<string>") -> list[str]:
    """``name:line: kind: 'match'`` for every measured figure in a comment of the YAML ``text``."""
    hits = []
    for number, line in enumerate(text.splitlines(), 1):
        if (m := _YAML_COMMENT.search(line)):
            hits += [f"{name}:{number}: {what}" for _, what in figures(m.group(1))]
    return hits


def test_no_measured_figures_in_src():
    py = sorted(SRC.rglob("*.py"))
    yaml = sorted(SRC.rglob("*.yaml")) + sorted(SRC.rglob("*.yml"))
    assert len(py) > 20 and yaml  # the scan reaches the package and its configs
    bad = [hit for p in py for hit in python_hits(p.read_text(encoding="utf-8"), str(p.relative_to(SRC.parent)))]
    bad += [hit for p in yaml for hit in yaml_hits(p.read_text(encoding="utf-8"), str(p.relative_to(SRC.parent)))]
    assert not bad, ("measured figures in src/ docstrings or comments — state the finding in words and point to "
                     "docs/results.md or docs/experiments/:\n" + "\n".join(bad))


@pytest.mark.parametrize("text", [
    "ny→en 0.592 → 0.724",
    "test F1 0.624",
    "held-out NT en→ny P@1 0.918 → 0.737",
    "(uniform error 0.38 -> 0.49)",
    "weight 0.1 raised strict F1 from 0.966 to 0.976",
    "took the student from 0.81 to 0.001 NT ny→en P@1",
    "better with deletions (0.975 against 0.973; docs/results.md)",
    "P@1 xx→en / en→xx 0.056 / 0.098 at 1×",
    "retrieved at chance (NT P@1 0.010)",
    "NT en→ny −2.8 points against the base model",
])
def test_the_detector_flags_measured_figures(text):
    assert figures(text)


@pytest.mark.parametrize("text", [
    "[0, 1]:[2]:0.231",
    "* **vecalign**: ``[0, 1]:[2]:0.231`` — Vecalign's own output and gold format.",
    "cosine ≥ 0.99999 counts as a duplicate",
    "requires Python 3.10 → 3.11 and numpy 1.26.4",
    "onnxruntime 1.17.1",
    "doi:10.18653/v1/2020.emnlp-main.365",
    "lr 2e-5, τ 0.05, margin 1.0, weights 0.05–0.2",
    "≤ 2 points of P@1 lost",
    "the F1 at the threshold chosen on dev",
])
def test_the_detector_passes_settings_and_formats(text):
    assert not figures(text)


def test_the_scan_reads_strings_and_comments_not_code():
    source = (
        '"""Module docstring: P@1 0.918 → 0.737."""\n'
        "x = 0.592  # ny→en 0.592 → 0.724\n"
        "d = {\"F1\": 0.624}\n"
        "HELP = 'strict F1 from 0.966 to 0.976'\n"
        "FORMAT = '[0, 1]:[2]:0.231'\n"
    )
    hits = python_hits(source, "m.py")
    assert {h.split(": ")[0] for h in hits} == {"m.py:1", "m.py:2", "m.py:4"}, hits
    yaml = "lr: 2.0e-5  # chosen on dev: test F1 0.624\nscore: 0.624\nkeep: 0.99999  # cosine ≥ this\n"
    assert [h.split(": ")[0] for h in yaml_hits(yaml, "c.yaml")] == ["c.yaml:1"]
