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

:func:`by_sound` is the other kind of substitute (issue 62): Chichewa written **by sound** in Deseret or Shavian, as
a writer of the script would — each sound as the script's letter for the nearest English sound — so that
romanising it (anyascii) gives back an approximate Latin spelling, as a real script's romanisation does.
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


# ---- by sound: Chichewa written in a phonemic script, as a writer of that script would (issue 62) -------------

#: Chichewa's spellings, longest first, each as its sounds (keys of :data:`SOUNDS`): digraphs of one sound (``ch``,
#: ``tch``, ``ng'``), of two (``ny`` /ɲ/ as n + y, aspirates ``ph`` ``th`` ``kh`` as the stop + h, ``dz``, ``ts``),
#: the letters (``ŵ``, the old spelling of /β/, as w; ``c`` ``q`` ``x`` in names as k, k, ks)
SPELLINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tch", ("ch",)), ("ng'", ("ng",)), ("ng’", ("ng",)), ("ch", ("ch",)), ("sh", ("sh",)), ("ny", ("n", "y")),
    ("ph", ("p", "h")), ("th", ("t", "h")), ("kh", ("k", "h")), ("dz", ("d", "z")), ("ts", ("t", "s")),
    *((c, (c,)) for c in "abdefghijklmnoprstuvwyz"), ("c", ("k",)), ("q", ("k",)), ("x", ("k", "s")), ("ŵ", ("w",)),
)
#: each sound's letter in Deseret (lower case; its capital is 0x28 below) and in Shavian (one case), chosen by sound:
#: Chichewa's five vowels /a ɛ i ɔ u/ as the nearest English vowels — Deseret's "ah" 𐐪, short "e" 𐐯, long "e" 𐐨
#: (/iː/), "aw" 𐐫 (/ɔː/), "oo" 𐐭 (/uː/); Shavian's ah 𐑭, egg 𐑧, eat 𐑰, awe 𐑷, ooze 𐑵
SOUNDS: dict[str, tuple[int, int]] = {
    "a": (0x1042A, 0x1046D), "e": (0x1042F, 0x10467), "i": (0x10428, 0x10470), "o": (0x1042B, 0x10477),
    "u": (0x1042D, 0x10475), "b": (0x1043A, 0x1045A), "d": (0x1043C, 0x1045B), "f": (0x10441, 0x10453),
    "g": (0x10440, 0x1045C), "h": (0x10438, 0x10463), "j": (0x1043E, 0x10461), "k": (0x1043F, 0x10452),
    "l": (0x1044A, 0x10464), "m": (0x1044B, 0x10465), "n": (0x1044C, 0x1046F), "p": (0x10439, 0x10450),
    "r": (0x10449, 0x1046E), "s": (0x10445, 0x10455), "t": (0x1043B, 0x10451), "v": (0x10442, 0x1045D),
    "w": (0x10436, 0x10462), "y": (0x10437, 0x10458), "z": (0x10446, 0x1045F), "ch": (0x1043D, 0x10457),
    "ng": (0x1044D, 0x10459), "sh": (0x10447, 0x10456),
}
BY_SOUND_SCRIPTS = {"Dsrt": 0, "Shaw": 1}  # ISO 15924


def by_sound(text: str, script: str) -> str:
    """Chichewa ``text`` written letter by letter **by sound** in ``script`` (``Dsrt``: Deseret, ``Shaw``:
    Shavian) — a **substitute** for a language in a script the model cannot read whose romanisation gives back an
    approximate Latin spelling, as a real script's does (Deseret: ``chikondi`` → 𐐽𐐨𐐿𐐫𐑌𐐼𐐨, romanised ``chekonde``;
    Shavian: 𐑗𐑰𐑒𐑷𐑯𐑛𐑰, ``chiikoondii``). A capital starts a Deseret capital (Shavian has none); a letter with a
    diacritic is its base letter (but ``ŵ``); everything else (spaces, digits, punctuation, an apostrophe not in
    ``ng'``) is kept."""
    if script not in BY_SOUND_SCRIPTS:
        raise ValueError(f"script must be one of {', '.join(BY_SOUND_SCRIPTS)}, not {script!r}")
    which = BY_SOUND_SCRIPTS[script]
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        for spelling, sounds in SPELLINGS:
            part = text[i:i + len(spelling)]
            if len(part) == len(spelling) and _plain(part).lower() == spelling:
                capital = part[0].isupper()
                for k, sound in enumerate(sounds):
                    code = SOUNDS[sound][which]
                    out.append(chr(code - 0x28 if capital and k == 0 and which == 0 else code))
                i += len(spelling)
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _plain(part: str) -> str:
    """A spelling's letters without diacritics (but ŵ, a letter of its own here)."""
    return "".join(c if c in "ŵŴ" else "".join(x for x in unicodedata.normalize("NFD", c)
                                              if not unicodedata.combining(x)) for c in part)
