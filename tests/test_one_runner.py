"""One runner, one main score: for every task type, ``xlsent.evaluate``, ``xlsent eval TYPE`` (the command's own
line ``main score (NAME): X``), ``xlsent eval run`` and — for the types a recipe reports — the held-out report give
the same main score for the same task and data."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlsent
from test_cli import xlsent as run_cli
from xlsent.evaluation.tasks import TASK_TYPES


def _tagger(tiny_model, folder):
    """An untrained token classifier over the tiny model's transformer (scores are what they are: the test compares
    paths, not quality)."""
    from transformers import AutoTokenizer, BertForTokenClassification

    hf = tiny_model.parent / (tiny_model.name + "-hf")
    labels = ["O", "B-PER", "I-PER"]
    model = BertForTokenClassification.from_pretrained(str(hf), num_labels=3, id2label=dict(enumerate(labels)),
                                                       label2id={x: i for i, x in enumerate(labels)})
    model.save_pretrained(str(folder))
    AutoTokenizer.from_pretrained(str(hf)).save_pretrained(str(folder))
    return folder


def _cases(tiny_model, pairs_tsv, tmp_path):
    """type → (task name, options, the eval command's arguments)."""
    from test_tagger import toy_corpus, write_conll

    import numpy as np

    words = pairs_tsv.read_text().split()
    rng = np.random.default_rng(0)
    sts = tmp_path / "sts.tsv"
    sts.write_text("".join(f"{' '.join(rng.choice(words, 5))}\t{' '.join(rng.choice(words, 5))}\t"
                           f"{rng.uniform(0, 5):.2f}\n" for _ in range(40)), encoding="utf-8")
    conll = tmp_path / "test.conll"
    write_conll(conll, *toy_corpus(20, 1))
    gold = tmp_path / "gold.tsv"
    gold.write_text("0\t0\n1\t1\n2,3\t2\n", encoding="utf-8")
    pred = tmp_path / "pred.tsv"
    pred.write_text("0\t0\n1\t1\n2\t2\n3\t\n", encoding="utf-8")
    m = str(tiny_model)
    return {
        "retrieval": (f"retrieval:{pairs_tsv}", {"resamples": 20},
                      ["retrieval", "-m", m, "--pairs", str(pairs_tsv), "--resamples", "20"]),
        "documents": ("documents:udhr-articles:nya", {"resamples": 20},
                      ["documents", "-m", m, "--dataset", "udhr-articles:nya", "--resamples", "20"]),
        "sts": (f"sts:{sts}", {"resamples": 20}, ["sts", "-m", m, "--data", str(sts), "--resamples", "20"]),
        "triplet": (f"triplet:{pairs_tsv}", {"resamples": 20},
                    ["triplet", "-m", m, "--dataset", str(pairs_tsv), "--resamples", "20"]),
        "mse": (f"mse:{pairs_tsv}", {"teacher": m, "sample": 0},
                ["mse", "-m", m, "--pairs", str(pairs_tsv), "--teacher", m, "--sample", "0"]),
        "mining": ("mining:udhr-dev:sna", {"n_gold": 40, "n_distractors": 100},
                   ["mining", "-m", m, "--dataset", "udhr-dev:sna", "--n-gold", "40", "--n-distractors", "100"]),
        "classification": ("classification:bible-genre", {"per_class": 20, "seeds": 2, "resamples": 20},
                           ["classify", "-m", m, "--dataset", "bible-genre", "--per-class", "20", "--seeds", "2",
                            "--resamples", "20"]),
        "alignment": (f"alignment:{gold},{pred}", {}, ["align", "--gold", str(gold), "--pred", str(pred)]),
        "spans": ("spans:structural-en-ny:test", {"sample": 40, "resamples": 20},
                  ["spans", "-m", m, "--sample", "40", "--resamples", "20"]),
        "ner": (f"ner:{conll}", {"resamples": 20}, ["ner", "--test", str(conll), "--resamples", "20"]),
        "pos": (f"pos:{conll}", {"resamples": 20, "tag_column": -1},
                ["pos", "--test", str(conll), "--resamples", "20"]),
    }


def _printed(out: str) -> float:
    found = re.findall(r"main score \(([^)]+)\): (-?[0-9.]+)", out)
    assert found, out[-2000:]
    return float(found[-1][1])


def test_every_task_type_gives_one_main_score_on_every_path(tiny_model, pairs_tsv, tmp_path):
    cases = _cases(tiny_model, pairs_tsv, tmp_path)
    assert set(cases) == set(TASK_TYPES)  # a new type needs its case here
    tagger = _tagger(tiny_model, tmp_path / "tagger")
    for kind, (name, options, command) in cases.items():
        model = None if kind == "alignment" else str(tagger if kind in ("ner", "pos") else tiny_model)
        one = xlsent.evaluate(model, name, **options)
        run, = xlsent.evaluate_tasks(model, [name], options=options)
        assert one.main_score_name == run.main_score_name == TASK_TYPES[kind].main_score, kind
        assert one.main_score == pytest.approx(run.main_score, abs=1e-9), kind
        args = ["eval", *command] + (["-m", str(tagger)] if kind in ("ner", "pos") else [])
        r = run_cli(*args)
        assert r.returncode == 0, (kind, r.stderr[-2000:])
        assert _printed(r.stdout) == pytest.approx(one.main_score, abs=1e-4), kind
        listed = run_cli("eval", "run", *(["-m", model] if model else []), "--tasks", name,
                         *[x for k, v in options.items() for x in ("--option", f"{k}={v}")])
        if model is not None:
            assert listed.returncode == 0, (kind, listed.stderr[-2000:])
            assert f"{one.main_score:.4f}" in listed.stdout, kind


def test_a_recipes_report_gives_the_same_main_scores(tiny_model, pairs_tsv):
    from xlsent.encoding.encoder import Encoder
    from xlsent.evaluation.suite import evaluate_held_out

    e = {"pairs": str(pairs_tsv), "sample": 0, "similarity": "cosine", "udhr": True, "udhr_pool": "udhr-dev"}
    enc = Encoder.load(str(tiny_model), memo=True)
    held = evaluate_held_out({"base": enc}, e, teacher=enc)
    scores = held.models["base"].main_scores
    assert set(scores) == {f"retrieval:{pairs_tsv}", f"triplet:{pairs_tsv}", f"mse:{pairs_tsv}", "retrieval:udhr-dev"}
    for name, score in scores.items():
        options = {"beside": False, "by_language": False} if name == f"retrieval:{pairs_tsv}" else {}
        options |= {"teacher": str(tiny_model), "sample": 0} if name.startswith("mse:") else {}
        assert xlsent.evaluate(str(tiny_model), name, **options).main_score == pytest.approx(score, abs=1e-6), name
    d = held.to_dict()
    assert d["schema"] == "xlsent.metrics/2" and d["models"]["base"]["main_scores"] == scores
    from xlsent.evaluation.suite import HeldOut

    old = {**d, "schema": "xlsent.metrics/1", "models": {"base": {k: v for k, v in d["models"]["base"].items()
                                                                  if k != "main_scores"}}}
    assert HeldOut.from_dict(old).models["base"].retrieval == d["models"]["base"]["retrieval"]  # /1 still read
    # a report's plot takes the evaluation's own vectors of the pool's first pairs: the same as encoding them anew
    from xlsent.data.pairs import load_pairs

    pool = load_pairs(str(pairs_tsv), dedupe=False).dataset
    src, tgt = held.plot_vectors["base"]
    n = min(len(pool), 300)
    assert src.shape == tgt.shape == (n, enc.dimension) and "plot_vectors" not in d
    fresh = Encoder.load(str(tiny_model))
    assert np.allclose(src, fresh.encode(list(pool["src"][:n])), atol=1e-5)
    assert np.allclose(tgt, fresh.encode(list(pool["tgt"][:n])), atol=1e-5)
