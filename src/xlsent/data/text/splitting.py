"""Sentence splitting for many scripts.

The splitter is `sentencex <https://github.com/wikimedia/sentencex>`_ (Wikimedia, MIT; Rust
with Python bindings): terminators of many scripts, abbreviation lists, quote and list
handling. Version 1.0 has its own rules for 31 languages (:data:`SENTENCEX_LANGUAGES`):
am ar bg bn ca da de el en es fi fr gu hi hy it ja kk kn ml mr my nl pa pl pt ru sk ta te uk.

Any other language (Chichewa, Swahili, Yoruba, Chinese …) gets xlsent's punctuation splitter
with a warning: it breaks after ``. ! ? …`` followed by a space (closing quotes and brackets
stay with their sentence) and after the full stops of scripts that need no space — CJK
``。！？``, Devanagari ``। ॥``, Ethiopic ``። ፧``, Arabic ``؟ ۔``, Myanmar ``။``, Khmer ``។ ៕``,
Tibetan ``།``. It knows no abbreviations, so "Dr. Banda" is split after "Dr.".
``splitter="sentencex"`` forces sentencex's generic rules (English abbreviations) for any
language; ``"punctuation"`` forces the fallback.

Language codes may be ISO 639-1 (``en``) or 639-3 (``eng``, as in the UDHR); a region or
script suffix is ignored (``pt-BR`` → ``pt``).
"""

from __future__ import annotations

import re
import warnings

from xlsent.data.filters.cleaning import normalize_text
from xlsent.utils.errors import XlsentError

SENTENCEX_LANGUAGES = frozenset(
    "am ar bg bn ca da de el en es fi fr gu hi hy it ja kk kn ml mr my nl pa pl pt ru sk ta te uk".split()
)
_ISO3 = {
    "amh": "am", "ara": "ar", "arb": "ar", "bul": "bg", "ben": "bn", "cat": "ca", "dan": "da", "deu": "de",
    "ger": "de", "ell": "el", "gre": "el", "eng": "en", "spa": "es", "fin": "fi", "fra": "fr", "fre": "fr",
    "guj": "gu", "hin": "hi", "hye": "hy", "arm": "hy", "ita": "it", "jpn": "ja", "kaz": "kk", "kan": "kn",
    "mal": "ml", "mar": "mr", "mya": "my", "bur": "my", "nld": "nl", "dut": "nl", "pan": "pa", "pol": "pl",
    "por": "pt", "rus": "ru", "slk": "sk", "slo": "sk", "tam": "ta", "tel": "te", "ukr": "uk",
}
SPLITTERS = ("auto", "sentencex", "punctuation")

_CLOSE = "\"'”’»)\\]」』）"
_SPACED = re.compile(rf"(?<=[.!?…])\s+|(?<=[.!?…][{_CLOSE}])\s+")
_UNSPACED = re.compile(rf"(?<=[。！？।॥።፧؟۔။។៕།])(?![{_CLOSE}])\s*|(?<=[。！？।॥።፧؟۔။។៕།][{_CLOSE}])\s*")
_warned: set[str] = set()


def base_language(lang: str) -> str:
    """``pt-BR`` → ``pt``, ``eng`` → ``en``; unknown codes are returned lower-cased."""
    code = re.split(r"[-_]", lang.strip())[0].lower()
    return _ISO3.get(code, code)


def punctuation_split(text: str) -> list[str]:
    """The fallback splitter: break after sentence-final punctuation (see the module docstring)."""
    out = []
    for part in _SPACED.split(text):
        out.extend(s for s in _UNSPACED.split(part))
    return [s.strip() for s in out if s.strip()]


def split_sentences(text: str, lang: str, splitter: str = "auto") -> list[str]:
    """Sentences of ``text`` (whitespace-normalised, empty ones dropped), in order."""
    if splitter not in SPLITTERS:
        raise XlsentError(f"unknown splitter '{splitter}': use one of {', '.join(SPLITTERS)}")
    code = base_language(lang)
    if splitter == "auto" and code not in SENTENCEX_LANGUAGES:
        if code not in _warned:
            _warned.add(code)
            warnings.warn(f"sentencex has no rules for language '{lang}': using the punctuation splitter "
                          "(no abbreviation handling; pass splitter='sentencex' for its generic rules)",
                          stacklevel=2)
        splitter = "punctuation"
    text = normalize_text(text)
    if not text:
        return []
    if splitter == "punctuation":
        return punctuation_split(text)
    from sentencex import segment

    return [s for s in (normalize_text(x) for x in segment(code, text)) if s]
