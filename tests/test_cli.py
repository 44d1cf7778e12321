"""The command line as a user runs it: the console script's ``main()`` with her arguments, exit codes, one-line
errors. It runs in the test's process (a subprocess would spend ~8 s importing torch each time); the tests
that need a fresh process (a saved model reloaded, a killed run resumed, torchrun) start one themselves."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import traceback

import numpy as np
import pytest

from xlsent.utils.errors import XlsentError


def xlsent(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``xlsent ARGS`` through ``xlsent.cli.main.main``: its exit code, stdout and stderr (an uncaught exception
    is exit code 1 with its traceback on stderr, as from the console script). The environment, ``sys.argv``,
    torch's thread count and the warning hook are restored afterwards."""
    import warnings

    import torch

    from xlsent.cli import main as cli_main

    out, err = io.StringIO(), io.StringIO()
    saved = (dict(os.environ), sys.argv, torch.get_num_threads(), warnings.showwarning)
    os.environ.update({"COLUMNS": "200", **(env or {})})
    sys.argv, code = ["xlsent", *args], 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli_main.main()
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else int(e.code is not None)
            except Exception:  # noqa: BLE001 — what the console script would print
                traceback.print_exc()
                code = 1
    finally:
        os.environ.clear()
        os.environ.update(saved[0])
        sys.argv = saved[1]
        torch.set_num_threads(saved[2])
        warnings.showwarning = saved[3]
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


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
    r = xlsent("embed", "--model", str(tiny_model), "--input", str(inp), "--output", str(out), "--batch-size", "2",
               "--dtype", "fp32")  # sentence-transformers' fp32 vectors (auto is bf16 on a CPU with AMX)
    assert r.returncode == 0, r.stderr
    from sentence_transformers import SentenceTransformer

    expect = SentenceTransformer(str(tiny_model), device="cpu").encode(inp.read_text().splitlines())
    np.testing.assert_allclose(np.load(out), expect, atol=1e-5)
    inp.write_text("a\n\nb\n", encoding="utf-8")
    r = xlsent("embed", "--model", str(tiny_model), "--input", str(inp), "--output", str(out))
    assert r.returncode == 2 and "in.txt:2: blank line" in r.stderr.replace("\n", "")


def test_embed_into_parquet_shards_from_every_input_kind(tiny_model, tmp_path):
    """TSV, JSONL and Parquet inputs by column; a folder output is Parquet shards (ids carried) + a manifest that
    pandas and Hugging Face datasets read; a rerun resumes; a wrong column is one line before the model loads."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    from xlsent.data.text_source import open_source
    from xlsent.encoding.encoder import Encoder
    from xlsent.mining.embed_job import embed_corpus, read_shards
    from xlsent.mining.engine import EncoderSettings

    texts = ["god is good", "the river is wide and the water is light", "madzi", "mulungu ndi wabwino", "he said"]
    (tmp_path / "in.txt").write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    (tmp_path / "in.tsv").write_text("".join(f"id{i}\t{t}\n" for i, t in enumerate(texts)), encoding="utf-8")
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"k": f"id{i}", "body": t}) + "\n"
                                               for i, t in enumerate(texts)), encoding="utf-8")
    pq.write_table(pa.table({"k": [f"id{i}" for i in range(5)], "body": texts}), tmp_path / "in.parquet",
                   row_group_size=2)
    encoder = Encoder.load(str(tiny_model))
    ref = encoder.encode(texts)
    settings = EncoderSettings(str(tiny_model))
    for name, cols in (("in.tsv", ("2", "1")), ("in.jsonl", ("body", "k")), ("in.parquet", ("body", "k"))):
        out = tmp_path / f"out-{name}"
        embed_corpus(open_source(tmp_path / name, *cols), out, encoder, settings, shard_size=2)
        ids, vecs = read_shards(out)
        assert ids == [f"id{i}" for i in range(5)], name
        np.testing.assert_allclose(vecs, ref, atol=1e-5)
        manifest = json.loads((out / "_manifest.json").read_text())
        assert manifest["rows"] == 5 and manifest["shards"] == [f"part-0000{i}.parquet" for i in range(3)]
    frame = pd.read_parquet(tmp_path / "out-in.parquet")
    assert list(frame.columns) == ["id", "embedding"] and len(frame) == 5
    import datasets

    ds = datasets.load_dataset("parquet", data_files=str(tmp_path / "out-in.parquet" / "*.parquet"))["train"]
    np.testing.assert_allclose(np.array(ds["embedding"], dtype=np.float32), ref, atol=1e-5)
    # a stopped run: one shard missing → only it is redone; other settings in the folder are refused
    out = tmp_path / "out-in.jsonl"
    (out / "part-00001.parquet").unlink()
    kept = (out / "part-00000.parquet").stat().st_mtime_ns
    embed_corpus(open_source(tmp_path / "in.jsonl", "body", "k"), out, encoder, settings, shard_size=2)
    assert (out / "part-00001.parquet").exists() and (out / "part-00000.parquet").stat().st_mtime_ns == kept
    with pytest.raises(XlsentError, match="--overwrite"):
        embed_corpus(open_source(tmp_path / "in.jsonl", "body"), out, encoder, settings, shard_size=3)
    with pytest.warns(UserWarning, match="holds other embeddings or other files — replaced"):  # said, never silent
        embed_corpus(open_source(tmp_path / "in.jsonl", "body"), out, encoder, settings, shard_size=3, overwrite=True)
    assert (out / "part-00000.parquet").stat().st_mtime_ns != kept  # embedded again, 3 rows a shard
    for name, cols, message in (("in.parquet", ("txt",), "text_column='txt': no such column"),
                                ("in.jsonl", ("txt",), "in.jsonl:1: no column 'txt'"),
                                ("in.tsv", ("body",), "a TSV column is a number"),
                                ("in.txt", ("x",), "one text a line has no columns")):
        with pytest.raises(XlsentError, match=re.escape(message)):
            open_source(tmp_path / name, *cols)
    # the command: a folder output, and a wrong column before any model loads
    r = xlsent("embed", "-m", str(tiny_model), "-i", str(tmp_path / "in.parquet"), "--text-column", "body",
               "-o", str(tmp_path / "cli"))
    assert r.returncode == 0 and "1 Parquet shard(s)" in r.stdout, r.stderr
    np.testing.assert_allclose(read_shards(tmp_path / "cli")[1], ref, atol=1e-5)
    r = xlsent("embed", "-m", "no-such-model", "-i", str(tmp_path / "in.parquet"), "-o", str(tmp_path / "x"))
    assert r.returncode == 2 and "--text-column 'text': no such column" in r.stderr.replace("\n", ""), r.stderr


def test_data_stats_tokenizer_columns(tiny_model):
    r = xlsent("data", "stats", "udhr:nya", "--model", str(tiny_model), "--json")
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout)
    nya = stats["languages"]["nya"]
    assert stats["pairs"] == 60 and nya["unk_rate"] > 0.5 and nya["pieces_per_word"] > 0


def test_models_list_and_data_list():
    assert "e5-small" in xlsent("models", "list").stdout
    assert "bible-en-ny:test" in xlsent("data", "list").stdout


def test_embed_at_every_precision(tiny_model, tmp_path):
    """``--precision``: float16, int8 (records of a row scale and int8 values) and ubinary (sentence-transformers'
    packed sign bits), in a .npy matrix and in Parquet shards, read back as what they stand for."""
    from sentence_transformers.util.quantization import quantize_embeddings

    from xlsent.mining.embed_job import read_shards

    texts = ["god is good", "the river is wide", "madzi", "mulungu ndi wabwino", "he said"]
    (tmp_path / "in.txt").write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    r = xlsent("embed", "-m", str(tiny_model), "-i", str(tmp_path / "in.txt"), "-o", str(tmp_path / "f32.npy"))
    assert r.returncode == 0, r.stderr
    ref = np.load(tmp_path / "f32.npy")
    half_step = np.abs(ref).max(1, keepdims=True) / 127 / 2 + 1e-7
    for precision in ("float16", "int8", "ubinary"):
        npy, folder = tmp_path / f"{precision}.npy", tmp_path / precision
        for out in (npy, folder):
            r = xlsent("embed", "-m", str(tiny_model), "-i", str(tmp_path / "in.txt"), "-o", str(out),
                       "--precision", precision, "--shard-size", "2")
            assert r.returncode == 0, r.stderr
            if out == npy:  # rows × dimensions, whatever the record layout
                assert f"rows × {ref.shape[1]} dimensions, {precision}" in r.stdout, r.stdout
        got, shards = np.load(npy), read_shards(folder)[1]
        if precision == "float16":
            assert got.dtype == np.float16 and np.abs(got - ref).max() < 1e-3
            np.testing.assert_array_equal(shards, got.astype(np.float32))
        elif precision == "int8":
            assert got.dtype.names == ("scale", "q") and got["q"].dtype == np.int8
            assert (np.abs(got["q"] * got["scale"][:, None] - ref) <= half_step).all()
            assert (np.abs(shards - ref) <= half_step).all()
        else:
            np.testing.assert_array_equal(got, quantize_embeddings(ref, precision="ubinary"))
            np.testing.assert_array_equal(shards, got)
        manifest = json.loads((folder / "_manifest.json").read_text())
        assert manifest["dtype"] == precision
        assert manifest["bytes_per_sentence"] == {"float16": 64, "int8": 36, "ubinary": 4}[precision]
    r = xlsent("embed", "-i", str(tmp_path / "in.txt"), "-o", str(tmp_path / "x.npy"), "--precision", "int4")
    assert r.returncode == 2 and "unknown --precision 'int4'" in r.stderr


def test_old_option_names_are_accepted_with_a_note(monkeypatch, capsys):
    """--bootstrap is now --resamples and --k-nn is now --k: the old names still parse, with a one-line note."""
    import typer.main

    from xlsent.cli.main import app
    from xlsent.cli.options import _renamed

    cmd = typer.main.get_command(app)
    ctx = cmd.make_context("xlsent", ["eval", "retrieval", "--help"], resilient_parsing=True)
    retrieval = cmd.get_command(ctx, "eval").get_command(ctx, "retrieval")
    opts = {p.name: p.opts for p in retrieval.params}
    assert opts["resamples"] == ["--resamples", "--bootstrap"] and opts["k"] == ["--k", "--k-nn"]
    monkeypatch.setattr("sys.argv", ["xlsent", "eval", "spans", "--bootstrap", "20"])
    assert _renamed("--bootstrap", "--resamples")(20) == 20
    err = capsys.readouterr().err
    assert "--bootstrap is now --resamples" in err and len(err.strip().splitlines()) == 1
    monkeypatch.setattr("sys.argv", ["xlsent", "eval", "spans", "--resamples", "20"])
    _renamed("--bootstrap", "--resamples")(20)
    assert capsys.readouterr().err == ""


def test_help_shows_types_as_click_does_without_touching_typer(capsys):
    """--help: TEXT, INTEGER, PATH … and nothing after a flag, from the program's own parameter subclasses."""
    import typer.core

    from xlsent.cli.main import app

    with pytest.raises(SystemExit):
        app(["eval", "retrieval", "--help"], prog_name="xlsent")
    out = capsys.readouterr().out
    assert "INTEGER" in out and "TEXT" in out and "<bool>" not in out and "<int>" not in out
    assert not hasattr(typer.core._TyperParameter, "_xlsent_plain")
    assert typer.core.TyperOption.display_type_rich.__module__ == "typer.core"


def test_choices_are_listed_in_help_and_a_bad_one_is_one_line(tmp_path):
    """A choice is typed from the library's own list: ``--help`` lists it, and a bad value is one line naming the
    option and the choices (exit 2, never typer's usage box) before anything is read."""
    r = xlsent("mine", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-o", str(tmp_path / "m.tsv"),
               "--margin", "cosine")
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip() == "error: unknown --margin 'cosine': use one of ratio, distance, absolute", r.stderr
    r = xlsent("embed", "--help")
    assert r.returncode == 0 and "[float32|float16|int8|ubinary]" in r.stdout and "[auto|torch|onnx]" in r.stdout
