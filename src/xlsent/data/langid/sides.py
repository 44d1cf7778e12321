"""The language of each side of a pairs file: the declared code, checked, else detected from a sample of its lines
by CLD2 — never guessed. Codes here are in the short form of the reports and the pairs files
(:func:`~xlsent.data.langid.codes.language_code`: ISO 639-1 where there is one).

* :func:`detect_side` — the language of one side of a pairs file, from a sample of its lines: its code, or
  None when no language holds a clear majority of reliable detections.
* :func:`pair_languages` — both sides' languages, with a note for each side detected.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from xlsent.data.langid.cld2 import detect
from xlsent.data.langid.codes import language_code


@dataclass(frozen=True)
class SideLanguage:
    lang: str | None  # None: no clear majority
    share: float  # of the sampled lines, the share reliably detected as ``lang`` (or as the most common language)
    sampled: int

    def describe(self, side: str) -> str:
        if self.lang is None:
            return f"{side}: language not detected ({self.share:.0%} of {self.sampled} sampled lines agree at most)"
        return f"{side}: detected {self.lang} ({self.share:.0%} of {self.sampled} sampled lines)"


def detect_side(texts: Sequence[str], sample: int = 200, majority: float = 0.6) -> SideLanguage:
    """The language of a column of lines: the first ``sample`` lines (spread over the file) detected; a language
    reliably found in at least ``majority`` of them is the side's language."""
    if not texts:
        return SideLanguage(None, 0.0, 0)
    step = max(1, len(texts) // sample)
    picked = [texts[i] for i in range(0, len(texts), step)][:sample]
    found = Counter(d.lang for d in map(detect, picked) if d.reliable)
    lang, n = found.most_common(1)[0] if found else (None, 0)
    share = n / len(picked)
    return SideLanguage(lang if share >= majority else None, share, len(picked))


def pair_languages(src: Sequence[str], tgt: Sequence[str], declared: tuple[str | None, str | None] = (None, None),
                   options: tuple[str, str] = ("--src-lang", "--tgt-lang")
                   ) -> tuple[tuple[str | None, str | None], list[str]]:
    """Each side's language: the declared code (checked, normalised), else detected from a sample of its lines
    (:func:`detect_side`), else None — never guessed. Returns the codes and one note a detected side."""
    codes, notes = [], []
    sides = (("source", src, declared[0], options[0]), ("target", tgt, declared[1], options[1]))
    for side, texts, code, option in sides:
        if code:
            codes.append(language_code(code, option))
            continue
        found = detect_side(texts)
        codes.append(found.lang)
        notes.append(found.describe(side) + ("" if found.lang else f" — give {option}"))
    return (codes[0], codes[1]), notes
