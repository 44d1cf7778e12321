"""Text that is not Unicode, wherever text enters (issue 48): every reader and the Python API.

A JSON string may spell a lone surrogate (``"\\ud800"``: valid JSON, not text). Each reader gives one line naming
the file and the line, or — with ``on_bad_lines="skip"`` — counts and skips it; the Python API names the input's
index; both before any model loads. Then the same idea property-based: random bytes and escaped JSON in every
format end in a returned result holding only Unicode text, or in one :class:`XlsentError` line — never another
exception; and a file holding text that is not Unicode where the reader reads is never read without a word: refused,
or (a reader told to skip bad lines) its bad lines counted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xlsent.utils.errors import XlsentError

BAD = "bad \ud800 here"
FUZZ = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])


def jsonl(path: Path, *rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="ascii")  # "\ud800" as JSON writes it
    return path


def assert_one_line(exc: BaseException, path: Path | None = None) -> None:
    text = str(exc)
    assert "\n" not in text and text.encode("utf-8"), text  # printable anywhere
    if path is not None:
        assert path.name in text, text


# -- each reader: one line naming the file and the line, or a counted skip -------------------------------------

def test_pairs_jsonl_names_the_line_or_counts_the_skip(tmp_path):
    from xlsent.data.readers import read_pairs

    p = jsonl(tmp_path / "pairs.jsonl", {"src": "god is good", "tgt": "mulungu"}, {"src": BAD, "tgt": "x"},
              {"src": "water", "tgt": "madzi", "note": "\udc00"})
    with pytest.raises(XlsentError, match=r"pairs.jsonl:2: text that is not Unicode \(a lone surrogate U\+D800 at "
                       r"character 5 of 'src'\) — .*--on-bad-lines skip") as err:
        read_pairs(p)
    assert_one_line(err.value, p)
    ds, report = read_pairs(p, on_bad_lines="skip")
    assert list(ds["src"]) == ["god is good"] and report.skipped == {"text that is not Unicode (a lone surrogate)": 2}
    assert report.lines() == [f"{p}: skipped 2 line(s): text that is not Unicode (a lone surrogate)"]


def test_text_source_names_the_row(tmp_path):
    from xlsent.data.text_source import open_source

    p = jsonl(tmp_path / "texts.jsonl", {"text": "fine"}, {"text": "fine too", "id": "a"}, {"text": BAD})
    source = open_source(p)
    with pytest.raises(XlsentError, match=r"texts.jsonl:3: text that is not Unicode .* of 'text'"):
        source.read(0, 3)
    q = jsonl(tmp_path / "ids.jsonl", {"text": "fine", "id": "\udfff"})
    with pytest.raises(XlsentError, match=r"ids.jsonl:1: .* of 'id'"):
        open_source(q, id_column="id")


def test_documents_structural_words_conll_and_titles_name_the_line(tmp_path):
    from xlsent.data.conll import read_conll
    from xlsent.data.documents import read_documents
    from xlsent.data.multiple_choice import read_choices
    from xlsent.data.structural import read_spans

    doc = {"id": "a", "lang": "en", "title": "T", "sections": [{"title": "S", "text": "ok"}, {"title": "S2",
                                                                                               "text": BAD}]}
    p = jsonl(tmp_path / "docs.jsonl", doc)
    with pytest.raises(XlsentError, match=r"docs.jsonl:1: .*U\+D800 at character 5 of 'sections\[1\]\.text'"):
        read_documents(p)
    span = {"src": BAD, "tgt": "x", "spans": [{"src_chars": [0, 1], "tgt_chars": [0, 1]}]}
    p = jsonl(tmp_path / "spans.jsonl", span)
    with pytest.raises(XlsentError, match=r"spans.jsonl:1: not a structural-words record \(text that is not Unicode"):
        read_spans(p)
    p = tmp_path / "spans2.jsonl"
    p.write_bytes(json.dumps(span).replace("\\ud800", "").encode() + b'\n{"src": "\xed\xa0\x80"}\n')  # not UTF-8
    with pytest.raises(XlsentError, match=r"spans2.jsonl:2: invalid UTF-8"):
        read_spans(p)
    p = tmp_path / "tags.conll"
    p.write_bytes("god\tO\nis\tO\n\nmul\xed\xa0\x80ungu\tB-PER\n".encode("latin-1"))
    with pytest.raises(XlsentError, match=r"tags.conll:4: invalid UTF-8"):
        read_conll(p)
    p = tmp_path / "titles.tsv"
    p.write_bytes(b"text\tgold\tother\nt\xffext\tgold\tother\n")
    with pytest.raises(XlsentError, match=r"titles.tsv:2: invalid UTF-8"):
        read_choices(p)


def test_the_python_api_names_the_input_before_any_model_loads(monkeypatch, tmp_path):
    import sentence_transformers

    import xlsent

    def refuse(*a, **k):
        raise AssertionError("a model loaded before the input was checked")

    monkeypatch.setattr(sentence_transformers.SentenceTransformer, "__init__", refuse)
    cases = [
        (lambda: xlsent.embed(["fine", BAD], model="e5-small"), r"texts\[1\]: text that is not Unicode"),
        (lambda: xlsent.mine(["a", "b"], ["c", BAD], model="e5-small"), r"tgt\[1\]: text that is not Unicode"),
        (lambda: xlsent.align([BAD], ["x"], model="e5-small"), r"src_sentences\[0\]: text that is not Unicode"),
        (lambda: xlsent.evaluate("e5-small", "retrieval", dataset="udhr:nya", queries=2,
                                 tgt_distractors=["x", BAD]), r"tgt_distractors\[1\]"),
        (lambda: xlsent.calibrate(tmp_path, {"nya": ["ok", BAD]}), r"texts\['nya'\]\[1\]"),
    ]
    for call, message in cases:
        with pytest.raises(XlsentError, match=message) as err:
            call()
        assert_one_line(err.value)
        assert "U+D800 at character 5" in str(err.value)


# -- property-based: random bytes and escaped JSON in every format -------------------------------------------------

SURROGATE = st.integers(0xD800, 0xDFFF).map(chr)
CHAR = st.one_of(st.characters(), SURROGATE, st.sampled_from(["\t", "\r", "\x00", "\u2028", "\ufeff", " ", "é"]))
TEXT = st.one_of(st.lists(CHAR, max_size=12).map("".join), st.sampled_from(["", "god is good", "O", "B-PER", "3.5"]))
VALUE = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), TEXT),
                     lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
                     max_leaves=8)
FIELDS = st.sampled_from(["src", "tgt", "text", "id", "lang", "title", "sections", "spans", "src_lang", "tgt_lang",
                          "src_chars", "tgt_chars", "extra"])
OBJECT = st.dictionaries(FIELDS, st.one_of(TEXT, VALUE, st.lists(st.dictionaries(FIELDS, st.one_of(TEXT, VALUE),
                                                                                  max_size=3), max_size=3)),
                         max_size=6)
LINE = st.one_of(
    st.binary(max_size=24),  # random bytes
    OBJECT.map(lambda o: json.dumps(o).encode("ascii")),  # escaped JSON: lone surrogates as \udXXX
    VALUE.map(lambda v: json.dumps(v).encode("ascii")),
    st.lists(TEXT, min_size=1, max_size=4).map(lambda xs: "\t".join(xs).encode("utf-8", "surrogatepass")),
    st.sampled_from([b'{"src": "god is good", "tgt": "mulungu"}', b"god is good\tmulungu ndi wabwino",
                     b"god\tB-PER", b"", b"a\tb\t3.5", b'{"text": "fine"}', b'{"src": "\\ud800", "tgt": "x"}']),
)
# well-formed records of each format whose texts may hold anything: a file of one kind of them
RECORDS = [
    st.builds(lambda s, t: {"src": s, "tgt": t}, TEXT, TEXT),
    st.builds(lambda t, i: {"text": t, "id": i}, TEXT, TEXT),
    st.builds(lambda i, t, x: {"id": i or "d", "lang": "en", "title": t, "sections": [{"title": t or "S", "text": x}]},
              TEXT, TEXT, TEXT),
    st.builds(lambda s, t: {"src": s, "tgt": t, "spans": [{"src_chars": [0, 1], "tgt_chars": [0, 1]}]}, TEXT, TEXT),
]
RECORD_LINES = st.sampled_from(RECORDS).flatmap(
    lambda record: st.lists(record.map(lambda r: json.dumps(r).encode("ascii")), min_size=1, max_size=6))
CONTENT = st.one_of(st.lists(LINE, min_size=0, max_size=8), RECORD_LINES).map(lambda lines: b"\n".join(lines) + b"\n")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)
    elif hasattr(value, "__dict__"):
        yield from _strings(vars(value))


def _dataset(result):
    ds, report = result
    assert report.rows == len(ds)
    return [ds[c] for c in ds.column_names]


def _skipped(result):
    """A reader told to skip bad lines: what it read, and how many lines it says it skipped."""
    data, report = result
    assert report.rows == len(data)
    return {"data": [data[c] for c in data.column_names], "skipped": sum(report.skipped.values())}


def _source(path: Path):
    from xlsent.data.text_source import open_source

    source = open_source(path)
    return source.read(0, source.rows)


def _readers():
    from xlsent.data.conll import read_conll
    from xlsent.data.dictionary import BilingualDictionary
    from xlsent.data.documents import read_documents
    from xlsent.data.labelled import read_labelled
    from xlsent.data.multiple_choice import read_choices
    from xlsent.data.readers import read_pairs, read_sentences
    from xlsent.data.structural import read_spans
    from xlsent.data.sts import read_sts
    from xlsent.data.triplets import read_triplets

    return {
        "pairs.tsv": lambda p: _dataset(read_pairs(p)),
        "pairs-skip.tsv": lambda p: _skipped(read_pairs(p, on_bad_lines="skip")),
        "pairs.jsonl": lambda p: _dataset(read_pairs(p)),
        "pairs-skip.jsonl": lambda p: _skipped(read_pairs(p, on_bad_lines="skip")),
        "moses.en": lambda p: _skipped(read_pairs(f"{p},{p}", on_bad_lines="skip")),
        "documents.jsonl": read_documents,
        "texts.txt": _source,
        "texts.tsv": _source,
        "texts.jsonl": _source,
        "sentences.txt": read_sentences,
        "spans.jsonl": read_spans,
        "tags.conll": lambda p: read_conll(p, scheme="plain"),
        "titles.tsv": read_choices,
        "sts.tsv": lambda p: _skipped(read_sts(p, on_bad_lines="skip")),
        "triplets.tsv": lambda p: _skipped(read_triplets(p, on_bad_lines="skip")),
        "labelled.tsv": read_labelled,
        "dictionary.tsv": BilingualDictionary.from_tsv,
    }


#: the fields a JSONL reader reads (a text that is not Unicode in another field is not read: texts.jsonl's ``id``
#: without ``id_column``); None: the whole record, every field checked
READ_FIELDS = {"texts.jsonl": ("text",)}


def not_text(content: bytes, name: str) -> bool:
    """Whether ``content`` holds text that is not Unicode where the reader ``name`` reads: bytes that are not UTF-8
    or a NUL byte; in JSON lines also an escaped lone surrogate (``\\ud800``)."""
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return True
    if "\x00" in text:
        return True
    if not name.endswith(".jsonl"):
        return False
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        fields = READ_FIELDS.get(name)
        if fields is not None:
            record = [record.get(f) for f in fields] if isinstance(record, dict) else []
        if any(0xD800 <= ord(c) <= 0xDFFF for s in _strings(record) for c in s):
            return True
    return False


@pytest.mark.parametrize("name", sorted(_readers()))
def test_any_bytes_end_in_text_or_one_line(name, tmp_path):
    read = _readers()[name]
    path = tmp_path / name

    @FUZZ
    @given(content=CONTENT)
    def run(content):
        for stale in tmp_path.glob(name + "*"):  # the file and any cache beside it (line offsets)
            stale.unlink()
        path.write_bytes(content)
        bad = not_text(content, name)
        drawn.append(bad)
        try:
            result = read(path)
        except XlsentError as exc:
            assert_one_line(exc)
            return
        for s in _strings(result):
            s.encode("utf-8")  # only Unicode text comes out
        if bad:  # read without an error: the reader skips bad lines, and it must have counted one
            assert isinstance(result, dict) and result["skipped"] >= 1, (content[:300], result)

    drawn: list[bool] = []
    run()
    assert any(drawn) and not all(drawn)  # files with text that is not Unicode, and files without
