from __future__ import annotations

import numpy as np

from xlsent.data.negatives import build_negatives


def test_random_never_uses_own_or_duplicate_translation():
    tgt = ["a", "b", "a", "c", "d"]
    src_idx, neg = build_negatives("random", tgt, np.random.default_rng(0), per_positive=3)
    assert len(src_idx) == 15 and neg.shape == (15, 1)
    t = np.array(tgt)
    assert not (t[neg[:, 0]] == t[src_idx]).any()


def test_worst_picks_the_most_similar_non_parallel_target():
    src = np.array([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    tgt_vecs = np.array([[1.0, 0.05], [0.0, 1.0], [0.9, 0.5]])
    src_idx, neg = build_negatives("worst", ["x", "y", "z"], np.random.default_rng(0), src_vecs=src, tgt_vecs=tgt_vecs)
    # src0's closest other target is t2 ; src1's is t2 ; src2's is t0 (cos .72 vs t1 .71)
    assert src_idx.tolist() == [0, 1, 2]
    assert neg[:, 0].tolist() == [2, 2, 0]


def test_average_has_k_candidates():
    src_idx, neg = build_negatives("average", list("abcdefgh"), np.random.default_rng(1), average_k=4)
    assert neg.shape == (8, 4)
    assert not (neg == src_idx[:, None]).any()
