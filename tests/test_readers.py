from __future__ import annotations

import gzip
import json

import pytest

from xlsent.data.readers import read_jsonl, read_moses, read_pairs, read_tsv
from xlsent.utils.errors import InputFormatError, XlsentError


def test_tsv_header_sets_languages(tmp_path):
    p = tmp_path / "a.tsv"
    p.write_text("en\tny\nhello world\tmoni dziko\ngood day\ttsiku labwino\n", encoding="utf-8")
    ds, report = read_tsv(p)
    assert ds["src"] == ["hello world", "good day"]
    assert ds["tgt_lang"] == ["ny", "ny"]
    assert report.rows == 2 and not report.skipped


def test_tsv_without_header(tmp_path):
    p = tmp_path / "a.tsv"
    p.write_text("Hello there\tMoni\n", encoding="utf-8")
    ds, _ = read_tsv(p)
    assert ds["src"] == ["Hello there"] and ds["src_lang"] == [""]


def test_jsonl_keeps_extra_fields_and_gz(tmp_path):
    p = tmp_path / "a.jsonl.gz"
    rows = [{"src": "a b", "tgt": "c d", "src_lang": "en", "tgt_lang": "ny", "id": "Gen 1:1"}]
    with gzip.open(p, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(json.dumps(r) for r in rows) + "\n")
    ds, _ = read_pairs(p)
    assert ds[0] == rows[0]


def test_moses_pair_languages_from_suffix(tmp_path):
    a, b = tmp_path / "train.en", tmp_path / "train.ny"
    a.write_text("one\ntwo\n", encoding="utf-8")
    b.write_text("chimodzi\nziwiri\n", encoding="utf-8")
    ds, _ = read_pairs(f"{a},{b}")
    assert ds["tgt"] == ["chimodzi", "ziwiri"] and ds["src_lang"][0] == "en" and ds["tgt_lang"][0] == "ny"


@pytest.mark.parametrize(
    "content, line, words",
    [
        (b"a\tb\nno tab here\n", 2, "no tab"),
        (b"a\tb\nx\ty\tz\n", 2, "3 tab-separated fields"),
        (b"a\tb\n\tonly target\n", 2, "empty source side"),
        (b"a\tb\nsource\t  \n", 2, "empty target side"),
        (b"a\tb\nbad \xff byte\tx\n", 2, "invalid UTF-8"),
        (b"a\tb\nbinary\x00junk\tx\n", 2, "a NUL byte (byte 7 of the line)"),
    ],
)
def test_tsv_bad_lines_name_file_and_line(tmp_path, content, line, words):
    p = tmp_path / "bad.tsv"
    p.write_bytes(content)
    with pytest.raises(InputFormatError) as exc:
        read_tsv(p)
    assert f"{p}:{line}" in str(exc.value) and words in str(exc.value)


def test_skip_counts_every_bad_line(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_bytes(b"a\tb\nno tab\nc\td\n\tx\nx\ty\tz\n")
    ds, report = read_tsv(p, on_bad_lines="skip")
    assert ds["src"] == ["a", "c"]
    assert report.skipped == {"no tab between source and target": 1, "empty source side": 1, "3 tab-separated fields, expected 2": 1}
    assert sum(report.skipped.values()) + report.rows == 5


def test_a_nul_byte_is_corruption_named_or_skipped_and_counted(tmp_path):
    from xlsent.data.readers import read_sentences

    p = tmp_path / "nul.tsv"
    p.write_bytes(b"a\tb\nbin\x00ary\tx\nc\td\n")
    with pytest.raises(InputFormatError, match="nul.tsv:2: a NUL byte.*--on-bad-lines skip"):
        read_tsv(p)
    ds, report = read_tsv(p, on_bad_lines="skip")
    assert ds["src"] == ["a", "c"] and report.skipped == {"a NUL byte": 1}
    a, b = tmp_path / "x.en", tmp_path / "x.ny"  # Moses: the pair with a corrupt side goes, the rest stay aligned
    a.write_bytes(b"one\ntw\x00o\nthree\n")
    b.write_bytes(b"chimodzi\nziwiri\nzitatu\n")
    ds, report = read_pairs(f"{a},{b}", on_bad_lines="skip")
    assert list(zip(ds["src"], ds["tgt"])) == [("one", "chimodzi"), ("three", "zitatu")]
    t = tmp_path / "texts.txt"  # a text corpus: always an error
    t.write_bytes(b"one\n\x00\x00\x00\n")
    with pytest.raises(InputFormatError, match="texts.txt:2: a NUL byte"):
        read_sentences(t)


def test_ragged_moses(tmp_path):
    a, b = tmp_path / "x.en", tmp_path / "x.ny"
    a.write_text("1\n2\n3\n", encoding="utf-8")
    b.write_text("1\n2\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match="ragged Moses pair: x.en has 3 lines, x.ny has 2"):
        read_moses(a, b)


def test_empty_and_missing_files(tmp_path):
    empty = tmp_path / "e.tsv"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match="empty"):
        read_tsv(empty)
    with pytest.raises(XlsentError, match="no such file"):
        read_tsv(tmp_path / "missing.tsv")


def test_jsonl_bad_json_and_missing_fields(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text('{"src": "a", "tgt": "b"}\n{"src": "a"\n', encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"a.jsonl:2: invalid JSON"):
        read_jsonl(p)
    p.write_text('{"src": "a", "tgt": "b"}\n{"source": "a"}\n', encoding="utf-8")
    with pytest.raises(InputFormatError, match=r":2: missing string fields"):
        read_jsonl(p)


def test_unknown_bad_line_policy(tmp_path):
    p = tmp_path / "a.tsv"
    p.write_text("a\tb\n", encoding="utf-8")
    with pytest.raises(XlsentError, match="--on-bad-lines"):
        read_tsv(p, on_bad_lines="ignore")
