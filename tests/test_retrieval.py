from __future__ import annotations

import numpy as np
import pytest

from xlsent.evaluation.bootstrap import mean_ci
from xlsent.evaluation.retrieval import direction_scores, evaluate_many, evaluate_retrieval
from xlsent.similarity import margin_topk, ranked_candidates

Q = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
C = np.array([[0.0, 1.0], [1.0, 0.0], [-1.0, 0.1]])


def test_precision_at_k_by_hand():
    # cosine: q0 -> c1 (wrong), q1 -> c0 (wrong), q2 -> c2 (right); the pool has 3 candidates
    r = direction_scores(Q, C, ["a", "b", "c"], ["a", "b", "c"], n_resamples=1000)
    assert r["p@1"] == pytest.approx(1 / 3)
    assert r["p@5"] == 1.0 and r["p@10"] == 1.0
    assert r["ci95"]["p@5"] == [1.0, 1.0]


def test_ties_count_as_correct():
    # c0 and c1 carry the same text: q0's top candidate c1 equals its gold text, likewise q1's c0
    r = direction_scores(Q, C, ["same", "same", "c"], ["same", "same", "c"])
    assert r["p@1"] == 1.0


def test_both_directions_are_reported_separately():
    src, tgt = ["s0", "s1", "s2"], ["t0", "t1", "t2"]
    table = {**dict(zip(src, Q)), **dict(zip(tgt, C))}
    res = evaluate_retrieval(src, tgt, lambda texts: np.array([table[t] for t in texts]), n_resamples=1000)
    assert res.src2tgt["p@1"] == pytest.approx(1 / 3)
    # tgt->src: c0 -> q1 (wrong), c1 -> q0 (wrong), c2 -> q2 (right)
    assert res.tgt2src["p@1"] == pytest.approx(1 / 3)
    d = res.to_dict()
    assert set(d) >= {"model", "n", "similarity", "src2tgt", "tgt2src"}
    assert set(d["src2tgt"]) == {"p@1", "p@5", "p@10", "ci95"}


def test_similarities_rank_differently():
    q = np.array([[1.0, 0.0]])
    c = np.array([[10.0, 0.5], [1.0, 1.0]])
    assert ranked_candidates(q, c, "cosine", 1)[1][0, 0] == 0
    assert ranked_candidates(q, c, "dot", 1)[1][0, 0] == 0
    assert ranked_candidates(q, c, "euclidean", 1)[1][0, 0] == 1
    assert ranked_candidates(q, c, "manhattan", 1)[1][0, 0] == 1
    s, _ = ranked_candidates(q, c, "euclidean", 2)
    assert s[0, 0] == pytest.approx(-1.0)  # distance 1 to [1, 1]
    s, _ = ranked_candidates(q, c, "manhattan", 2)
    assert s[0, 0] == pytest.approx(-1.0)


def test_margin_matches_hand_computation():
    # cos: q0c0 = .8, q0c1 = 0, q1c0 = .96, q1c1 = .8 ; with k = 1:
    # NN(q0) = .8, NN(q1) = .96, NN(c0) = .96, NN(c1) = .8
    # margin = cos / ((NN(q) + NN(c)) / 2)
    q = np.array([[1.0, 0.0], [0.6, 0.8]])
    c = np.array([[0.8, 0.6], [0.0, 1.0]])
    scores, idx = margin_topk(q, c, topk=2, k_nn=1)
    assert idx.tolist() == [[0, 1], [0, 1]]
    assert scores[0] == pytest.approx([0.8 / 0.88, 0.0], abs=1e-6)
    assert scores[1] == pytest.approx([0.96 / 0.96, 0.8 / 0.88], abs=1e-6)


def test_bootstrap_ci_is_seeded_and_brackets_the_mean():
    x = np.array([1, 0, 1, 1, 0, 1, 1, 1, 0, 1] * 10)
    lo, hi = mean_ci(x, 1000, seed=3)
    assert [lo, hi] == mean_ci(x, 1000, seed=3)
    assert lo < x.mean() < hi and hi - lo < 0.3
    assert mean_ci(np.ones(20)) == [1.0, 1.0]


def test_evaluate_many_encodes_each_text_once():
    calls = []
    table = {"a": [1.0, 0.0], "b": [0.0, 1.0], "x": [1.0, 0.1], "y": [0.1, 1.0]}

    def enc(texts):
        calls.append(list(texts))
        return np.array([table[t] for t in texts])

    res = evaluate_many({"l1": (["a", "b"], ["x", "y"], "en", "l1"), "l2": (["a", "b"], ["x", "y"], "en", "l2")}, enc)
    # a language-independent encoder: every text once, in one call (batched by length across languages)
    assert len(calls) == 1 and sorted(calls[0]) == ["a", "b", "x", "y"]
    assert [r.tgt_lang for r in res] == ["l1", "l2"] and res[0].src2tgt["p@1"] == 1.0


def test_evaluate_many_encodes_per_language_for_a_gloss_encoder():
    from xlsent.data.dictionary import BilingualDictionary
    from xlsent.encoding.encoder import Encoder, FunctionBackend
    from xlsent.models.gloss import Gloss

    calls = []
    table = {"a": [1.0, 0.0], "b": [0.0, 1.0], "x": [1.0, 0.1], "y": [0.1, 1.0], "aa": [1.0, 0.0]}

    def fn(texts):
        calls.append(list(texts))
        return np.array([table[t] for t in texts])

    enc = Encoder(FunctionBackend(fn, dimension=2), gloss=Gloss(BilingualDictionary({"x": "aa"})))
    res = evaluate_many({"l1": (["a", "b"], ["x", "y"], "en", "l1"), "l2": (["a", "b"], ["x", "y"], "en", "l2")}, enc)
    assert sorted(map(sorted, calls)) == [["a", "b"], ["aa", "y"], ["aa", "y"]]  # English never glossed
    assert res[0].src2tgt["p@1"] == 1.0


def test_large_pool_queries_search_every_candidate_and_the_distractors():
    from xlsent.evaluation.retrieval import evaluate_queries

    vec = {"a": [1, 0, 0], "b": [0, 1, 0], "c": [0, 0, 1], "d": [1, 1, 0],
           "A": [1, 0.1, 0], "B": [0, 1, 0.1], "C": [0.1, 0, 1], "D": [1, 1, 0.1],
           "decoy": [0, 0.1, 1]}  # closer to "c" than its translation "C" is
    enc = lambda texts: np.array([vec[t] for t in texts], dtype=np.float32)  # noqa: E731
    src, tgt = ["a", "b", "c", "d"], ["A", "B", "C", "D"]
    r = evaluate_queries(src, tgt, enc, 4, n_resamples=100)
    assert r.n == 4 and r.candidates == {"src2tgt": 4, "tgt2src": 4}
    assert r.src2tgt["p@1"] == 1.0 and r.tgt2src["p@1"] == 1.0
    r = evaluate_queries(src, tgt, enc, 4, n_resamples=100, tgt_distractors=["decoy"])
    assert r.candidates == {"src2tgt": 5, "tgt2src": 4}
    assert r.src2tgt["p@1"] == 0.75 and r.src2tgt["p@5"] == 1.0  # "c" now finds the decoy first
    assert r.tgt2src["p@1"] == 1.0
    two = evaluate_queries(src, tgt, enc, 2, n_resamples=100, seed=3)
    assert two.n == 2 and two.candidates == {"src2tgt": 4, "tgt2src": 4}  # 2 queries, all 4 candidates
    with pytest.raises(ValueError, match="queries must lie in 1..4"):
        evaluate_queries(src, tgt, enc, 5)
