"""Zero-shot classification transfer: the evaluator on hand-made embeddings, the reader, the bundled task."""

from __future__ import annotations

import numpy as np
import pytest

from xlsent.data.labelled import GENRE_OF, TEST_BOOKS, read_labelled
from xlsent.evaluation.classify import classify_embeddings
from xlsent.utils.errors import InputFormatError


def test_classifier_on_hand_made_embeddings():
    rng = np.random.default_rng(0)
    centres = {"a": np.array([3.0, 0.0]), "b": np.array([0.0, 3.0])}
    y_train = ["a"] * 30 + ["b"] * 30
    x_train = np.stack([centres[y] + rng.normal(0, 0.3, 2) for y in y_train])
    # test: 4 "a" near a's centre, 3 "b" near b's, and one "b" placed on a's centre (a sure error)
    y_test = ["a"] * 4 + ["b"] * 4
    x_test = np.stack([centres["a"]] * 4 + [centres["b"]] * 3 + [centres["a"]])
    r = classify_embeddings(x_train, y_train, x_test, y_test, seeds=3, resamples=200)
    assert r.accuracy == pytest.approx(7 / 8)
    assert r.confusion == [[4, 0], [1, 3]]  # rows gold a, b; columns predicted a, b
    f1_a, f1_b = 2 * 4 / (2 * 4 + 1), 2 * 3 / (2 * 3 + 1)  # a: 4 right, 1 false positive; b: 3 right, 1 missed
    assert r.per_class_f1 == pytest.approx({"a": f1_a, "b": f1_b})
    assert r.macro_f1 == pytest.approx((f1_a + f1_b) / 2)
    assert r.accuracy_ci95[0] <= r.accuracy <= r.accuracy_ci95[1]
    assert len(r.accuracy_seeds) == 3 and r.n_train == 60 and r.n_test == 8


def test_labelled_reader_names_file_and_line(tmp_path):
    ok = tmp_path / "ok.tsv"
    ok.write_text("sport\tthe match was won\necon\tprices rose\n", encoding="utf-8")
    data = read_labelled(ok)
    assert data.labels == ["sport", "econ"] and data.texts == ["the match was won", "prices rose"]
    for content, message in (("sport\tok\nno tab here\n", "bad.tsv:2: no tab"),
                             ("sport\tok\n\tno label\n", "bad.tsv:2: empty label or text"),
                             ("sport\tok\n\nsport\tx\n", "bad.tsv:2: blank line")):
        bad = tmp_path / "bad.tsv"
        bad.write_text(content, encoding="utf-8")
        with pytest.raises(InputFormatError, match=message):
            read_labelled(bad)


def test_bible_genre_task_is_split_by_book():
    from xlsent.data.labelled import GENRES, bible_genre

    assert set(GENRE_OF) and len(GENRE_OF) == 66
    assert {GENRE_OF[b] for b in TEST_BOOKS} == set(GENRES)  # every class has a test book
    task = bible_genre(per_class=50)
    tr, te, tt = task["train"], task["test"], task["train_target"]
    assert set(tr.labels) == set(te.labels) == set(GENRES)
    assert tr.lang == "en" and te.lang == "ny" and tt.lang == "ny"
    assert len(tr.texts) == len(te.texts) == 300
    assert not set(tt.texts) & set(te.texts)  # no test verse among the Chichewa training verses


def test_cli_classify_end_to_end_on_a_tiny_model(tiny_model, tmp_path):
    import json

    from test_cli import xlsent

    words = {"sport": ["match", "goal", "team", "river"], "econ": ["price", "market", "bank", "water"]}
    rng = np.random.default_rng(1)

    def write(path, n):
        path.write_text("".join(f"{lab}\t{' '.join(rng.choice(ws, 4))}\n" for lab, ws in words.items()
                                for _ in range(n)), encoding="utf-8")

    write(tmp_path / "train.tsv", 20)
    write(tmp_path / "test.tsv", 6)
    write(tmp_path / "target.tsv", 20)
    out = tmp_path / "r.json"
    p = xlsent("eval", "classify", "-m", str(tiny_model), "--train", str(tmp_path / "train.tsv"), "--test",
               str(tmp_path / "test.tsv"), "--train-target", str(tmp_path / "target.tsv"), "--seeds", "2",
               "--resamples", "100", "--plot", str(tmp_path / "c.png"), "-o", str(out))
    assert p.returncode == 0, p.stderr[-2000:]
    r = json.loads(out.read_text())
    assert r["transfer"]["n_test"] == 12 and r["in_language"]["n_train"] == 40
    assert set(r["transfer"]["per_class_f1"]) == {"econ", "sport"}
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"
