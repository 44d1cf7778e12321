from __future__ import annotations

import unicodedata

from datasets import Dataset

from xlsent.data.cleaning import clean_pairs, count_words


def test_count_words_handles_scripts_without_spaces():
    assert count_words("the quick brown fox") == 4
    assert count_words("我爱吃苹果") == 5
    assert count_words("Hello 世界") == 3


def test_filters_report_what_they_remove():
    decomposed = unicodedata.normalize("NFD", "Mọi người sinh ra đều được tự do")
    ds = Dataset.from_dict(
        {
            "src": ["one two three four five", "short one", "one two three four five", "a b c d e {x}", "   ", "w1 w2 w3 w4 w5"],
            "tgt": [decomposed, "x y z w v", unicodedata.normalize("NFC", decomposed), "p q r s t", "p q r s t", "  a  b c d e "],
        }
    )
    out, report = clean_pairs(ds, min_words=5, special_pattern=r"[{}]")
    steps = {name: removed for name, removed, _ in report.steps}
    assert steps == {"nfc+whitespace": 0, "empty-side": 1, "min-words": 1, "special-chars": 1, "duplicates": 1}
    assert report.rows_in == 6 and report.rows_out == 2 == len(out)
    assert out["tgt"][0] == unicodedata.normalize("NFC", decomposed)
    assert out["tgt"][1] == "a b c d e"
    assert "normalised 3 row(s)" in report.steps[0][2]
