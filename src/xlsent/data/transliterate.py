"""A **substitute** for a script a model cannot read: Latin letters mapped one to one onto Deseret.

A real language in a script the base tokenizer lacks is the case ``xlsent models extend-vocab`` is for, but
the bundled pairs are all in scripts e5-small reads. To measure the method on known pairs, the Chichewa side of
``bible-en-ny`` is rewritten letter by letter into Deseret (Unicode block U+10400–U+1044F), a script that
multilingual-e5-small's tokenizer maps wholly to ``<unk>`` (checked in ``tests/test_extend_vocab.py``). The
text keeps its words, spaces, punctuation and digits: only the letters change, so it is the same language in a
script the model has never seen — a *substitute*, not a real language, and every figure computed on it says so.

The map (fixed, one to one, invertible with :func:`from_deseret`):

* ``a`` … ``z`` → the first 26 lowercase Deseret letters, U+10428 … U+10441, in order
  (``a`` → 𐐨 U+10428, ``b`` → 𐐩 U+10429, … ``z`` → 𐑁 U+10441);
* ``A`` … ``Z`` → the first 26 capital Deseret letters, U+10400 … U+10419, in order
  (``A`` → 𐐀 U+10400, … ``Z`` → 𐐙 U+10419);
* a Latin letter with a diacritic (``ŵ``, ``é``) is decomposed (NFD), its base letter mapped and its combining
  marks dropped — so the result holds no Latin letter and no mark the base model could read;
* everything else (spaces, digits, punctuation) is kept.

Deseret's own letters do not match these sounds; the map is a cipher, not a transcription.
"""

from __future__ import annotations

import unicodedata

SCRIPT = "Dsrt"  # ISO 15924
LOWER_START, UPPER_START = 0x10428, 0x10400

TO_DESERET: dict[str, str] = {
    **{chr(ord("a") + i): chr(LOWER_START + i) for i in range(26)},
    **{chr(ord("A") + i): chr(UPPER_START + i) for i in range(26)},
}
FROM_DESERET: dict[str, str] = {v: k for k, v in TO_DESERET.items()}


def to_deseret(text: str) -> str:
    """``text`` with every Latin letter replaced by its Deseret letter (the map in the module docstring)."""
    out = []
    for ch in text:
        if ch in TO_DESERET:
            out.append(TO_DESERET[ch])
            continue
        if not ch.isascii() and ch.isalpha():
            base = [c for c in unicodedata.normalize("NFD", ch) if not unicodedata.combining(c)]
            if base and all(c in TO_DESERET for c in base):
                out.extend(TO_DESERET[c] for c in base)
                continue
        out.append(ch)
    return "".join(out)


def from_deseret(text: str) -> str:
    """The inverse of :func:`to_deseret` on the letters it writes (diacritics dropped by it stay dropped)."""
    return "".join(FROM_DESERET.get(ch, ch) for ch in text)
