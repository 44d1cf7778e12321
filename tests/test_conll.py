"""CoNLL/BIO reading and writing, silver projection, stop words."""

from __future__ import annotations

import gzip

import pytest

from xlsent.data.conll import read_conll, write_conll
from xlsent.data.projection import (ProjectionStats, entity_spans, grow_diag_final_and, project_entities, project_pos,
                                    tokenize_words)
from xlsent.utils.errors import InputFormatError, XlsentError


def _write(tmp_path, text, name="x.conll"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_reads_tabs_spaces_docstart_and_blank_lines(tmp_path):
    p = _write(tmp_path, "-DOCSTART- O\n\nYesu\tB-PER\nanati O\n.\tO\n\n\nku B-LOC\nYerusalemu I-LOC\n")
    c = read_conll(p)
    assert c.tokens == [["Yesu", "anati", "."], ["ku", "Yerusalemu"]]
    assert c.tags == [["B-PER", "O", "O"], ["B-LOC", "I-LOC"]]
    assert c.lines == [3, 8]
    assert c.labels() == ["LOC", "PER"] and c.repairs == 0


def test_i_after_o_is_repaired_and_counted_or_an_error_with_strict(tmp_path):
    p = _write(tmp_path, "a O\nb I-PER\nc I-PER\nd I-LOC\n\ne I-ORG\n")
    c = read_conll(p)
    assert c.tags == [["O", "B-PER", "I-PER", "B-LOC"], ["B-ORG"]]
    assert c.repairs == 3 and "3 I- tag(s)" in c.notes[0]
    with pytest.raises(InputFormatError, match=r"x.conll:2: I-PER follows O"):
        read_conll(p, strict=True)


def test_iob1_is_converted_without_counting_repairs(tmp_path):
    p = _write(tmp_path, "John I-PER\nSmith I-PER\nMary B-PER\nsaw O\nParis I-LOC\n")
    c = read_conll(p, scheme="iob1")
    assert c.tags == [["B-PER", "I-PER", "B-PER", "O", "B-LOC"]] and c.repairs == 0


@pytest.mark.parametrize("text,line,message", [
    ("a O\nb\n", 2, "no tag on this line"),
    ("a O\nb S-PER\n", 2, "BIOES/BILOU"),
    ("a O\nb E-PER\n", 2, "BIOES/BILOU"),
    ("a PER\n", 1, "unknown tag scheme"),
    ("a O\n\nb B-\n", 3, "unknown tag scheme"),
])
def test_malformed_lines_name_file_and_line(tmp_path, text, line, message):
    p = _write(tmp_path, text)
    with pytest.raises(InputFormatError, match=message) as exc:
        read_conll(p)
    assert exc.value.line == line and str(p) in str(exc.value)


def test_empty_file_missing_file_unknown_scheme_and_bad_column(tmp_path):
    with pytest.raises(InputFormatError, match="no sentences"):
        read_conll(_write(tmp_path, "\n\n-DOCSTART- O\n"))
    with pytest.raises(XlsentError, match="no such file"):
        read_conll(tmp_path / "nope.conll")
    with pytest.raises(XlsentError, match="unknown tag scheme 'bioes'"):
        read_conll(_write(tmp_path, "a O\n"), scheme="bioes")
    with pytest.raises(InputFormatError, match="no column 3"):
        read_conll(_write(tmp_path, "a NOUN O\n"), tag_column=3)


def test_plain_scheme_and_tag_column_read_pos_columns(tmp_path):
    p = _write(tmp_path, "Yesu\tPROPN\tB-PER\nanati\t_\tO\n")
    pos = read_conll(p, scheme="plain", tag_column=1)
    assert pos.tags == [["PROPN", "_"]] and pos.tag_set() == ["PROPN"]
    assert read_conll(p).tags == [["B-PER", "O"]]


def test_write_roundtrip_gzip_and_bad_tokens(tmp_path):
    toks, tags = [["a", "b"], ["c"]], [["B-PER", "I-PER"], ["O"]]
    write_conll(tmp_path / "o.conll.gz", toks, tags)
    assert gzip.decompress((tmp_path / "o.conll.gz").read_bytes()).decode() == "a\tB-PER\nb\tI-PER\n\nc\tO\n\n"
    c = read_conll(tmp_path / "o.conll.gz")
    assert c.tokens == toks and c.tags == tags
    with pytest.raises(XlsentError, match="tokens but 1 tags"):
        write_conll(tmp_path / "bad.conll", [["a", "b"]], [["O"]])
    with pytest.raises(XlsentError, match="holds a tab"):
        write_conll(tmp_path / "bad.conll", [["a\tb"]], [["O"]])


def test_grow_diag_final_and_on_hand_links():
    fwd = {(0, 0), (1, 2), (2, 2)}
    rev = {(0, 0), (1, 1), (1, 2)}
    # intersection {(0,0),(1,2)}; (1,1) grows as a neighbour of (1,2) because target 1 is unaligned;
    # (2,2) is a neighbour too, and source 2 is unaligned, so it grows as well
    assert grow_diag_final_and(fwd, rev, 3, 3) == {(0, 0), (1, 1), (1, 2), (2, 2)}
    # final-and adds a one-direction link only when both its ends are still unaligned
    assert grow_diag_final_and({(0, 0)}, {(0, 0), (3, 5)}, 4, 6) == {(0, 0), (3, 5)}


def test_projection_on_a_hand_aligned_pair():
    en = "Jesus went to Jerusalem with Simon Peter .".split()
    assert len(en) == 8
    en_ner = ["B-PER", "O", "O", "B-LOC", "O", "B-PER", "I-PER", "O"]
    en_pos = ["PROPN", "VERB", "ADP", "PROPN", "ADP", "PROPN", "PROPN", "PUNCT"]
    ny = tokenize_words("Yesu anapita ku Yerusalemu ndi Simoni Petro .")
    assert ny == ["Yesu", "anapita", "ku", "Yerusalemu", "ndi", "Simoni", "Petro", "."]
    links = {(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7), (1, 2)}
    stats = ProjectionStats()
    assert project_entities(en_ner, ny, links, stats) == ["B-PER", "O", "O", "B-LOC", "O", "B-PER", "I-PER", "O"]
    one_to_one = links - {(1, 2)}
    pos = project_pos(en_pos, ny, {(0, 0), (1, 1), (3, 3), (5, 5), (6, 6)}, stats)
    assert pos == ["PROPN", "VERB", "_", "PROPN", "_", "PROPN", "PROPN", "PUNCT"]
    assert stats.projected == 3 and stats.pos_labelled == 6 and stats.pos_punct == 1
    # a many-to-one link gives no POS: "went" → "anapita" and "ku"
    stats2 = ProjectionStats()
    pos2 = project_pos(en_pos, ny, {(1, 1), (1, 2), (3, 3)}, stats2)
    assert pos2[1] == "_" and pos2[2] == "_" and pos2[3] == "PROPN"
    assert one_to_one  # the intersection is what the build passes


def test_projection_closes_gaps_and_counts_every_drop():
    stats = ProjectionStats()
    # non-contiguous links → min..max span, punctuation trimmed from the edges
    assert project_entities(["B-LOC", "I-LOC"], ["a", "Nyanja", "ya", "Galileya", ","],
                            {(0, 1), (1, 3), (1, 4)}, stats) == ["O", "B-LOC", "I-LOC", "I-LOC", "O"]
    # unaligned entity → the sentence is dropped
    assert project_entities(["B-PER", "O"], ["x", "y"], {(1, 1)}, stats) is None
    # a stray link makes the span too long: 1 source token → 5 target tokens > max(2, 3)
    assert project_entities(["B-PER"], list("abcdef"), {(0, 0), (0, 4)}, stats) is None
    # two entities onto the same target token → overlap
    assert project_entities(["B-PER", "B-LOC"], ["x"], {(0, 0), (1, 0)}, stats) is None
    assert stats.dropped == {"unaligned": 1, "too long": 1, "overlap": 1}
    assert stats.sentences_dropped_ner == 3
    assert entity_spans(["B-PER", "I-PER", "O", "I-LOC", "B-LOC"]) == [(0, 2, "PER"), (3, 4, "LOC"), (4, 5, "LOC")]


def test_stopwords_iso_and_frequency_rule():
    from xlsent.data.stopwords import frequency_stopwords, stopwords_for

    en, note = stopwords_for("en")
    assert "the" in en and "stopwords-iso" in note
    text = [["ndi", "Mulungu", "ndi", "kuti", ","], ["ndi", "kuti", "madzi"]]
    ny, note = stopwords_for("ny", text, top=2)
    assert ny == frozenset({"ndi", "kuti"}) and "most frequent" in note
    assert "," not in frequency_stopwords([[",", ",", "a"]], 5)
    with pytest.raises(XlsentError, match="no list for 'ny'"):
        stopwords_for("ny")


def test_bundled_tagged_sets_are_there_and_labelled():
    from xlsent.data.tagging import BUNDLED_TAGGED, load_tagged

    for name in BUNDLED_TAGGED:
        assert name.startswith(("silver-", "gold-"))
    ja = load_tagged("gold-ner:ja")
    assert len(ja) == 500 and set(ja.labels()) == {"PER", "LOC", "ORG", "MISC"}
    ny = load_tagged("silver-ner:ny:test")
    assert len(ny) > 7000 and {"PER", "LOC"} <= set(ny.labels())
    pos = load_tagged("silver-pos:ny:test", task="pos")
    assert "_" not in pos.tag_set() and "NOUN" in pos.tag_set()
    with pytest.raises(XlsentError, match="unknown tagged dataset"):
        load_tagged("silver-ner:xx:test")
