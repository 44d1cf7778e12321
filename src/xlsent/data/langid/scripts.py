"""The writing system of a text: its ISO 15924 code, from the Unicode names of its letters.

:func:`detect_script` counts the letters of a text (Unicode category ``L*``) by the script their Unicode
name opens with (``LATIN SMALL LETTER A`` → ``Latn``, ``CHEROKEE LETTER A`` → ``Cher``, ``ETHIOPIC SYLLABLE
HA`` → ``Ethi``) and returns the majority. Marks, digits, punctuation and letters of no listed script
(``MODIFIER LETTER APOSTROPHE``) are not counted. Japanese (Han with kana, kana ≥ 10% of its letters) is
``Jpan``; Chinese ``Hani`` (simplified and traditional are not told apart); Korean ``Hang``. A text with no
letter of a listed script is ``Zyyy`` (ISO 15924's "undetermined / common").

:func:`script` is the language filter's older, coarser check, kept as it was (its answers decide which lines the
filter removes): the first word of the Unicode names of every alphabetic character (``LATIN``, ``CYRILLIC``,
``CJK`` — Han, hiragana and katakana together, so that a Japanese line is one script whatever its share of kana),
listed script or not; :func:`filter_script` is the same in ISO 15924 (``Latn``, ``Cyrl``, ``Jpan``: one code a
word, :data:`FILTER_SCRIPTS`), what the filter compares, and :func:`script_name` the word its notes print.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from functools import lru_cache

#: Unicode-name prefix → ISO 15924 code; the longest matching prefix wins
SCRIPT_PREFIXES = {
    "LATIN": "Latn", "FULLWIDTH LATIN": "Latn", "CYRILLIC": "Cyrl", "GREEK": "Grek", "COPTIC": "Copt",
    "ARMENIAN": "Armn", "GEORGIAN": "Geor", "HEBREW": "Hebr", "ARABIC": "Arab", "SYRIAC": "Syrc",
    "THAANA": "Thaa", "NKO": "Nkoo", "SAMARITAN": "Samr", "MANDAIC": "Mand", "DEVANAGARI": "Deva",
    "BENGALI": "Beng", "GURMUKHI": "Guru", "GUJARATI": "Gujr", "ORIYA": "Orya", "TAMIL": "Taml",
    "TELUGU": "Telu", "KANNADA": "Knda", "MALAYALAM": "Mlym", "SINHALA": "Sinh", "THAI": "Thai", "LAO": "Laoo",
    "TIBETAN": "Tibt", "MYANMAR": "Mymr", "KHMER": "Khmr", "MONGOLIAN": "Mong", "ETHIOPIC": "Ethi",
    "CHEROKEE": "Cher", "CANADIAN SYLLABICS": "Cans", "OGHAM": "Ogam", "RUNIC": "Runr", "TAGALOG": "Tglg",
    "HANUNOO": "Hano", "BUHID": "Buhd", "TAGBANWA": "Tagb", "LIMBU": "Limb", "TAI LE": "Tale",
    "NEW TAI LUE": "Talu", "BUGINESE": "Bugi", "TAI THAM": "Lana", "BALINESE": "Bali", "SUNDANESE": "Sund",
    "BATAK": "Batk", "LEPCHA": "Lepc", "OL CHIKI": "Olck", "VAI": "Vaii", "BAMUM": "Bamu", "JAVANESE": "Java",
    "CHAM": "Cham", "TAI VIET": "Tavt", "MEETEI MAYEK": "Mtei", "KAYAH LI": "Kali", "REJANG": "Rjng",
    "SAURASHTRA": "Saur", "SYLOTI NAGRI": "Sylo", "CHAKMA": "Cakm", "TIFINAGH": "Tfng", "ADLAM": "Adlm",
    "OSAGE": "Osge", "MENDE KIKAKUI": "Mend", "GLAGOLITIC": "Glag", "GOTHIC": "Goth", "DESERET": "Dsrt",
    "SHAVIAN": "Shaw", "YI": "Yiii", "HANGUL": "Hang", "HALFWIDTH HANGUL": "Hang", "HIRAGANA": "Hira",
    "KATAKANA": "Kana", "HALFWIDTH KATAKANA": "Kana", "KATAKANA-HIRAGANA": "Kana", "BOPOMOFO": "Bopo",
    "CJK UNIFIED IDEOGRAPH": "Hani", "CJK COMPATIBILITY IDEOGRAPH": "Hani", "IDEOGRAPHIC": "Hani",
    "MASARAM GONDI": "Gonm", "GUNJALA GONDI": "Gong", "WARANG CITI": "Wara", "PAU CIN HAU": "Pauc",
    "MIAO": "Plrd", "NEWA": "Newa", "TAKRI": "Takr", "SORA SOMPENG": "Sora", "TIRHUTA": "Tirh",
}
UNDETERMINED = "Zyyy"
_BY_LENGTH = sorted(SCRIPT_PREFIXES, key=len, reverse=True)


@lru_cache(maxsize=65536)
def char_script(ch: str) -> str:
    """ISO 15924 code of one letter; "" for a character that is not a letter of a listed script."""
    if not unicodedata.category(ch).startswith("L"):
        return ""
    name = unicodedata.name(ch, "")
    for prefix in _BY_LENGTH:
        if name.startswith(prefix) and (len(name) == len(prefix) or name[len(prefix)] in " -"):
            return SCRIPT_PREFIXES[prefix]
    return ""


def newer_letter(ch: str) -> bool:
    """A character this Python's Unicode database does not know yet (``Cn``) that anyascii writes in letters: a letter
    of a script newer than the database (Python 3.11 knows Unicode 14; Kawi, Nag Mundari, Garay, Kirat Rai… came
    after), not a newer emoji (anyascii writes ``:shaking_face:``) nor a noncharacter."""
    if unicodedata.category(ch) != "Cn":
        return False
    try:
        from anyascii import anyascii
    except ImportError:  # a dependency of xlsent; only a broken install lacks it
        return False
    return anyascii(ch).replace("'", "").isalnum()


def letter_like(ch: str) -> bool:
    """A letter; a private-use character (``Co``: a script not in Unicode lives there, in its users' fonts); or a
    letter of a script newer than this Python's Unicode database (:func:`newer_letter`)."""
    return ch.isalpha() or unicodedata.category(ch) == "Co" or newer_letter(ch)


def script_counts(text: str) -> Counter:
    """Letters of ``text`` per ISO 15924 script."""
    counts: Counter = Counter()
    for ch in text:
        code = char_script(ch)
        if code:
            counts[code] += 1
    return counts


def detect_script(text: str) -> str:
    """The majority script of ``text``'s letters as an ISO 15924 code (``Jpan`` for Han with kana; ``Zyyy``
    when it has no letter of a listed script)."""
    counts = script_counts(text)
    if not counts:
        return UNDETERMINED
    kana = counts["Hira"] + counts["Kana"]
    japanese = kana + counts["Hani"]
    if kana and japanese > sum(counts.values()) / 2 and kana >= 0.1 * japanese:
        return "Jpan"
    return counts.most_common(1)[0][0]


#: scripts one language writes together: Japanese mixes kanji (CJK) with hiragana and katakana in every line, and
#: which of them has most letters varies from line to line
_SAME_SCRIPT = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "KATAKANA-HIRAGANA": "CJK"}

#: the language filter's scripts in ISO 15924: the first word of a letter's Unicode name (what :func:`script` counts
#: by) → the code of the one script it names — one code a word, so the filter tells apart exactly the scripts it
#: always told apart. ``CJK`` — Han with hiragana and katakana, counted together (:data:`_SAME_SCRIPT`) — is ``Jpan``,
#: ISO 15924's own name for Han + Hiragana + Katakana: the filter's one writing system for Japanese, which holds a
#: Chinese line too (ISO 15924's ``Hani``, ``Hira``, ``Kana`` are one script here). A first word that names no one
#: script here keeps its word as its name, a group of its own as it always was: ``FULLWIDTH`` (Latin),
#: ``HALFWIDTH`` (katakana or Hangul), ``IDEOGRAPHIC`` (the iteration mark), ``TAI`` (three scripts), ``MODIFIER``,
#: ``MATHEMATICAL``, and the scripts :data:`SCRIPT_PREFIXES` does not list.
FILTER_SCRIPTS = {
    "LATIN": "Latn", "GREEK": "Grek", "COPTIC": "Copt", "CYRILLIC": "Cyrl", "ARMENIAN": "Armn", "HEBREW": "Hebr",
    "ARABIC": "Arab", "SYRIAC": "Syrc", "THAANA": "Thaa", "NKO": "Nkoo", "SAMARITAN": "Samr", "MANDAIC": "Mand",
    "DEVANAGARI": "Deva", "BENGALI": "Beng", "GURMUKHI": "Guru", "GUJARATI": "Gujr", "ORIYA": "Orya", "TAMIL": "Taml",
    "TELUGU": "Telu", "KANNADA": "Knda", "MALAYALAM": "Mlym", "SINHALA": "Sinh", "THAI": "Thai", "LAO": "Laoo",
    "TIBETAN": "Tibt", "MYANMAR": "Mymr", "GEORGIAN": "Geor", "HANGUL": "Hang", "ETHIOPIC": "Ethi",
    "CHEROKEE": "Cher", "CANADIAN": "Cans", "OGHAM": "Ogam", "RUNIC": "Runr", "TAGALOG": "Tglg", "HANUNOO": "Hano",
    "BUHID": "Buhd", "TAGBANWA": "Tagb", "KHMER": "Khmr", "MONGOLIAN": "Mong", "LIMBU": "Limb", "NEW": "Talu",
    "BUGINESE": "Bugi", "BALINESE": "Bali", "SUNDANESE": "Sund", "BATAK": "Batk", "LEPCHA": "Lepc", "OL": "Olck",
    "GLAGOLITIC": "Glag", "TIFINAGH": "Tfng", "BOPOMOFO": "Bopo", "CJK": "Jpan", "YI": "Yiii", "VAI": "Vaii",
    "BAMUM": "Bamu", "SYLOTI": "Sylo", "SAURASHTRA": "Saur", "KAYAH": "Kali", "REJANG": "Rjng", "JAVANESE": "Java",
    "CHAM": "Cham", "MEETEI": "Mtei", "GOTHIC": "Goth", "DESERET": "Dsrt", "SHAVIAN": "Shaw", "OSAGE": "Osge",
    "SORA": "Sora", "CHAKMA": "Cakm", "NEWA": "Newa", "TIRHUTA": "Tirh", "TAKRI": "Takr", "WARANG": "Wara",
    "PAU": "Pauc", "MASARAM": "Gonm", "GUNJALA": "Gong", "MIAO": "Plrd", "MENDE": "Mend", "ADLAM": "Adlm",
}
_FILTER_WORDS = {code: word for word, code in FILTER_SCRIPTS.items()}


def _word_counts(text: str) -> Counter:
    counts: Counter = Counter()
    for ch in text:
        if ch.isalpha():
            try:
                name = unicodedata.name(ch).split(" ")[0]
            except ValueError:
                continue
            counts[_SAME_SCRIPT.get(name, name)] += 1
    return counts


def script(text: str) -> str | None:
    """The writing system of most of ``text``'s letters (``LATIN``, ``CYRILLIC``, ``ARABIC``, ``CJK`` — Han,
    hiragana and katakana together — …), or None."""
    counts = _word_counts(text)
    return counts.most_common(1)[0][0] if counts else None


def filter_script(text: str) -> str | None:
    """:func:`script` in ISO 15924 (:data:`FILTER_SCRIPTS`: ``Latn``, ``Cyrl``, ``Arab``, ``Jpan`` — Han, hiragana
    and katakana together — …; a first word naming no one script as it is), or None: the language filter's script
    of a line."""
    word = script(text)
    return None if word is None else FILTER_SCRIPTS.get(word, word)


def script_name(code: str) -> str:
    """How the language filter's notes name a script of :func:`filter_script`: the word of its letters' Unicode
    names, lower-cased (``Latn`` → ``latin``, ``Jpan`` → ``cjk``)."""
    return _FILTER_WORDS.get(code, code).lower()
