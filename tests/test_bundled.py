from __future__ import annotations

import unicodedata

import pytest

from xlsent.data.bundled import DEV_BOOKS, is_bundled, load_bundled
from xlsent.utils.errors import XlsentError


def test_bible_split_has_no_leakage():
    train, test = load_bundled("bible-en-ny:train"), load_bundled("bible-en-ny:test")
    assert len(train) == 23145 and len(test) == 7957
    assert set(train["book"]).isdisjoint(set(test["book"]))
    assert train[0]["id"] == "Genesis 1:1" and "Mulungu" in train[0]["tgt"]
    assert test[0]["book"] == "Matthew"
    # the development split: eight OT books, disjoint from its training side and from the test
    dev, dev_train = load_bundled("bible-en-ny:dev"), load_bundled("bible-en-ny:dev-train")
    assert len(dev) == 1684 and len(dev) + len(dev_train) == len(train)
    assert set(dev["book"]) == set(DEV_BOOKS) and set(dev_train["book"]).isdisjoint(DEV_BOOKS)
    assert set(dev["book"]).isdisjoint(set(test["book"]))


def test_udhr_bundle_is_nfc_and_selectable():
    ds = load_bundled("udhr")
    assert len(set(ds["tgt_lang"])) == 47
    vie = load_bundled("udhr:vie")
    assert all(unicodedata.is_normalized("NFC", t) for t in vie["tgt"])
    assert len(vie) == 60 and vie[0]["id"] == "preamble.1"
    with pytest.raises(XlsentError, match="udhr has no language"):
        load_bundled("udhr:xxx")
    with pytest.raises(XlsentError, match="unknown dataset"):
        load_bundled("bible")


def test_udhr_dev_languages_are_disjoint_from_the_test_languages():
    """udhr-dev is where multilingual settings are chosen: none of its languages may be a udhr test language."""
    dev, test = load_bundled("udhr-dev"), load_bundled("udhr")
    assert len(set(dev["tgt_lang"])) == 24 and set(dev["tgt_lang"]).isdisjoint(set(test["tgt_lang"]))
    assert set(dev["src"]) <= set(test["src"])  # the same English paragraphs, keyed the same way
    heb = load_bundled("udhr-dev:heb")
    assert len(heb) == 51 and set(heb["tgt_lang"]) == {"heb"}
    with pytest.raises(XlsentError, match="udhr-dev has no language"):
        load_bundled("udhr-dev:nya")


def test_udhr_all_splits_by_language_with_the_old_sets_on_their_sides():
    """udhr-all: one declaration a language, dev and test disjoint, udhr's 47 all in test and udhr-dev's 24 all in
    dev (a setting chosen on either dev set never saw a test language), the same units as the old sets."""
    dev, test = load_bundled("udhr-all:dev"), load_bundled("udhr-all:test")
    d, t = set(dev["tgt_lang"]), set(test["tgt_lang"])
    assert not d & t and len(d) > 150 and len(t) > 150
    assert set(load_bundled("udhr")["tgt_lang"]) <= t and set(load_bundled("udhr-dev")["tgt_lang"]) <= d
    assert len(load_bundled("udhr-all")) == len(dev) + len(test)
    codes: dict[str, set] = {}
    for ds in (dev, test):  # one declaration a language: every English unit once
        for code, lang in zip(ds["udhr_code"], ds["tgt_lang"]):
            codes.setdefault(lang, set()).add(code)
    assert all(len(c) == 1 for c in codes.values())
    ind, old = load_bundled("udhr-all:test:ind"), load_bundled("udhr:ind")
    assert ind["tgt"] == old["tgt"] and ind["src"] == old["src"]
    assert len(load_bundled("udhr-all:ind")) == len(ind)
    with pytest.raises(XlsentError, match="udhr-all:dev has no language 'ind'"):
        load_bundled("udhr-all:dev:ind")
    assert is_bundled("udhr-all:test:zul") and not is_bundled("udhr-all:")
