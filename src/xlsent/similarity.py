"""Shared numeric primitives: unit vectors, exact k-NN (faiss), LASER margins, one-to-one selection.

The lowest layer of xlsent: it imports nothing of xlsent but :mod:`xlsent.utils`. Data
preparation (``data/``), evaluation (``evaluation/``) and mining (``mining/``) all score
sentence pairs with these functions, so a margin or a nearest neighbour means the same thing
everywhere.

LASER's margin (Artetxe & Schwenk 2019), with ``NN_k(x)`` the ``k`` nearest candidates of ``x``
on the other side and ``NN_k(y)`` those of ``y``::

    b(x, y)  = ( mean_{z ∈ NN_k(x)} cos(x, z) + mean_{z ∈ NN_k(y)} cos(y, z) ) / 2
    ratio    = cos(x, y) / b(x, y)          (the default, "ratio margin")
    distance = cos(x, y) − b(x, y)
    absolute = cos(x, y)                    (no margin)

CSLS (Conneau et al. 2018, "Word translation without parallel data") is twice the distance margin,
``2 cos(x, y) − r(x) − r(y)`` with ``r`` the mean cosine to the ``k`` nearest neighbours on the other
side: it ranks every candidate exactly as the distance margin does, and is offered under its own name.

Per-language centering (:func:`center`): each side's (language's) mean vector is subtracted before
scoring. A language-specific offset shared by all of a language's vectors — the main thing that keeps
two languages' clouds apart in a multilingual encoder — is removed exactly, and what remains is the
sentence's content. Cosine, margin and CSLS all apply after it.
"""

from __future__ import annotations

import numpy as np

from xlsent.utils.errors import XlsentError

#: cosine at which two stored vectors are taken for the same text (stored in float16 or int8, a sentence's vector
#: keeps a cosine above 0.9999 with itself)
SAME_TEXT = 0.999

SIMILARITIES = ("cosine", "dot", "euclidean", "manhattan", "margin", "csls")
MARGINS = ("ratio", "distance", "absolute")
#: the similarities of a pair of vectors alone (no neighbours): what STS and triplet evaluation score
PAIRWISE = ("cosine", "dot", "euclidean", "manhattan")


def unit(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` scaled to unit length (float32, contiguous; zero rows stay zero)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    return x / np.clip(np.linalg.norm(x, axis=1, keepdims=True), 1e-12, None)


def center(x: np.ndarray, mean: np.ndarray | None = None) -> np.ndarray:
    """``x`` minus ``mean`` (default: the mean row of ``x`` itself) — per-language centering (float32).

    Give each language's vectors with their own mean: the mean of that language's pool, or a mean
    computed in advance from other text of the language (a calibrated model folder)."""
    x = np.asarray(x, dtype=np.float32)
    m = x.mean(0) if mean is None else np.asarray(mean, dtype=np.float32).reshape(-1)
    if m.shape[0] != x.shape[1]:
        raise XlsentError(f"a mean of width {m.shape[0]} cannot center vectors of width {x.shape[1]}")
    return np.ascontiguousarray(x - m, dtype=np.float32)


def pairwise(a: np.ndarray, b: np.ndarray, order: tuple[str, ...] = PAIRWISE) -> dict[str, np.ndarray]:
    """Each row of ``a`` scored against the same row of ``b`` by each similarity of ``order`` (higher = closer:
    the distances negated), in that order."""
    an = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    bn = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    scores = {"cosine": lambda: (an * bn).sum(1), "dot": lambda: (a * b).sum(1),
              "euclidean": lambda: -np.linalg.norm(a - b, axis=1), "manhattan": lambda: -np.abs(a - b).sum(1)}
    return {name: scores[name]() for name in order}


def knn(queries: np.ndarray, candidates: np.ndarray, k: int, similarity: str = "cosine") -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` candidates per query with faiss (exact). Returns ``(scores, indices)``, best first.

    ``similarity``: ``cosine``, ``dot``, ``euclidean`` or ``manhattan`` (distances are negated,
    so a higher score is always closer).
    """
    import faiss

    k = min(k, len(candidates))
    d = candidates.shape[1]
    if similarity == "cosine":
        queries, candidates = unit(queries), unit(candidates)
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    candidates = np.ascontiguousarray(candidates, dtype=np.float32)
    if similarity in ("cosine", "dot"):
        index = faiss.IndexFlatIP(d)
    elif similarity == "euclidean":
        index = faiss.IndexFlatL2(d)
    elif similarity == "manhattan":
        index = faiss.IndexFlat(d, faiss.METRIC_L1)
    else:
        raise ValueError(f"unknown similarity {similarity!r}")
    index.add(candidates)
    scores, idx = index.search(queries, k)
    if similarity == "euclidean":
        scores = -np.sqrt(np.maximum(scores, 0))
    elif similarity == "manhattan":
        scores = -scores
    return scores, idx


def margin(cos: np.ndarray, b: np.ndarray, kind: str = "ratio") -> np.ndarray:
    """``cos`` against the neighbourhood average ``b`` (same shape), by ``kind``."""
    if kind == "ratio":
        return cos / b
    if kind == "distance":
        return cos - b
    if kind == "absolute":
        return cos.copy()
    raise XlsentError(f"unknown margin '{kind}': use one of {', '.join(MARGINS)}")


def knn_mean(sims: np.ndarray, idx: np.ndarray, k: int) -> np.ndarray:
    """Mean cosine of each row's first ``k`` valid neighbours (faiss marks missing ones with index −1)."""
    s, valid = sims[:, :k], idx[:, :k] >= 0
    n = valid.sum(1)
    return np.where(n > 0, np.where(valid, s, 0).sum(1) / np.maximum(n, 1), 0).astype(sims.dtype, copy=False)


def pair_margins(a: np.ndarray, b: np.ndarray, k: int = 4, kind: str = "ratio") -> np.ndarray:
    """Margin of each aligned pair ``(a[i], b[i])``, the neighbourhoods taken over all rows of the other side."""
    a, b = unit(a), unit(b)
    cos = np.sum(a * b, axis=1)
    ka, kb = min(k, len(b)), min(k, len(a))
    fs, fi = knn(a, b, ka, "cosine")
    bs, bi = knn(b, a, kb, "cosine")
    return margin(cos, (knn_mean(fs, fi, ka) + knn_mean(bs, bi, kb)) / 2, kind)


def margin_topk(queries: np.ndarray, candidates: np.ndarray, topk: int, k_nn: int = 4, block: int = 1024,
                kind: str = "ratio"):
    """Exact margin top-``topk`` over the whole pool (LASER's margin of ``kind``, ``k_nn`` neighbours each way)."""
    q, c = unit(queries), unit(candidates)
    kq = min(k_nn, len(c))
    kc = min(k_nn, len(q))
    mean_q = knn(q, c, kq, "cosine")[0].mean(1)  # (nq,)
    mean_c = knn(c, q, kc, "cosine")[0].mean(1)  # (nc,)
    topk = min(topk, len(c))
    scores = np.zeros((len(q), topk), np.float32)
    idx = np.zeros((len(q), topk), np.int64)
    for s in range(0, len(q), block):
        cos = q[s : s + block] @ c.T
        m = margin(cos, (mean_q[s : s + block, None] + mean_c[None, :]) / 2, kind)
        part = np.argpartition(-m, topk - 1, axis=1)[:, :topk]
        ps = np.take_along_axis(m, part, 1)
        order = np.argsort(-ps, axis=1, kind="stable")
        idx[s : s + block] = np.take_along_axis(part, order, 1)
        scores[s : s + block] = np.take_along_axis(ps, order, 1)
    return scores, idx


def ranked_candidates(queries: np.ndarray, candidates: np.ndarray, similarity: str, topk: int, k_nn: int = 4):
    """Top-``topk`` candidates by any of :data:`SIMILARITIES` (``margin`` = exact ratio margin; ``csls`` =
    CSLS, scores ``2 cos − r(x) − r(y)``)."""
    if similarity == "margin":
        return margin_topk(queries, candidates, topk, k_nn)
    if similarity == "csls":
        scores, idx = margin_topk(queries, candidates, topk, k_nn, kind="distance")
        return 2 * scores, idx
    return knn(queries, candidates, topk, similarity)


def greedy_one_to_one(src: np.ndarray, tgt: np.ndarray, score: np.ndarray, chunk: int = 1 << 16) -> np.ndarray:
    """Indices of pairs kept when taken best-first with every source and target used once (best first;
    ties keep their input order).

    Memory: one byte per sentence and per candidate besides the sort order; candidates are walked in
    chunks so that no list of Python integers as long as the input is built."""
    if len(score) == 0:
        return np.zeros(0, dtype=np.int64)
    used_s, used_t = bytearray(int(src.max()) + 1), bytearray(int(tgt.max()) + 1)
    order = np.argsort(-score, kind="stable")
    kept = bytearray(len(order))  # by position in ``order``
    for a in range(0, len(order), chunk):
        o = order[a:a + chunk]
        for j, (s, t) in enumerate(zip(src[o].tolist(), tgt[o].tolist()), a):
            if not (used_s[s] or used_t[t]):
                used_s[s] = used_t[t] = kept[j] = 1
    return order[np.frombuffer(kept, dtype=bool)]
