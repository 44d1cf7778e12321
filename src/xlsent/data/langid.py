"""Language identification of lines, offline: CLD2 (``pycld2``, Apache-2.0; its model ships inside the wheel,
about 160 languages detected, Chichewa among them), language codes checked and normalised with ``langcodes``.

* :func:`language_code` — a user's ISO 639-1 or 639-3 code (``ny``, ``nya``, ``en-GB``) checked and
  normalised (``nya`` → ``ny``); an unknown code is one clear error.
* :func:`detect` — one line: the language CLD2 finds and whether it is reliable.
* :func:`script` — a line's main writing system (from the Unicode names of its letters): a check that needs
  no model, for languages CLD2 does not know.
* :func:`detect_side` — the language of one side of a pairs file, from a sample of its lines: its code, or
  None when no language holds a clear majority of reliable detections.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from xlsent.utils.errors import XlsentError, named


def language_code(code: str, option: str = "lang") -> str:
    """``code`` as langcodes normalises it (ISO 639-1 where there is one), or an error naming ``option``."""
    import langcodes

    try:
        lang = langcodes.Language.get(code.strip())
    except (ValueError, LookupError):
        lang = None
    if lang is None or not lang.is_valid() or not lang.language:
        raise XlsentError(f"{named(option, code)}: not a known language code — give an ISO 639-1 or 639-3 code, "
                          "e.g. ny or nya, en or eng")
    return lang.language


@lru_cache(maxsize=None)
def _normal(code: str) -> str:
    import langcodes

    try:
        return langcodes.Language.get(code).language or code
    except (ValueError, LookupError):
        return code


@lru_cache(maxsize=None)
def macro(code: str | None) -> str | None:
    """The macrolanguage a code belongs to in ISO 639-3 (SIL's table, through ``python-iso639``), where it has one
    (``cmn``, ``yue``, ``hsn`` → ``zh``; ``arb`` → ``ar``; ``khk`` → ``mn``; ``quz``, ``qvh`` → ``qu``; ``ind``,
    ``zlm`` → ``ms``; ``hrv``, ``srp``, ``bos`` → ``sh``; ``nob`` → ``no``), else the code, normalised: CLD2 names
    one member or the macrolanguage where a user may name another member, and CLD2 cannot tell the members
    apart (it reads Indonesian paragraphs as Malay, Croatian as Bosnian)."""
    if not code:
        return code
    import iso639

    norm = _normal(code)
    try:
        lang = iso639.Language.match(norm)
        if lang.macrolanguage:
            whole = iso639.Language.from_part3(lang.macrolanguage)
            return whole.part1 or whole.part3
    except (iso639.LanguageNotFoundError, ValueError, LookupError):
        pass
    return norm


@lru_cache(maxsize=1)
def detectable_macros() -> frozenset[str]:
    """:func:`detectable` as macrolanguages (what a declared code is compared with)."""
    return frozenset(macro(c) for c in detectable())


@lru_cache(maxsize=1)
def detectable() -> frozenset[str]:
    """The languages CLD2 can detect (normalised codes)."""
    import pycld2

    names = set(pycld2.DETECTED_LANGUAGES)
    return frozenset(_normal(code) for name, code in pycld2.LANGUAGES
                     if name in names and code != "un" and not code.startswith("xx") and code != "zzp")


@dataclass(frozen=True)
class Detection:
    lang: str | None  # normalised code; None when CLD2 finds no language
    reliable: bool
    percent: int


def detect(text: str) -> Detection:
    """CLD2's best language for ``text`` (a line of any script)."""
    import pycld2

    try:
        reliable, _, langs = pycld2.detect(text)
    except pycld2.error:  # invalid UTF-8 inside, which a Python str cannot hold but surrogates can
        return Detection(None, False, 0)
    code = langs[0][1]
    if code == "un" or code.startswith("xx"):  # no language, or CLD2's "a language of script X" (xx-Lana): unknown
        return Detection(None, False, int(langs[0][2]))
    return Detection(_normal(code), bool(reliable), int(langs[0][2]))


#: scripts one language writes together: Japanese mixes kanji (CJK) with hiragana and katakana in every line, and
#: which of them has most letters varies from line to line
_SAME_SCRIPT = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "KATAKANA-HIRAGANA": "CJK"}


def script(text: str) -> str | None:
    """The writing system of most of ``text``'s letters (``LATIN``, ``CYRILLIC``, ``ARABIC``, ``CJK`` — Han,
    hiragana and katakana together — …), or None."""
    counts: Counter = Counter()
    for ch in text:
        if ch.isalpha():
            try:
                name = unicodedata.name(ch).split(" ")[0]
            except ValueError:
                continue
            counts[_SAME_SCRIPT.get(name, name)] += 1
    return counts.most_common(1)[0][0] if counts else None


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
    for side, texts, code, option in (("source", src, declared[0], options[0]), ("target", tgt, declared[1], options[1])):
        if code:
            codes.append(language_code(code, option))
            continue
        found = detect_side(texts)
        codes.append(found.lang)
        notes.append(found.describe(side) + ("" if found.lang else f" — give {option}"))
    return (codes[0], codes[1]), notes
