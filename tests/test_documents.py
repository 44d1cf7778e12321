"""Training data from comparable documents (Manafi 2025 §3.2.1), candidate filtering (Huang et al. 2023 §4.1),
and document matching."""

from __future__ import annotations

import json

import numpy as np
import pytest

from test_cli import xlsent
from xlsent.data.documents import Document, Section, match_titles, pairs_from_documents, read_documents
from xlsent.utils.errors import InputFormatError, XlsentError


def test_title_matching_is_one_to_one_highest_first():
    sims = np.array([[0.80, 0.95, 0.10],
                     [0.90, 0.75, 0.20],
                     [0.60, 0.72, 0.71]])
    # in order of appearance, row 0 would take column 1 first anyway; row 1 would then take column 0 (0.90);
    # row 2's best free column is 2 (0.71 ≥ 0.7). Highest first: (0,1) .95, (1,0) .90, (2,2) .71
    assert match_titles(sims, 0.7) == [(0, 1, 0.95), (1, 0, 0.90), (2, 2, 0.71)]
    sims2 = np.array([[0.80, 0.85], [0.90, 0.60]])
    # order of appearance would give row 0 → column 1 (its best); highest first gives (1, 0) .90 then (0, 1) .85
    assert match_titles(sims2, 0.7) == [(1, 0, 0.90), (0, 1, 0.85)]
    assert match_titles(np.array([[0.95, 0.9]]), 0.7) == [(0, 0, 0.95)]  # a title is used once
    assert match_titles(np.array([[0.69]]), 0.7) == []


def _long(words: list[str], n: int, tag: str) -> str:
    return " ".join(f"{' '.join(words)} {tag}{i}." for i in range(n))


@pytest.mark.filterwarnings("ignore:sentencex has no rules:UserWarning")  # the fallback is tested in test_splitting
def test_pairs_from_documents_applies_every_rule_and_counts_it():
    a_words = "umodzi wa anthu onse ndi wofunika kwambiri pa dziko lapansi lero".split()
    en_words = "the unity of all people is very important in the world today".split()
    src = [Document("d1", "ny", "", [
        Section("Mbiri\u200c", _long(a_words, 4, "h") + " Zochepa."),  # ZWNJ stripped from the title
        Section("Chuma", _long(a_words, 3, "e")),
        Section("Zina", "zochepa kwambiri."),  # too short
    ]), Document("d2", "ny", "", [Section("Mbiri", _long(a_words, 3, "h"))])]
    tgt = [Document("d1", "en", "", [
        Section("Economy", _long(en_words, 3, "e")),
        Section("History", _long(en_words, 4, "h") + " Short."),
        Section("Other", "too short."),
    ])]
    names = {"Mbiri": 0, "History": 0, "Chuma": 1, "Economy": 1, "Zina": 2, "Other": 2}

    def encode(titles, lang):
        assert lang in ("ny", "en")
        return np.eye(3)[[names[t] for t in titles]]

    res = pairs_from_documents(src, tgt, encode, min_section_chars=100, max_short_words=10)
    assert res.counts["documents without a counterpart (skipped)"] == 1
    assert res.counts["section pairs matched by title"] == 3
    assert res.counts["section pairs dropped: a text of ≤ 100 characters"] == 1
    assert res.counts["sentence pairs dropped: a side of ≤ 10 words"] == 1  # "Zochepa." / "Short."
    assert res.counts["sentence pairs kept"] == 7 == len(res.triplets)
    for (anchor, pos, neg), (_, s_title, t_title) in zip(res.triplets, res.sources):
        assert anchor[-3:] == pos[-3:]  # the n-th sentence with the n-th: same section tag and index
        assert names[s_title.replace("\u200c", "")] == names[t_title]
        assert neg is not None and neg not in [p for (_, p, _), (_, _, t) in zip(res.triplets, res.sources)
                                               if t == t_title]  # from another section
    with pytest.raises(XlsentError, match="both sides are 'ny'"):
        pairs_from_documents(src, src, encode)
    with pytest.raises(XlsentError, match="one language"):
        pairs_from_documents(src + [Document("d3", "sw", "", [Section("x", "y")])], tgt, encode)


def test_document_reader_errors_name_file_and_line(tmp_path):
    p = tmp_path / "d.jsonl"
    good = {"id": "a", "lang": "ny", "title": "A", "sections": [{"title": "T", "text": "x"}]}
    for bad, msg in [
        ("{not json", "invalid JSON"),
        (json.dumps({**good, "sections": []}), "has no sections"),
        (json.dumps({**good, "sections": [{"title": " ", "text": "x"}]}), "section 1 of document 'a' has no title"),
        (json.dumps({k: v for k, v in good.items() if k != "lang"}), "missing or empty 'lang'"),
    ]:
        p.write_text(json.dumps(good) + "\n" + bad + "\n", encoding="utf-8")
        with pytest.raises(InputFormatError, match=f"d.jsonl:2: .*{msg}"):
            read_documents(p)
    p.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match="already on line 1"):
        read_documents(p)
    p.write_text("\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match="empty"):
        read_documents(p)


def test_cli_pairs_from_bundled_udhr_documents(tiny_model, tmp_path):
    out = tmp_path / "t.tsv"
    r = xlsent("data", "pairs-from-documents", "udhr:zul", "udhr:eng", "-o", str(out), "-m", str(tiny_model))
    assert r.returncode == 0, r.stderr
    rows = out.read_text(encoding="utf-8").splitlines()
    assert rows[0] == "anchor\tpositive\tnegative" and len(rows) > 20
    counts = json.loads((tmp_path / "t.tsv.json").read_text())["counts"]
    assert counts["section pairs matched by title"] == 31  # language-neutral titles: exact matches
    assert counts["sentence pairs kept"] == len(rows) - 1


def test_filter_pairs_counts_filters_and_keeps_top_n(tiny_model, tmp_path):
    mined = tmp_path / "mined.tsv"
    mined.write_text("".join([
        "1.50\tgod is good and the river is wide\tmulungu ndi wabwino mtsinje madzi kuwala\n",
        "1.20\tthe lord said unto he she they we\tmulungu ndi wabwino ndi madzi dziko\n",
        "1.30\tgod is good\tmulungu ndi wabwino\n",  # < 5 words
        "1.40\tgod is good and the river <b>\tmulungu ndi wabwino mtsinje madzi\n",  # special character
        "1.10\twater light earth heaven and of in\tmadzi kuwala dziko kumwamba ndi wabwino\n",
    ]), encoding="utf-8")
    out = tmp_path / "top.tsv"
    r = xlsent("data", "filter-pairs", str(mined), "-o", str(out), "--top", "2", "--rank-by", "score", "--preset",
               "paper")  # the paper's filter (the defaults keep every clean pair: tests/test_filter_defaults.py)
    assert r.returncode == 0, r.stderr
    assert "min-words removed 1" in r.stdout and "special-chars removed 1" in r.stdout
    assert "top 2 by score: removed 1" in r.stdout
    assert [line.split("\t")[0] for line in out.read_text().splitlines()] == ["1.500000", "1.200000"]
    for rank_by in ("cosine", "margin"):
        r = xlsent("data", "filter-pairs", str(mined), "-o", str(out), "--top", "0", "--rank-by", rank_by,
                   "-m", str(tiny_model), "--no-special", "--min-words", "5")
        assert r.returncode == 0, r.stderr
        scores = [float(line.split("\t")[0]) for line in out.read_text().splitlines()]
        assert len(scores) == 4 and scores == sorted(scores, reverse=True)
    plain = tmp_path / "plain.tsv"
    plain.write_text("a b c d e\tf g h i j\n", encoding="utf-8")
    bad = xlsent("data", "filter-pairs", str(plain), "-o", str(out), "--rank-by", "score")
    assert bad.returncode == 2 and "needs a mined file" in bad.stderr


def test_eval_documents_on_udhr_articles(tiny_model, tmp_path):
    out = tmp_path / "d.json"
    r = xlsent("eval", "documents", "-m", str(tiny_model), "--dataset", "udhr-articles:zul", "-o", str(out),
               "--resamples", "1000")
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert d["n"] == 31 and d["chunk_words"] == 20
    for side in ("src2tgt", "tgt2src"):
        lo, hi = d[side]["ci95"]["p@1"]
        assert lo <= d[side]["p@1"] <= hi and d[side]["p@10"] >= d[side]["p@5"] >= d[side]["p@1"]
    # a case whose answer is known: ten paragraphs (chunked: 30 words) matched against themselves, two of them
    # given each other's as their translation — every paragraph finds its own text, so P@1 is 8/10 both ways
    import random

    from conftest import WORDS

    rng = random.Random(0)
    paras = [" ".join(rng.choices(WORDS, k=30)) for _ in range(10)]
    other = [paras[1], paras[0], *paras[2:]]
    (tmp_path / "p.tsv").write_text("en\tny\n" + "".join(f"{a}\t{b}\n" for a, b in zip(paras, other)),
                                    encoding="utf-8")
    r = xlsent("eval", "documents", "-m", str(tiny_model), "--pairs", str(tmp_path / "p.tsv"), "-o", str(out),
               "--resamples", "100")
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert d["n"] == 10 and d["src2tgt"]["p@1"] == d["tgt2src"]["p@1"] == pytest.approx(0.8), d
    assert d["src2tgt"]["p@10"] == d["tgt2src"]["p@10"] == 1.0  # a pool of ten
    bad = xlsent("eval", "documents", "-m", str(tiny_model), "--dataset", "wiki")
    assert bad.returncode == 2 and "unknown dataset 'wiki'" in bad.stderr
