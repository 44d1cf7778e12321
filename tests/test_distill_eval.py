"""STS / triplet / MSE evaluators, their readers, chunked pooling and triplet construction."""

from __future__ import annotations

import numpy as np
import pytest

from xlsent.data.sts import read_sts
from xlsent.data.triplets import build_triplets, read_triplets
from xlsent.encoding.chunked import chunk_text, chunked_encode
from xlsent.evaluation.mse import evaluate_mse
from xlsent.evaluation.sts import evaluate_sts
from xlsent.evaluation.triplet import evaluate_triplets
from xlsent.utils.errors import InputFormatError, XlsentError


def test_chunk_text_balanced_chunks():
    words = [f"w{i}" for i in range(45)]
    chunks = chunk_text(" ".join(words), 20)
    assert [len(c.split()) for c in chunks] == [15, 15, 15]
    assert " ".join(chunks).split() == words
    assert chunk_text("short text", 20) == ["short text"]


def test_chunked_encode_averages_chunk_vectors():
    table = {"a b": np.array([1.0, 0.0]), "c d": np.array([0.0, 1.0]), "x": np.array([2.0, 2.0])}
    enc = lambda texts: np.stack([table[t] for t in texts])  # noqa: E731
    out = chunked_encode(enc, ["a b c d", "x"], max_words=2)
    np.testing.assert_allclose(out, [[0.5, 0.5], [2.0, 2.0]])
    out = chunked_encode(enc, ["a b c d"], max_words=2, renormalize=True)
    np.testing.assert_allclose(out, [[2 ** -0.5, 2 ** -0.5]])


def test_read_sts_and_its_errors(tmp_path):
    p = tmp_path / "sts.tsv"
    p.write_text("sentence1\tsentence2\tscore\na\tb\t4.5\nc\td\t0\n", encoding="utf-8")
    ds, _ = read_sts(p)
    assert ds["score"] == [4.5, 0.0]
    for body, msg in [("a\tb\t6\nc\td\t1\n", "outside 0–5"), ("a\tb\tx\nc\td\t1\n", "not a number"),
                      ("a\tb\nc\td\t1\n", "expected 3"), ("a\t\t1\nc\td\t1\n", "empty sentence")]:
        p.write_text(body, encoding="utf-8")
        with pytest.raises(InputFormatError, match=rf"sts.tsv:1: .*{msg}"):
            read_sts(p)
    p.write_text("a\tb\t6\nc\td\t1\ne\tf\t2\n", encoding="utf-8")
    ds, rep = read_sts(p, on_bad_lines="skip")
    assert len(ds) == 2 and sum(rep.skipped.values()) == 1


def test_sts_matches_sentence_transformers_evaluator(tiny_model):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator

    st = SentenceTransformer(str(tiny_model), device="cpu")
    s1 = ["god is good", "the river is wide", "water light earth", "he said unto them", "lord of heaven", "a nyumba"]
    s2 = ["mulungu ndi wabwino", "mtsinje madzi", "kuwala dziko", "they were", "kumwamba", "chala"]
    gold = [4.8, 3.9, 2.5, 1.0, 4.1, 0.3]
    ours = evaluate_sts(s1, s2, gold, lambda t: st.encode(t), "tiny", n_resamples=200).to_dict()
    theirs = EmbeddingSimilarityEvaluator(s1, s2, [g / 5 for g in gold], name="x",
                                          similarity_fn_names=["cosine", "euclidean", "manhattan", "dot"])(st)
    assert ours["cosine"]["spearman"] == pytest.approx(theirs["x_spearman_cosine"], abs=1e-4)
    assert ours["cosine"]["pearson"] == pytest.approx(theirs["x_pearson_cosine"], abs=1e-4)
    assert ours["euclidean"]["spearman"] == pytest.approx(theirs["x_spearman_euclidean"], abs=1e-4)
    assert ours["manhattan"]["pearson"] == pytest.approx(theirs["x_pearson_manhattan"], abs=1e-4)
    assert ours["dot"]["spearman"] == pytest.approx(theirs["x_spearman_dot"], abs=1e-4)
    lo, hi = ours["cosine"]["spearman_ci"]
    assert lo <= ours["cosine"]["spearman"] <= hi


def test_triplet_metrics_on_hand_made_embeddings():
    vecs = {
        "a1": [1.0, 0.0], "p1": [0.9, 0.1], "n1": [0.0, 1.0],          # correct under every measure
        "a2 x y z w v": [1.0, 0.0], "p2": [0.0, 1.0], "n2": [1.0, 0.1],  # wrong; length difference 5
        "a3": [1.0, 0.0], "p3": [5.0, 0.5], "n3": [1.0, 0.0],           # cosine wrong (n identical), dot right
    }
    enc = lambda texts: np.array([vecs[t] for t in texts])  # noqa: E731
    typed = evaluate_triplets(["a1", "a2 x y z w v", "a3"], ["p1", "p2", "p3"], ["n1", "n2", "n3"], enc, n_resamples=100)
    assert typed.accuracy["dot"].accuracy == pytest.approx(2 / 3) and typed.by_length_difference[1].bin == "5-9"
    r = typed.to_dict()  # the JSON shape eval triplet writes and metrics.json keeps
    acc = r["accuracy"]
    assert acc["cosine"]["accuracy"] == pytest.approx(1 / 3)
    assert acc["dot"]["accuracy"] == pytest.approx(2 / 3)
    assert acc["euclidean"]["accuracy"] == pytest.approx(1 / 3)
    assert acc["max"]["of"] in ("cosine", "manhattan", "euclidean")
    bins = {b["bin"]: b for b in r["by_length_difference"]}
    assert bins["0-4"]["n"] == 2 and bins["5-9"]["n"] == 1 and bins["5-9"]["accuracy_cosine"] == 0.0
    cp = [np.dot(vecs[a], vecs[p]) / np.linalg.norm(vecs[a]) / np.linalg.norm(vecs[p])
          for a, p in [("a1", "p1"), ("a2 x y z w v", "p2"), ("a3", "p3")]]
    assert r["cosine_positive"]["mean"] == pytest.approx(np.mean(cp)) and r["cosine_positive"]["std"] == pytest.approx(np.std(cp))


def test_triplet_accuracy_matches_sentence_transformers_evaluator(tiny_model):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.evaluation import TripletEvaluator

    st = SentenceTransformer(str(tiny_model), device="cpu")
    a = ["mulungu ndi wabwino", "mtsinje madzi", "kuwala dziko", "chala nyumba"]
    p = ["god is good", "the river water", "light earth", "a house"]
    n = ["the river water", "light earth", "god is good", "he said unto them"]
    ours = evaluate_triplets(a, p, n, lambda t: st.encode(t), n_resamples=100).to_dict()
    theirs = TripletEvaluator(a, p, n, name="x", similarity_fn_names=["cosine", "dot", "euclidean", "manhattan"])(st)
    for k in ("cosine", "dot", "euclidean", "manhattan"):
        assert ours["accuracy"][k]["accuracy"] == pytest.approx(theirs[f"x_{k}_accuracy"])


def test_mse_evaluator_by_hand():
    t = {"e1": [1.0, 0.0], "e2": [0.0, 1.0]}
    s = {"e1": [1.0, 0.0], "e2": [0.0, 0.0], "x1": [0.0, 1.0], "x2": [0.0, 1.0]}
    r = evaluate_mse(["e1", "e2"], ["x1", "x2"], lambda ts: np.array([s[x] for x in ts]),
                     lambda ts: np.array([t[x] for x in ts])).to_dict()
    assert r["mse_src"] == pytest.approx(0.25) and r["mse_tgt"] == pytest.approx(0.5)
    assert r["mse_tgt_x100"] == pytest.approx(50.0)


def test_read_triplets_errors_and_skips(tmp_path):
    p = tmp_path / "t.tsv"
    p.write_text("anchor\tpositive\tnegative\nx\ty\tz\nx\ty\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"t.tsv:3: 2 tab-separated field\(s\), expected 3"):
        read_triplets(p)
    ds, rep = read_triplets(p, on_bad_lines="skip")
    assert len(ds) == 1 and rep.lines() == [f"{p}: skipped 1 line(s): 2 tab-separated field(s), expected 3"]
    p.write_text("x\t\tz\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match="empty positive field"):
        read_triplets(p)


def test_section_negatives_come_from_another_chapter_of_the_same_book():
    from xlsent.data.bundled import load_bundled

    ds = load_bundled("bible-en-ny:test").select(range(400))  # Matthew 1..
    trip, rep = build_triplets(ds, "section", seed=0)
    book_chapter = {r["src"]: (r["book"], r["chapter"]) for r in ds}
    for row, orig in zip(trip, ds):
        assert row["anchor"] == orig["tgt"] and row["positive"] == orig["src"]  # anchor = Chichewa side
        assert row["negative"] != row["positive"]
        nb, nc = book_chapter[row["negative"]]
        assert nb == orig["book"] and nc != orig["chapter"]
    assert rep.rows == 400


def test_random_negatives_and_missing_structure(pairs_tsv):
    from xlsent.data.readers import read_tsv

    ds, _ = read_tsv(pairs_tsv)
    trip, _ = build_triplets(ds, "random", seed=1)
    assert all(r["negative"] != r["positive"] for r in trip)
    assert trip["anchor"] == ds["tgt"]  # ny is the anchor (header en<TAB>ny)
    with pytest.raises(XlsentError, match="needs document structure"):
        build_triplets(ds, "section")
    with pytest.raises(XlsentError, match="unknown negative strategy"):
        build_triplets(ds, "semi")


def test_hard_negatives_mined_with_sentence_transformers(tiny_model, pairs_tsv):
    from sentence_transformers import SentenceTransformer

    from xlsent.data.readers import read_tsv

    ds, _ = read_tsv(pairs_tsv)
    st = SentenceTransformer(str(tiny_model), device="cpu")
    trip, rep = build_triplets(ds, "hard", teacher=st, relative_margin=0.0)
    emb = st.encode(list(ds["src"]), normalize_embeddings=True)
    index = {t: i for i, t in enumerate(ds["src"])}
    sims = emb @ emb.T
    np.fill_diagonal(sims, -2)
    hits = sum(sims[i].argmax() == index[r["negative"]] for i, r in enumerate(trip))
    assert hits >= 0.8 * len(trip)  # the teacher's nearest other sentence (ties and fallbacks aside)
    assert all(r["negative"] != r["positive"] for r in trip)
