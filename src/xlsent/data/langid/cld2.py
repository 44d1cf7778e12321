"""CLD2 (``pycld2``, Apache-2.0; its model ships inside the wheel, about 160 languages detected, Chichewa among
them): the one place that reads CLD2's language codes.

CLD2 names a language in its own form — ISO 639-1 where there is one (``ny``), its macrolanguage where it cannot
tell the members apart (``zh``, ``ms``), old codes (``iw``), and ``xx-Lana`` for "a language of that script". Its
answers are given in the short form :func:`~xlsent.data.langid.codes.short_form` normalises them to (what the
language filter, the pairs files and the reports compare and print); :attr:`Detection.code` and
:func:`detectable_639_3` give them in the package's own form, ISO 639-3.

* :func:`detect` — one line: the language CLD2 finds and whether it is reliable.
* :func:`detectable` — the languages CLD2 can detect; :func:`detectable_macros` as macrolanguages (ISO 639-3 with
  ``form="639-3"``; :attr:`Detection.macro_code` the same for one detection).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from xlsent.data.langid.codes import iso639_3, macro, short_form


@lru_cache(maxsize=None)
def detectable_macros(form: str = "639-1") -> frozenset[str]:
    """:func:`detectable` as macrolanguages (what a declared code is compared with), as :func:`macro` gives them
    in ``form`` (``"639-3"``: the language filter's own)."""
    return frozenset(macro(c, form) for c in detectable())


@lru_cache(maxsize=1)
def detectable() -> frozenset[str]:
    """The languages CLD2 can detect (normalised codes)."""
    import pycld2

    names = set(pycld2.DETECTED_LANGUAGES)
    return frozenset(short_form(code) for name, code in pycld2.LANGUAGES
                     if name in names and code != "un" and not code.startswith("xx") and code != "zzp")


@lru_cache(maxsize=1)
def detectable_639_3() -> frozenset[str]:
    """:func:`detectable` as ISO 639-3 (CLD2's codes that are one)."""
    return frozenset(c for c in map(iso639_3, detectable()) if c)


@dataclass(frozen=True)
class Detection:
    lang: str | None  # normalised code; None when CLD2 finds no language
    reliable: bool
    percent: int

    @property
    def code(self) -> str | None:
        """The language as ISO 639-3 (``ny`` → ``nya``), or None."""
        return iso639_3(self.lang) if self.lang else None

    @property
    def macro_code(self) -> str | None:
        """The language as the language filter compares it: its macrolanguage, else itself, in ISO 639-3
        (``macro(lang, "639-3")``: ``zh`` → ``zho``, ``ms`` → ``msa``, ``he`` → ``heb``), or None."""
        return macro(self.lang, "639-3") if self.lang else None


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
    return Detection(short_form(code), bool(reliable), int(langs[0][2]))
