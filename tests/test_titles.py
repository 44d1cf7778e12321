"""Title selection (4-way multiple choice) on files the test makes: reader errors, training, accuracy, P4."""

from __future__ import annotations

import json
import random

import pytest

from xlsent.data.multiple_choice import read_choices
from xlsent.utils.errors import InputFormatError

from test_tagger import CONTEXT, NAMES, PLACES, build_wordpiece_model

TITLES = ["madzi", "nyumba", "mulungu", "mwana"]
UNSEEN = ["bwalo", "tsamba", "chipewa", "nsapato", "mpando", "zenera"]  # in no training text


def make_file(path, n: int, seed: int, unseen: int = 0):
    """Each text holds its title's word; the 3 other titles are the distractors. ``unseen`` > 0 adds to each text
    one of that many words that no training text has (P4's substitutes)."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        gold = rng.choice(TITLES)
        words = [rng.choice(CONTEXT[:4] + NAMES + PLACES) for _ in range(5)] + [gold]
        words += [rng.choice(UNSEEN[:unseen])] if unseen else []
        rng.shuffle(words)
        rows.append("\t".join([" ".join(words), gold, *[t for t in TITLES if t != gold]]))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("text,message", [
    ("a text\tgold\n", r"2 field\(s\)"),
    ("a text\tgold\t\tx\n", "empty field 3"),
    ("a text\tgold\tgold\n", "also a distractor"),
    ("t\tg\td1\td2\nt\tg\td1\n", "2 titles, but line 1 has 3"),
    ("\n# only a comment\n", "no examples"),
])
def test_reader_errors_name_file_and_line(tmp_path, text, message):
    p = tmp_path / "mc.tsv"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputFormatError, match=message):
        read_choices(p)


def test_train_accuracy_and_p4(tmp_path):
    from typer.testing import CliRunner

    from xlsent.cli.main import app

    model = build_wordpiece_model(tmp_path / "wp", hidden=64)
    train, test = make_file(tmp_path / "train.tsv", 96, 0), make_file(tmp_path / "test.tsv", 48, 1)
    assert read_choices(train).n_choices == 4
    r = CliRunner().invoke(app, ["train", "titles", "-o", str(tmp_path / "run"), "--set", f"models.base={model}",
                                 "--set", f"train.data={train}", "--set", f"eval.test={test}", "--set", "optim.lr=1e-3",
                                 "--set", "optim.epochs=30", "--set", "optim.batch_size=16", "--set",
                                 "models.max_seq_length=24", "--set", "optim.seed=1"])
    # on this toy task some seeds stall in a local minimum (loss ≈ 0.9), and which ones moves with the libraries'
    # releases: with sentence-transformers 6.3 / transformers 5.25, lr 1e-3 and seeds 1 and 2 passed with one torch
    # thread (a pytest-xdist worker's share on two cores, conftest.py) and with two (-n 0); seed 0 stalled with both
    assert r.exit_code == 0, (r.output, r.exception)
    m = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert m["schema"] == "xlsent.metrics/2" and m["recipe"] == "titles"
    assert m["models"]["trained"]["choice"]["accuracy"] > 0.8, m  # chance is 0.25: the title's word is in the text
    stop = tmp_path / "stop.txt"
    stop.write_text("ku\n", encoding="utf-8")
    r = CliRunner().invoke(app, ["eval", "titles", "-m", str(tmp_path / "run"), "--test", str(test), "--train",
                                 str(train), "--stopwords", str(stop), "--embed-model", str(model), "--resamples",
                                 "100", "--max-length", "24", "-o", str(tmp_path / "e.json")])
    assert r.exit_code == 0, (r.output, r.exception)
    e = json.loads((tmp_path / "e.json").read_text())
    # every text word also occurs in training: P4 has no test-only word to substitute (nothing changes)
    assert e["P4"]["counts"]["test-only (substitute pool)"] == 0 and e["P4"]["delta"] == 0.0
    assert 0 < e["word_overlap"]["piece_overlap"] <= 1
    # a test whose texts also hold words training never saw: P4 replaces the shared words — the title's own word
    # among them — so the model loses what it chose by, and the paired bootstrap must say so
    unseen = make_file(tmp_path / "unseen.tsv", 48, 2, unseen=6)
    r = CliRunner().invoke(app, ["eval", "titles", "-m", str(tmp_path / "run"), "--test", str(unseen), "--train",
                                 str(train), "--stopwords", str(stop), "--embed-model", str(model), "--resamples",
                                 "200", "--max-length", "24", "-o", str(tmp_path / "u.json")])
    assert r.exit_code == 0, (r.output, r.exception)
    u = json.loads((tmp_path / "u.json").read_text())
    assert u["accuracy"]["value"] > 0.8 and u["P4"]["counts"]["test-only (substitute pool)"] == 6, u
    assert u["P4"]["delta"] < -0.3 and u["P4"]["delta_ci95"][1] < 0 and u["P4"]["p"] < 0.05, u
    assert u["P4-random"]["delta"] < -0.3, u


def test_p4_changes_only_the_text(tmp_path):
    from xlsent.data.multiple_choice import ChoiceSet
    from xlsent.recipes.titles import p4_texts

    test = ChoiceSet(["Madzi a nyanja, ndi mvula", "nyumba yaikulu"], [["a", "b"], ["b", "a"]])
    train = ChoiceSet(["madzi nyumba"], [["a", "b"]])
    base, pert, log = p4_texts(test, train, frozenset(), None, seed=0, random_control=True)
    assert base.texts[0] == "Madzi a nyanja , ndi mvula"
    assert pert.texts[0].split()[0] != "Madzi" and pert.texts[0].split()[0][0].isupper()
    assert pert.candidates == test.candidates and log["counts"]["common with training"] == 2
