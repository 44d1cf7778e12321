"""The command line as a user runs it: real subprocesses, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest


def xlsent(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xlsent.cli.main", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def test_eval_retrieval_writes_json(tiny_model, pairs_tsv, tmp_path):
    out = tmp_path / "r.json"
    r = xlsent("eval", "retrieval", "--model", str(tiny_model), "--pairs", str(pairs_tsv), "--output", str(out),
               "--similarity", "margin")
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["n"] == 40 and data["similarity"] == "margin"
    assert set(data["src2tgt"]["ci95"]) == {"p@1", "p@5", "p@10"}
    assert "src→tgt P@1" in r.stdout


def test_eval_many_languages_gives_a_list(tiny_model, tmp_path):
    p = tmp_path / "multi.jsonl"
    rows = [{"src": f"god is good {w}", "tgt": f"mulungu {w}", "src_lang": "en", "tgt_lang": lang}
            for lang in ("aa", "bb") for w in ("madzi", "dziko", "nyumba", "chala")]
    p.write_text("\n".join(json.dumps(x) for x in rows) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    r = xlsent("eval", "retrieval", "--model", str(tiny_model), "--pairs", str(p), "--output", str(out))
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert [d["tgt_lang"] for d in data] == ["aa", "bb"] and "mean" in r.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["eval", "retrieval", "--model", "no-such-model", "--dataset", "udhr:nya"], "unknown model 'no-such-model'"),
        (["eval", "retrieval", "--model", "e5-small"], "give exactly one of --pairs FILE or --dataset NAME"),
        (["eval", "retrieval", "--model", "e5-small", "--dataset", "udhr", "--similarity", "jaccard"], "unknown --similarity"),
        (["data", "stats", "missing.tsv"], "missing.tsv: no such file"),
        (["train", "siamese", "-o", "x", "--set", "optim.epoch=1"], "unknown config key 'optim.epoch'"),
    ],
)
def test_user_errors_are_one_line_without_traceback(args, message):
    r = xlsent(*args)
    assert r.returncode == 2
    assert message in r.stderr.replace("\n", " ")
    assert "Traceback" not in r.stderr


def test_bad_corpus_line_names_file_and_line(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_text("en\tny\ngood\tchabwino\nno tab\n", encoding="utf-8")
    r = xlsent("data", "stats", str(p))
    assert r.returncode == 2 and f"{p}:3: no tab" in r.stderr.replace("\n", "")
    r = xlsent("data", "stats", str(p), "--on-bad-lines", "skip", "--json")
    assert r.returncode == 0
    assert json.loads(r.stdout)["pairs"] == 1 and "skipped 1 line(s): no tab" in r.stdout


def test_embed_roundtrip(tiny_model, tmp_path):
    inp = tmp_path / "in.txt"
    inp.write_text("god is good\nthe river is wide and the water is light\nmadzi\n", encoding="utf-8")
    out = tmp_path / "e.npy"
    r = xlsent("embed", "--model", str(tiny_model), "--input", str(inp), "--output", str(out), "--batch-size", "2")
    assert r.returncode == 0, r.stderr
    from sentence_transformers import SentenceTransformer

    expect = SentenceTransformer(str(tiny_model), device="cpu").encode(inp.read_text().splitlines())
    np.testing.assert_allclose(np.load(out), expect, atol=1e-5)
    inp.write_text("a\n\nb\n", encoding="utf-8")
    r = xlsent("embed", "--model", str(tiny_model), "--input", str(inp), "--output", str(out))
    assert r.returncode == 2 and "in.txt:2: blank line" in r.stderr.replace("\n", "")


def test_data_stats_tokenizer_columns(tiny_model):
    r = xlsent("data", "stats", "udhr:nya", "--model", str(tiny_model), "--json")
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout)
    nya = stats["languages"]["nya"]
    assert stats["pairs"] == 60 and nya["unk_rate"] > 0.5 and nya["pieces_per_word"] > 0


def test_models_list_and_data_list():
    assert "e5-small" in xlsent("models", "list").stdout
    assert "bible-en-ny:test" in xlsent("data", "list").stdout
