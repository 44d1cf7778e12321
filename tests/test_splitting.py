"""Sentence splitting: sentencex for the languages it has rules for, the punctuation splitter (with a warning) else."""

from __future__ import annotations

import warnings

import pytest

from xlsent.data import splitting
from xlsent.data.splitting import SENTENCEX_LANGUAGES, base_language, punctuation_split, split_sentences
from xlsent.utils.errors import XlsentError


def test_language_codes():
    assert base_language("eng") == "en" and base_language("pt-BR") == "pt" and base_language("amh") == "am"
    has_rules = [base_language(c) in SENTENCEX_LANGUAGES for c in ("en", "deu", "nya", "zh")]
    assert has_rules == [True, True, False, False]


def test_sentencex_keeps_abbreviations_for_covered_languages():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback warning for a covered language
        got = split_sentences("Mr. Smith went home. He said \"hi.\" Then he left!", "eng")
    assert got == ["Mr. Smith went home.", "He said \"hi.\"", "Then he left!"]


def test_fallback_punctuation_splitter_warns_and_handles_scripts():
    splitting._warned.clear()  # one warning per language and process: earlier tests may have used "ny"
    with pytest.warns(UserWarning, match="no rules for language 'ny-x'"):
        got = split_sentences("Mulungu ndi wabwino. Iye anati: \"Tiyeni!\" Kodi?", "ny-x")
    assert got == ["Mulungu ndi wabwino.", "Iye anati: \"Tiyeni!\"", "Kodi?"]
    assert punctuation_split("你好。我很好！「你呢？」他说。") == ["你好。", "我很好！", "「你呢？」", "他说。"]
    assert punctuation_split("ሰላም ነው። እንዴት ነህ፧") == ["ሰላም ነው።", "እንዴት ነህ፧"]
    assert punctuation_split("नमस्ते। आप कैसे हैं?") == ["नमस्ते।", "आप कैसे हैं?"]
    assert punctuation_split("3.5 percent is fine") == ["3.5 percent is fine"]
    assert split_sentences("   ", "en") == []


def test_forced_splitters_and_unknown_splitter():
    assert split_sentences("Dr. Banda anapita. Inde.", "nya", splitter="sentencex") == ["Dr. Banda anapita.", "Inde."]
    assert split_sentences("Dr. Banda anapita.", "en", splitter="punctuation") == ["Dr.", "Banda anapita."]
    with pytest.raises(XlsentError, match="unknown splitter"):
        split_sentences("a.", "en", splitter="nltk")
