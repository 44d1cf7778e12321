"""The one dataset registry (xlsent.data.registry): every bundled name is declared once, with its loader, files,
languages, splits, licence and label kind; every bundled file belongs to a declaration; `xlsent data list` shows
every name."""

from __future__ import annotations

import json
import shutil

import pytest

from xlsent.data import registry
from xlsent.data.bundled import BUNDLED, data_dir


def test_every_declaration_is_complete():
    seen = set()
    for e in registry.entries():
        assert e.kind in registry.KINDS, e
        assert e.labels in registry.LABELS, e
        assert e.licence.strip() and e.description.strip() and e.languages.strip(), e
        assert e.kind == "resource" or e.splits, e
        assert callable(e.load_function()), e.loader
        for f in e.files:
            assert (data_dir() / f).is_file(), f"{e.name}: {f} is missing from the package"
        assert (e.kind, e.name) not in seen, f"{e.kind} {e.name} declared twice"
        seen.add((e.kind, e.name))


def test_every_bundled_file_is_declared():
    assert registry.undeclared_files() == []


def test_an_undeclared_file_is_caught(tmp_path):
    root = tmp_path / "bundled_data"
    shutil.copytree(data_dir(), root, ignore=lambda d, names: [n for n in names if n.endswith(".gz")])
    (root / "udhr" / "new-set.jsonl.gz").write_bytes(b"")
    assert "udhr/new-set.jsonl.gz" in registry.undeclared_files(root)


def test_the_old_tables_are_registered():
    from xlsent.data.alignment import BIBLE_ALIGN
    from xlsent.data.structural import BUNDLED_SPANS
    from xlsent.data.tagging import BUNDLED_TAGGED

    for kind, names in (("pairs", BUNDLED), ("tagged", BUNDLED_TAGGED), ("spans", BUNDLED_SPANS),
                        ("alignment", BIBLE_ALIGN)):
        assert {e.name for e in registry.entries(kind)} == set(names), kind
    for kind, name in (("mining", "bible"), ("mining", "udhr"), ("mining", "udhr-dev"), ("labelled", "bible-genre"),
                       ("documents", "bible-chapters"), ("documents", "udhr-articles")):
        assert registry.find(name, kind) is not None, (kind, name)


def test_resolve_names_and_languages():
    r = registry.resolve("udhr-all:test:chr")
    assert (r.entry.name, r.entry.kind, r.lang) == ("udhr-all:test", "pairs", "chr")
    assert registry.resolve("udhr:zul", "mining").entry.kind == "mining"
    assert registry.resolve("udhr:zul").entry.kind == "pairs"  # the first kind that declares the name
    assert registry.is_by_language("udhr") and not registry.is_by_language("udhr:nya")
    assert not registry.is_by_language("bible-en-ny:test")
    assert registry.selects_language("udhr:nya", "pairs") and not registry.selects_language("udhr", "pairs")
    assert registry.find("bible-en-ny:test:nya") is None  # one language pair: no NAME:CODE
    assert registry.find("udhr-articles", "documents").lang == ""
    with pytest.raises(Exception, match="unknown mining dataset 'wiki'"):
        registry.resolve("wiki", "mining")
    with pytest.raises(Exception, match="unknown dataset kind"):
        registry.entries("nope")


@pytest.mark.parametrize("name,kind", [("udhr:nya", "pairs"), ("bible-en-ny:dev", "pairs"), ("gold-ner:ja", "tagged"),
                                       ("structural-en-ny:test", "spans"), ("udhr-articles:nya", "documents"),
                                       ("bible-chapters", "documents"), ("udhr:nya", "sections"),
                                       ("stopwords-iso", "resource")])
def test_bundled_sets_load(name, kind):
    data = registry.load(name, kind)
    assert data is not None and len(data) > 0
    if kind == "documents":
        src, tgt, sl, tl = data
        assert len(src) == len(tgt) > 0 and sl == "eng"


def test_every_pairs_set_loads():
    for e in registry.entries("pairs"):
        assert len(e.load()) > 0, e.name


def test_data_list_shows_every_name():
    from test_cli import xlsent

    out = xlsent("data", "list", "--json")
    assert out.returncode == 0, out.stderr
    listed = {(r["kind"], r["name"]) for r in json.loads(out.stdout)}
    assert listed == {(e.kind, e.name) for e in registry.entries()}
    table = xlsent("data", "list").stdout
    for e in registry.entries():
        assert e.name in table, e.name
    mining = json.loads(xlsent("data", "list", "--kind", "mining", "--json").stdout)
    assert {r["name"] for r in mining} == {"bible", "udhr", "udhr-dev"}
