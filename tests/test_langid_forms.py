"""The language filter compares in ISO 639-3 and ISO 15924: the same groups as the short forms and the Unicode-name
words it compared before, so it removes the same lines, and its notes print what they printed."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from xlsent.data.langid.cld2 import detect, detectable, detectable_macros
from xlsent.data.langid.codes import macro
from xlsent.data.langid.scripts import FILTER_SCRIPTS, char_script, filter_script, script, script_name


def _codes() -> set[str]:
    import iso639
    import pycld2

    from xlsent.data.langid.ngram import bundled_identifier

    codes = {lang.part3 for lang in iso639.ALL_LANGUAGES} | {lang.part1 for lang in iso639.ALL_LANGUAGES if lang.part1}
    codes |= set(detectable()) | {code for _, code in pycld2.LANGUAGES} | set(bundled_identifier().languages)
    return codes | {"tl", "fil", "tgl", "iw", "in", "ji", "jw", "mo", "sh", "no", "nb", "nn", "xx-Lana", "un", "qaa"}


def test_the_639_3_key_groups_the_codes_the_short_key_grouped():
    """Every ISO 639 code, CLD2's and the n-gram identifier's: two codes share a key in ISO 639-3 exactly when they
    shared one in the short form, and the short form of the 639-3 key is the code's short key (what the notes
    print)."""
    short: dict[str, set[str]] = {}
    long: dict[str, set[str]] = {}
    for code in _codes():
        k1, k3 = macro(code), macro(code, "639-3")
        assert macro(k3) == k1, (code, k1, k3)
        assert macro(k3, "639-3") == k3, (code, k3)
        short.setdefault(k1, set()).add(code)
        long.setdefault(k3, set()).add(code)
    assert {frozenset(v) for v in short.values()} == {frozenset(v) for v in long.values()}


@pytest.mark.parametrize("code, key", [("tl", "fil"), ("tgl", "fil"), ("fil", "fil"), ("iw", "heb"), ("he", "heb"),
                                       ("in", "msa"), ("ind", "msa"), ("ms", "msa"), ("zh", "zho"), ("cmn", "zho"),
                                       ("hrv", "hbs"), ("ny", "nya"), ("ja", "jpn"), ("en", "eng"),
                                       ("ji", "yid"), ("mo", "ron")])
def test_the_traps(code, key):
    assert macro(code, "639-3") == key
    assert macro(key) == macro(code)
    assert macro(None, "639-3") is None and macro("", "639-3") == ""


def test_cld2_answers_in_the_filters_form_at_its_edge():
    assert detectable_macros("639-3") == {macro(c, "639-3") for c in detectable_macros()}
    d = detect("Anthu onse amabadwa aufulu ndiponso ofanana mu ulemu ndi ufulu wawo. Iwo ali ndi nzeru.")
    assert d.lang and d.macro_code == macro(d.lang, "639-3")


def test_one_iso_15924_code_a_word_and_it_is_the_script_of_its_letters():
    assert len(set(FILTER_SCRIPTS.values())) == len(FILTER_SCRIPTS)
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        if not ch.isalpha():
            continue
        word = unicodedata.name(ch, "").split(" ")[0]
        if word in FILTER_SCRIPTS and word != "CJK":
            assert char_script(ch) == FILTER_SCRIPTS[word], (hex(cp), word)
        if char_script(ch) in ("Hira", "Kana", "Hani") and word not in ("HALFWIDTH", "IDEOGRAPHIC"):
            assert filter_script(ch) == "Jpan", hex(cp)


@pytest.mark.parametrize("text", [
    "All human beings are born free", "Все люди рождаются свободными", "すべての人間は、生まれながらにして自由であり",
    "人人生而自由", "ひらがなだけ", "カタカナダケ", "ｆｕｌｌｗｉｄｔｈ", "ﾊﾝｶｸ", "々々", "ᥐᥤᥛ ᨠᩣ", "ℂℍ ℕ", "ʻokina", "123 !?",
    "Ἐν ἀρχῇ ἦν ὁ λόγος", "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ", "ⴰⵎⴰⵣⵉⵖ", "𐐔𐐯𐑅𐐨𐑉𐐯𐐻", "mixed latin и кириллица"])
def test_the_filter_script_is_the_old_word_in_iso_15924(text):
    word = script(text)
    assert filter_script(text) == (None if word is None else FILTER_SCRIPTS.get(word, word))
    if word is not None:
        assert script_name(filter_script(text)) == word.lower()
