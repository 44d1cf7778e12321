"""Help text carries no measured figures: ``--help`` says what an option does and points to docs/results.md or
the lab notebook (docs/experiments/), where each figure lives once and cannot go stale in ten copies.

Walks every command of the typer app (groups recursively, the recipes' ``train`` commands and their ``--preset``
summaries included) and flags P@1/F1-like decimals, arrows between numbers, speed ratios, approximate timings and
sizes, and point differences. Configuration defaults, format samples and targets (``≥ 1.8×``, ``≤ 2 points``) pass.
"""

from __future__ import annotations

import re

import pytest
import typer

# a P@1 / F1-like decimal (0.73, 0.725); not one glued to a format sample ("[2]:0.231") or a longer number
DECIMAL = re.compile(r"(?<![\w:.,\d])0\.\d{2,3}(?![\d.])")
# a change between two measured numbers: "0.73 → 0.55", "1,028 → 114 ms"
ARROW = re.compile(r"\d\s*→\s*[−+-]?\d")
# a speed or size ratio: "1.49×", "6× faster" (not a shape "2,000 × 2,000", not a target "≥ 1.8×")
RATIO = re.compile(r"(?<![\d.,])\d+(?:\.\d+)?×(?!\s*\d)")
# an approximate timing or size stated as what to expect: "≈ 20 min", "~130 bytes", "about 2 h"
APPROX = re.compile(r"(?:[≈~]|\babout\s)\s?\d[\d.,]*\s?(?:min|minutes|h|hours|s|seconds|ms|bytes|KiB|MiB|GiB|MB|GB)\b")
# a measured difference in points: "1–2 points", "+12.5 points" (not a target "≤ 2 points")
POINTS = re.compile(r"[+−-]?\d+(?:\.\d+)?(?:[–-]\d+(?:\.\d+)?)?\s?points?\b")

PATTERNS = {"decimal": DECIMAL, "arrow": ARROW, "ratio": RATIO, "approx": APPROX, "points": POINTS}
TARGET = re.compile(r"[≥≤<>]\s?$")  # what precedes a target, not a measurement


def figures(text: str, default: object = None) -> list[str]:
    """The measured-figure-like spans of one help text (the option's own default is allowed to appear)."""
    allowed = {str(default)} if isinstance(default, float) else set()
    found = []
    for kind, pattern in PATTERNS.items():
        for m in pattern.finditer(text):
            if m.group() in allowed or TARGET.search(text[max(0, m.start() - 2):m.start()]):
                continue
            if kind == "decimal" and re.search(r"(?:default|=)\s?$", text[max(0, m.start() - 9):m.start()]):
                continue
            found.append(f"{kind}: {m.group()!r}")
    return found


def _walk(cmd, path):
    yield f"{path} (command help)", cmd.help or "", None
    for param in cmd.params:
        name = "/".join(getattr(param, "opts", None) or [param.name])
        yield f"{path} {name}", getattr(param, "help", None) or "", param.default
    for sub_name, sub in sorted((getattr(cmd, "commands", None) or {}).items()):
        yield from _walk(sub, f"{path} {sub_name}")


def test_no_measured_figures_in_help():
    import xlsent.cli.main

    root = typer.main.get_command(xlsent.cli.main.app)
    walked = list(_walk(root, "xlsent"))
    assert any(where.startswith("xlsent train siamese --preset") for where, _, _ in walked)  # the walk reaches presets
    bad = [f"{where}: {', '.join(hits)}\n    {text!r}" for where, text, default in walked
           if (hits := figures(text, default))]
    assert not bad, ("measured figures in help text — move each to docs/results.md or docs/experiments/ and point "
                     "there:\n" + "\n".join(bad))


@pytest.mark.parametrize("text", [
    "it lowered mining F1 from 0.73 to 0.55",
    "filtering lost mining F1 with it (0.73 → 0.55)",
    "on the development data it raised e5-small's P@1 ny→en 0.73 → 0.91",
    "float32 and float16 0.725 / 0.731, int8 0.722 / 0.727",
    "the same F1 on split verses, one point lower with deletions, 6× faster",
    "requests/s at 32 clients: 1.49× infinity",
    "0.1 raised strict F1 by 1–2 points on development data",
    "the final selection adds ~130 bytes per sentence at k = 4",
    "190 steps (≈ 6 min on 2 cores)",
])
def test_the_patterns_catch_measured_figures(text):
    assert figures(text)


@pytest.mark.parametrize("text,default", [
    ("SmoothQuant α (0 = off; default: the measured best)", 0.65),
    ("a deleted sentence costs this quantile of random sentence pairs' costs", 0.02),
    ("hard mining: skip candidates within this share of the positive's score (default 0.05)", 0.05),
    ("tsv: src_ids, tgt_ids, score, src_text, tgt_text | vecalign: [0, 1]:[2]:0.231", "tsv"),
    ("The compression target: ≤ 50% of e5-small's parameters, ≥ 1.8× its encoding speed, ≤ 2 points of …", None),
    ("the final selection adds memory at k = 4 (measured: docs/experiments/bitext-mining.md)", 4.0),
    ("one 2,000 × 2,000-sentence pair; English → Chichewa; cost 1 − cosine; fp32: cosine ≥ 0.99999", None),
    ("bundled gold: bible-align:deletions (5% of verses on one side only)", None),
])
def test_the_patterns_leave_defaults_formats_and_targets(text, default):
    assert not figures(text, default)
