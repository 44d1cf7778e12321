"""The conventions of docs/reference/conventions.md, checked on the code: sentence-transformers' names in the Python
API (the old names still working, with a warning), one meaning a default, one attribute a kind of result, a
``to_dict()`` on every result, and Python's errors naming Python's parameters while the CLI names its options."""

from __future__ import annotations

import inspect
import warnings

import pytest

import xlsent
from xlsent.api._common import RENAMED

FUNCTIONS = {name: getattr(xlsent, name) for name in xlsent.__all__ if inspect.isfunction(getattr(xlsent, name))}


def test_the_api_uses_sentence_transformers_names_and_one_default_a_meaning():
    for name, f in FUNCTIONS.items():
        params = inspect.signature(f).parameters
        assert not set(params) & set(RENAMED), (name, set(params) & set(RENAMED))  # old names only via **old
        assert inspect.signature(f).return_annotation is not inspect.Signature.empty, name
        if "device" in params:
            assert params["device"].default == "auto", name
        for lang in ("lang", "src_lang", "tgt_lang"):
            if lang in params:
                assert params[lang].default is None, (name, lang)
    for name in ("embed", "embed_file"):
        assert {"normalize_embeddings", "truncate_dim", "prompt_name", "prompt", "show_progress_bar",
                "batch_size"} <= set(inspect.signature(FUNCTIONS[name]).parameters), name


def test_every_result_has_to_dict_and_one_name_for_pairs_and_outputs():
    from dataclasses import fields

    from xlsent.api.alignment import AlignedBlock, Blocks
    from xlsent.api.training import CurveResult
    from xlsent.api.embedding import EmbedFileResult
    from xlsent.api.exporting import ExportResult
    from xlsent.data.pair_filter import FilteredPairs
    from xlsent.evaluation.suite import HeldOut
    from xlsent.evaluation.tasks import TaskRun
    from xlsent.models.vocab.extend import VocabExtension
    from xlsent.mining.mine import MineResult
    from xlsent.models.language_means import LanguageMeans
    from xlsent.recipes.registry import RunResult

    results = (AlignedBlock, Blocks, EmbedFileResult, ExportResult, FilteredPairs, HeldOut, TaskRun, VocabExtension,
               MineResult, LanguageMeans, RunResult, CurveResult)
    for cls in results:
        assert callable(getattr(cls, "to_dict", None)), cls.__name__
    for cls in (MineResult, FilteredPairs):
        assert "pairs" in {f.name for f in fields(cls)}, cls.__name__
    for cls in (EmbedFileResult, ExportResult, VocabExtension, RunResult, CurveResult):
        assert "output" in {f.name for f in fields(cls)} and "path" not in {f.name for f in fields(cls)}, cls
    block, deletion = AlignedBlock((0,), (0,), 0.25), AlignedBlock((1,), (), 0.0)
    assert block.score == 0.75 and deletion.score == 0.0 and block.to_dict()["cost"] == 0.25  # higher is better
    mined = MineResult([(1.2, "a", "b")], {"kept": 1})
    assert mined.to_dict()["pairs"] == [{"score": 1.2, "src": "a", "tgt": "b"}] and mined.to_dict()["kept"] == 1


def test_old_names_work_for_one_release_with_a_warning(tiny_model):
    with pytest.warns(DeprecationWarning, match="normalize_embeddings"):
        old = xlsent.embed(["a b"], model=str(tiny_model), normalize=True, dimensions=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = xlsent.embed(["a b"], model=str(tiny_model), normalize_embeddings=True, truncate_dim=8)
    assert old.shape == new.shape == (1, 8)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        xlsent.embed(["a"], model=str(tiny_model), colour="red")
    with pytest.warns(DeprecationWarning, match="output=DIR"), pytest.raises(xlsent.XlsentError, match="unknown recipe"):
        xlsent.train("nope", "/tmp/x")  # the last release's order still reaches the recipe check
    with pytest.raises(xlsent.XlsentError, match="unknown recipe"):
        xlsent.train("nope", "pairs.tsv", output="/tmp/x")
    from xlsent.data.cleaning import CleanReport
    from xlsent.data.pair_filter import FilteredPairs

    kept = FilteredPairs([(1.0, "a", "b")], CleanReport(1, 1), [])
    with pytest.warns(DeprecationWarning, match=r"\.pairs"):
        assert kept.rows == kept.pairs


def test_prompts_are_selectable_and_change_the_vectors(make_tiny_model, tmp_path):
    model = str(make_tiny_model(tmp_path / "prompted", prompt="passage: "))
    default = xlsent.embed(["a b"], model=model)
    passage = xlsent.embed(["a b"], model=model, prompt_name="passage")
    none = xlsent.embed(["a b"], model=model, prompt="")
    assert (default == passage).all() and not (default == none).all()
    with pytest.raises(xlsent.XlsentError, match="prompt_name='summary': the model has no such prompt"):
        xlsent.embed(["a"], model=model, prompt_name="summary")


def test_an_unknown_prompt_name_is_said_before_the_model_loads(make_tiny_model, tmp_path, monkeypatch):
    import xlsent.exporter.load as load

    model = str(make_tiny_model(tmp_path / "prompted2", prompt="passage: "))

    def no_load(*a, **k):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(load, "load_encoder", no_load)
    with pytest.raises(xlsent.XlsentError, match="prompt_name='summary': .* its prompts: .*passage"):
        xlsent.embed(["a"], model=model, prompt_name="summary")


def test_python_errors_name_parameters_and_the_cli_names_options(tiny_model, tmp_path):
    from test_cli import xlsent as run_cli

    with pytest.raises(xlsent.XlsentError, match=r"truncate_dim=0: must be ≥ 1"):
        xlsent.embed(["a"], model=str(tiny_model), truncate_dim=0)
    with pytest.raises(xlsent.XlsentError, match=r"unknown precision='int4'"):
        xlsent.embed(["a"], model=str(tiny_model), precision="int4")
    texts = tmp_path / "t.txt"
    texts.write_text("a b\n", encoding="utf-8")
    r = run_cli("embed", "-i", str(texts), "-o", str(tmp_path / "v.npy"), "-m", str(tiny_model), "--dimensions", "0")
    assert r.returncode == 2 and "--dimensions 0: must be ≥ 1" in r.stderr and "truncate_dim" not in r.stderr
    r = run_cli("eval", "retrieval", "-m", str(tiny_model), "--dataset", "udhr:nya", "--k", "0")
    assert r.returncode == 2 and "--k 0: must be ≥ 1" in r.stderr, r.stderr



def test_library_errors_name_python_parameters_and_the_cli_turns_them_into_options(tiny_model, tmp_path):
    """The aligner, the vocabulary trimmer and extender and the service's limits and keys raise in Python's words (``name=value``, no
    ``--``); the command line shows the same messages with its options (``--name value``), never Python's names."""
    from test_cli import xlsent as run_cli

    from xlsent.serve.auth import ApiKeys
    from xlsent.serve.limits import ServeLimits

    model = str(tiny_model)
    texts = tmp_path / "t.txt"
    texts.write_text("a b\nc d\n", encoding="utf-8")
    cases = (
        (lambda: xlsent.align(["a"], ["b"], model=model, search_buffer=0), "search_buffer=0: must be ≥ 1",
         ("align", str(texts), str(texts), "-o", str(tmp_path / "a.tsv"), "-m", model, "--search-buffer", "0"),
         "--search-buffer 0: must be ≥ 1"),
        (lambda: xlsent.export(model, tmp_path / "o", keep_vocab=10, tail_pq=7),
         "tail_pq=7: must divide the embedding width 32",
         ("export", model, "-o", str(tmp_path / "o"), "--keep-vocab", "10", "--tail-pq", "7"),
         "--tail-pq 7: must divide the embedding width 32"),
        (lambda: xlsent.extend_vocab(model, texts, tmp_path / "x", pieces=0),
         "pieces=0: must be ≥ 1 — the most new pieces to add (e.g. pieces=2000, extend-vocab's default)",
         ("models", "extend-vocab", model, "--texts", str(texts), "-o", str(tmp_path / "x"), "--pieces", "0"),
         "--pieces 0: must be ≥ 1 — the most new pieces to add (e.g. --pieces 2000, extend-vocab's default)"),
        (lambda: ServeLimits(max_queue=0), "max_queue=0: must be ≥ 1", ("serve", "--max-queue", "0"),
         "--max-queue 0: must be ≥ 1"),
        (lambda: ApiKeys.load(str(tmp_path / "keys.txt")), f"api_key_file='{tmp_path / 'keys.txt'}': no such file",
         ("serve", "--api-key-file", str(tmp_path / "keys.txt")), f"--api-key-file '{tmp_path / 'keys.txt'}': no such"),
    )
    for call, python, args, cli in cases:
        with pytest.raises(xlsent.XlsentError) as err:
            call()
        assert python in str(err.value) and "--" not in str(err.value), str(err.value)
        r = run_cli(*args)
        stderr = " ".join(r.stderr.split())
        assert r.returncode == 2 and cli in stderr and python.split("=")[0] + "=" not in stderr, r.stderr
