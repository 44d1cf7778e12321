"""Evaluations as declared tasks: names, declarations, ``xlsent eval run`` / ``xlsent.evaluate_tasks``, results in
MTEB's format, and MTEB itself running xlsent's tasks with the same main score."""

from __future__ import annotations

import json

import numpy as np
import pytest

import xlsent
from conftest import need
from xlsent.data.registry import entries
from xlsent.evaluation.tasks import SUITES, TASK_TYPES, TYPES, bitext_f1, declare, expand, names

#: registry kinds that hold no evaluation of their own (documents split into sections feed the recipes; word lists)
_NOT_EVALUATIONS = {"sections", "resource"}


def test_every_bundled_evaluation_set_is_a_named_task_with_a_declaration():
    listed = names()
    for e in entries():
        if e.kind in _NOT_EVALUATIONS or set(e.splits) <= {"train", "dev-train"}:
            continue
        assert any(n.split(":", 1)[1].removesuffix(":CODE") == e.name for n in listed), (e.kind, e.name)
    for n in listed:
        d = declare(n.replace(":CODE", ":nya"))
        assert d.type in TYPES and d.main_score == TYPES[d.type][0]
        assert d.licence and d.labels in ("gold", "silver", "substitute") and d.splits and d.description
        assert ":" not in d.mteb_name and d.mteb_name.startswith("xlsent.")
    for suite, members in SUITES.items():
        assert expand(suite) == list(members)


@pytest.mark.parametrize("name, words", [
    ("retrieval", "TYPE:DATASET"),
    ("sideways:bible-en-ny:dev", "TYPE:DATASET"),
    ("retrieval:no-such-set", "neither a bundled pairs set nor a file"),
    ("mining:udhr", "mining:udhr:CODE"),
    ("ner:silver-pos:ny:test", "not a NER set"),
])
def test_a_bad_task_name_is_one_line_naming_the_fix(name, words):
    with pytest.raises(xlsent.XlsentError) as e:
        declare(name)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_bad_task_options_fail_before_the_model_loads(tiny_model):
    for options, words in (({"sampel": 3}, "unknown task option sampel"), ({"sample": "x"}, "whole number"),
                           ({"similarity": "jaccard"}, "similarity='jaccard'")):
        with pytest.raises(xlsent.XlsentError, match=words):
            xlsent.evaluate_tasks(str(tiny_model), "retrieval:bible-en-ny:dev", options=options)


def test_evaluate_runs_a_declared_task_name(tiny_model, pairs_tsv):
    run = xlsent.evaluate(str(tiny_model), f"retrieval:{pairs_tsv}", resamples=20)
    assert run.task == f"retrieval:{pairs_tsv}" and run.main_score_name == "p@1" and len(run.results) == 1
    with pytest.raises(xlsent.XlsentError, match="names its data"):
        xlsent.evaluate(str(tiny_model), "retrieval:udhr", dataset="udhr")
    with pytest.raises(xlsent.XlsentError, match="evaluate_tasks"):
        xlsent.evaluate(str(tiny_model), "lite")


def test_bitext_f1_is_mtebs_weighted_f1_of_the_top_1():
    s = np.eye(4)
    t = np.eye(4)[[0, 1, 1, 3]]  # source 2's translation looks like source 1's: both pick target 1
    f = bitext_f1(s, t)
    assert f["accuracy"] == 0.75
    # weighted F1 over the gold labels: 0,3 right (F1 1), 1 predicted twice (P ½, R 1: F1 ⅔), 2 never (F1 0)
    assert f["f1"] == pytest.approx((1 + 2 / 3 + 0 + 1) / 4)


def test_run_writes_mteb_results_that_mteb_reads(tiny_model, pairs_tsv, tmp_path):
    mteb = need("mteb")
    runs = xlsent.evaluate_tasks(str(tiny_model), [f"retrieval:{pairs_tsv}", "retrieval:udhr-dev"], tmp_path / "out",
                                 options={"resamples": 20})
    assert [r.main_score_name for r in runs] == ["p@1", "p@1"]
    files = sorted((tmp_path / "out").glob("*.json"))
    assert len(files) == 2
    for run in runs:
        path = tmp_path / "out" / f"{run.declaration.mteb_name}.json"
        loaded = mteb.TaskResult.from_disk(path)
        assert loaded.task_name == run.declaration.mteb_name
        # MTEB's file names MTEB's main score (f1); xlsent's (P@1 both ways) stands beside it in every row
        assert loaded.get_score() == pytest.approx(np.mean([r["f1"] for r in run.scores]))
        assert run.main_score == pytest.approx(np.mean([r["p@1"] for r in run.scores]))
        row = json.loads(path.read_text())["scores"][run.split][0]
        assert {"precision", "recall", "f1", "accuracy", "p@1"} <= set(row) and "p@1" in row["xlsent"]["src2tgt"]
    udhr = runs[1]
    assert len(udhr.scores) == 24 and udhr.scores[0]["hf_subset"].startswith("eng-")
    assert all(len(r["languages"]) == 2 and r["languages"][0] == "eng-Latn" for r in udhr.scores)
    assert udhr.main_score == pytest.approx(np.mean([r["p@1"] for r in udhr.scores]))


def test_every_task_type_writes_a_result_mteb_reads(tiny_model, tmp_path):
    """Each type on the tiny model with small pools: a main score, languages on every row, and MTEB's loader
    giving back the same main score."""
    mteb = need("mteb")
    cases = {"mining:udhr-dev:sna": {"n_gold": 40, "n_distractors": 100},
             "classification:bible-genre": {"per_class": 20, "seeds": 2},
             "documents:udhr-articles:nya": {}, "spans:structural-en-ny:test": {"sample": 40},
             "mse:bible-en-ny:dev": {"sample": 40, "teacher": str(tiny_model)}, "triplet:udhr-dev": {"sample": 60}}
    for name, options in cases.items():
        has = TASK_TYPES[name.split(":")[0]].options()
        run, = xlsent.evaluate_tasks(str(tiny_model), name, tmp_path,
                                     options={**({"resamples": 20} if "resamples" in has else {}), **options})
        assert run.main_score_name == TYPES[name.split(":")[0]][0] and np.isfinite(run.main_score), name
        assert all(len(r["languages"]) >= 1 and "-" in r["languages"][0] for r in run.scores), name
        loaded = mteb.TaskResult.from_disk(tmp_path / f"{run.declaration.mteb_name}.json")
        assert loaded.get_score() == pytest.approx(run.main_score), name  # not MTEB's type: its main score


def _mteb_main_score(model_folder, tasks, tmp_path) -> dict:
    import mteb
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model_folder), device="cpu")
    result = mteb.evaluate(st, tasks=tasks, cache=None, show_progress_bar=False)
    return {r.task_name: r.get_score() for r in result.task_results}


def row_main(run) -> str:
    from xlsent.evaluation.tasks import TASK_TYPES

    cls = TASK_TYPES[run.declaration.type]
    return cls.mteb_main_score or cls.main_score


def test_mteb_runs_xlsent_tasks_with_the_same_main_score(tiny_model, pairs_tsv, tmp_path):
    need("mteb")
    from xlsent.evaluation.tasks import mteb_tasks

    sts = tmp_path / "sts.tsv"
    rng = np.random.default_rng(0)
    words = pairs_tsv.read_text().split()
    sts.write_text("".join(f"{' '.join(rng.choice(words, 5))}\t{' '.join(rng.choice(words, 5))}\t"
                           f"{rng.uniform(0, 5):.2f}\n" for _ in range(60)), encoding="utf-8")
    names_ = [f"retrieval:{pairs_tsv}", f"sts:{sts}"]
    # MTEB's main score (f1 for BitextMining) is the figure xlsent writes under that name
    ours = {r.declaration.mteb_name: float(np.mean([row[row_main(r)] for row in r.scores]))
            for r in xlsent.evaluate_tasks(str(tiny_model), names_, options={"resamples": 20})}
    theirs = _mteb_main_score(tiny_model, mteb_tasks(names_), tmp_path)
    assert set(theirs) == set(ours)
    for k in ours:
        assert theirs[k] == pytest.approx(ours[k], abs=0.005), k


def test_mteb_refuses_a_task_whose_protocol_is_xlsents_own():
    need("mteb")
    from xlsent.evaluation.tasks import mteb_tasks

    with pytest.raises(xlsent.XlsentError, match="runs in xlsent only"):
        mteb_tasks("triplet:bible-en-ny:dev")


def test_eval_run_command(tiny_model, pairs_tsv, tmp_path):
    from test_cli import xlsent as run_cli

    r = run_cli("eval", "run", "-m", str(tiny_model), "--tasks", f"retrieval:{pairs_tsv}", "--option", "resamples=20",
                "-o", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    assert len(list((tmp_path / "o").glob("xlsent.retrieval.*.json"))) == 1
    listed = run_cli("eval", "run", "--list")
    assert listed.returncode == 0 and "retrieval:bible-en-ny:dev" in listed.stdout and "suite lite" in listed.stdout
    bad = run_cli("eval", "run", "-m", str(tiny_model), "--tasks", "retrieval:nope")
    assert bad.returncode == 2 and "neither a bundled pairs set nor a file" in bad.stderr
    nomodel = run_cli("eval", "run", "-m", str(tmp_path / "no-model"), "--tasks", "lite")
    assert nomodel.returncode == 2 and "no such folder" in nomodel.stderr and "…" not in nomodel.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    opt = run_cli("eval", "run", "-m", str(tiny_model), "--tasks", "lite", "--option", "sample")
    assert opt.returncode == 2 and "KEY=VALUE" in opt.stderr


@pytest.mark.slow
def test_mteb_and_xlsent_agree_on_the_real_model(tmp_path):
    need("mteb")
    from xlsent.evaluation.tasks import mteb_tasks

    names_ = ["retrieval:bible-en-ny:dev"]
    options = {"sample": 300, "resamples": 20}
    ours = {r.declaration.mteb_name: float(np.mean([row[row_main(r)] for row in r.scores]))
            for r in xlsent.evaluate_tasks("e5-small", names_, options=options)}
    from xlsent.models.handle import resolve_model_path

    theirs = _mteb_main_score(resolve_model_path("e5-small"), mteb_tasks(names_, options), tmp_path)
    for k in ours:
        assert theirs[k] == pytest.approx(ours[k], abs=0.005), k
