"""Bidirectional parallel-sentence retrieval: P@1/5/10 with bootstrap CIs.

For each query sentence every candidate of the other side in the whole test
pool is ranked; P@k is the share of queries whose gold translation is among the
top k. Differences from MTEB's bitext-mining top-1 score:

* **both directions** (src→tgt and tgt→src) and P@5, P@10;
* **tie-aware**: a candidate whose text equals the gold target's text counts as
  correct — small test sets contain duplicate sentences, and picking the
  "other" copy is not an error;
* **similarities**: cosine (default), dot, Euclidean, Manhattan (negated
  distances rank), and LASER's ratio margin (Artetxe & Schwenk 2019):
  ``margin(x, y) = cos(x, y) / (Σ_{z∈NN_k(x)} cos(x, z) / 2k + Σ_{z∈NN_k(y)} cos(y, z) / 2k)``
  with k = 4 nearest neighbours in each direction (faiss), scored exactly over the pool;
  and CSLS (Conneau et al. 2018), the same neighbourhoods, ``2 cos(x, y) − r(x) − r(y)``;
* **per-language centering** (``center=True``): each side's mean vector over the pool is
  subtracted before scoring (:func:`xlsent.similarity.center`);
* **95% bootstrap confidence intervals** over queries (scipy, percentile
  method, ≥ 1,000 resamples, seeded);
* ``beside=True`` adds P@1 of the other scorings (centered cosine, CSLS, centered CSLS) next to
  the main figure, which stays the literature's plain cosine by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence

import numpy as np

from xlsent.evaluation.bootstrap import mean_ci

from xlsent.encoding.encoder import TextEncoder, as_encoder
from xlsent.similarity import SIMILARITIES, center as center_rows, ranked_candidates

KS = (1, 5, 10)


class Pool(NamedTuple):
    """One pool of aligned pairs: ``src[i]`` translates ``tgt[i]``; the languages as ISO 639-3 codes (or "")."""

    src: list[str]
    tgt: list[str]
    src_lang: str = ""
    tgt_lang: str = ""
#: the scorings reported beside the main figure: (centered?, similarity)
BESIDE = {"cosine": (False, "cosine"), "center+cosine": (True, "cosine"), "csls": (False, "csls"),
          "center+csls": (True, "csls"), "margin": (False, "margin"), "center+margin": (True, "margin")}


def hits(top_idx: np.ndarray, gold_texts: Sequence[str], candidate_texts: Sequence[str]) -> np.ndarray:
    """``hits[i, r]`` = candidate at rank r of query i is correct (same text as the gold, tie-aware)."""
    cand = np.asarray(candidate_texts, dtype=object)
    gold = np.asarray(gold_texts, dtype=object)
    return cand[top_idx] == gold[:, None]


def direction_scores(
    q_emb: np.ndarray,
    c_emb: np.ndarray,
    gold_texts: Sequence[str],
    candidate_texts: Sequence[str],
    similarity: str = "cosine",
    n_resamples: int = 1000,
    seed: int = 0,
    k_nn: int = 4,
) -> dict:
    """P@1/5/10 and their CIs for one direction; query i's gold is candidate i."""
    _, idx = ranked_candidates(q_emb, c_emb, similarity, max(KS), k_nn)
    h = hits(idx, gold_texts, candidate_texts)
    out: dict = {}
    ci: dict = {}
    for k in KS:
        correct = h[:, :k].any(1)
        out[f"p@{k}"] = float(correct.mean())
        ci[f"p@{k}"] = mean_ci(correct, n_resamples, seed)
    out["ci95"] = ci
    return out


@dataclass
class RetrievalResult:
    model: str
    n: int
    similarity: str
    src2tgt: dict
    tgt2src: dict
    src_lang: str = ""
    tgt_lang: str = ""
    dataset: str = ""
    candidates: dict | None = None  # large-pool mode: candidates searched per direction
    centered: bool = False
    beside: dict | None = None  # P@1 of other scorings: {name: {src2tgt, tgt2src}}
    # the target language's text (by-language pools: xlsent.evaluation.languages.profile_languages)
    script: str = ""  # ISO 15924, the majority script of its letters
    pieces_per_word: float | None = None  # the model's tokenizer: pieces per word …
    unk_rate: float | None = None  # … and the share of pieces that are its unknown piece

    def to_dict(self) -> dict:
        d = {"model": self.model, "n": self.n, "similarity": self.similarity}
        for k in ("centered", "dataset", "src_lang", "tgt_lang", "candidates", "beside", "script"):
            if getattr(self, k):
                d[k] = getattr(self, k)
        for k in ("pieces_per_word", "unk_rate"):
            if getattr(self, k) is not None:
                d[k] = getattr(self, k)
        d["src2tgt"] = self.src2tgt
        d["tgt2src"] = self.tgt2src
        return d


def evaluate_retrieval(
    src_texts: Sequence[str],
    tgt_texts: Sequence[str],
    encoder: TextEncoder | Callable[[list[str]], np.ndarray],
    model_name: str = "",
    similarity: str = "cosine",
    n_resamples: int = 1000,
    seed: int = 0,
    k_nn: int = 4,
    src_lang: str = "",
    tgt_lang: str = "",
    dataset: str = "",
    center: bool = False,
    beside: bool = False,
) -> RetrievalResult:
    """Evaluate one pool of aligned pairs; each side is encoded with its language (``encoder.encode(texts, lang)``).

    ``center``: subtract each side's mean over the pool first; ``beside``: also P@1 of every scoring in
    :data:`BESIDE` other than the main one."""
    if similarity not in SIMILARITIES:
        raise ValueError(f"similarity must be one of {SIMILARITIES}")
    enc = as_encoder(encoder)
    src_texts, tgt_texts = list(src_texts), list(tgt_texts)
    s0, t0 = enc.encode(src_texts, src_lang or None), enc.encode(tgt_texts, tgt_lang or None)
    s, t = (center_rows(s0), center_rows(t0)) if center else (s0, t0)
    return RetrievalResult(
        model=model_name,
        n=len(src_texts),
        similarity=similarity,
        src2tgt=direction_scores(s, t, tgt_texts, tgt_texts, similarity, n_resamples, seed, k_nn),
        tgt2src=direction_scores(t, s, src_texts, src_texts, similarity, n_resamples, seed, k_nn),
        src_lang=src_lang,
        tgt_lang=tgt_lang,
        dataset=dataset,
        centered=center,
        beside=beside_scores(s0, t0, src_texts, tgt_texts, (center, similarity), k_nn) if beside else None,
    )


def beside_scores(s: np.ndarray, t: np.ndarray, src_texts: Sequence[str], tgt_texts: Sequence[str],
                  main: tuple[bool, str], k_nn: int = 4) -> dict:
    """P@1 both ways (tie-aware) of every scoring in :data:`BESIDE` but ``main`` (centered?, similarity)."""
    out = {}
    for name, (c, sim) in BESIDE.items():
        if (c, sim) == main:
            continue
        a, b = (center_rows(s), center_rows(t)) if c else (s, t)
        out[name] = {d: float(hits(ranked_candidates(q, x, sim, 1, k_nn)[1], gold, gold)[:, 0].mean())
                     for d, q, x, gold in (("src2tgt", a, b, tgt_texts), ("tgt2src", b, a, src_texts))}
    return out


def evaluate_queries(
    src_texts: Sequence[str],
    tgt_texts: Sequence[str],
    encoder: TextEncoder | Callable[[list[str]], np.ndarray],
    n_queries: int,
    model_name: str = "",
    similarity: str = "cosine",
    n_resamples: int = 1000,
    seed: int = 0,
    k_nn: int = 4,
    src_lang: str = "",
    tgt_lang: str = "",
    dataset: str = "",
    src_distractors: Sequence[str] = (),
    tgt_distractors: Sequence[str] = (),
    center: bool = False,
) -> RetrievalResult:
    """Retrieval in a large pool (Mao et al. 2021 §4.4: 2,000 queries among 200k sentences).

    ``n_queries`` pairs are drawn (seeded) from the aligned pool; each query is searched among *every*
    sentence of the other side of the pool plus that side's distractors (``tgt_distractors`` for
    src→tgt, ``src_distractors`` for tgt→src). A candidate with the gold's text counts as correct."""
    enc = as_encoder(encoder)
    src_texts, tgt_texts = list(src_texts), list(tgt_texts)
    if not 1 <= n_queries <= len(src_texts):
        raise ValueError(f"queries must lie in 1..{len(src_texts)} (the pool's pairs), not {n_queries}")
    q = np.random.default_rng(seed).choice(len(src_texts), n_queries, replace=False)
    src_all = list(dict.fromkeys(src_texts + list(src_distractors)))
    tgt_all = list(dict.fromkeys(tgt_texts + list(tgt_distractors)))
    s_emb, t_emb = enc.encode(src_all, src_lang or None), enc.encode(tgt_all, tgt_lang or None)
    if center:  # each side's mean over everything searched
        s_emb, t_emb = center_rows(s_emb), center_rows(t_emb)
    s_row = {t: i for i, t in enumerate(src_all)}
    t_row = {t: i for i, t in enumerate(tgt_all)}
    qs, qt = [src_texts[i] for i in q], [tgt_texts[i] for i in q]
    qs_emb, qt_emb = s_emb[[s_row[t] for t in qs]], t_emb[[t_row[t] for t in qt]]
    return RetrievalResult(
        model=model_name, n=n_queries, similarity=similarity,
        src2tgt=direction_scores(qs_emb, t_emb, qt, tgt_all, similarity, n_resamples, seed, k_nn),
        tgt2src=direction_scores(qt_emb, s_emb, qs, src_all, similarity, n_resamples, seed, k_nn),
        src_lang=src_lang, tgt_lang=tgt_lang, dataset=dataset,
        candidates={"src2tgt": len(tgt_all), "tgt2src": len(src_all)}, centered=center,
    )


def evaluate_many(
    groups: dict[str, Pool],
    encoder: TextEncoder | Callable[[list[str]], np.ndarray],
    model_name: str = "",
    similarity: str = "cosine",
    n_resamples: int = 1000,
    seed: int = 0,
    k_nn: int = 4,
    dataset: str = "",
    center: bool = False,
    beside: bool = False,
) -> list[RetrievalResult]:
    """Evaluate several pools (e.g. one per language). Every distinct text is encoded once, in one call
    (batched by length across languages); an encoder whose vectors depend on the language (a word-gloss
    model) is called once per language instead."""
    enc = as_encoder(encoder)
    per_lang = getattr(enc, "language_dependent", True)
    by_lang: dict[str, list[str]] = {}
    for src, tgt, sl, tl in groups.values():
        by_lang.setdefault(sl if per_lang else "", []).extend(src)
        by_lang.setdefault(tl if per_lang else "", []).extend(tgt)
    rows: dict[tuple[str, str], np.ndarray] = {}
    for lang, texts in by_lang.items():
        unique = list(dict.fromkeys(texts))
        for t, v in zip(unique, enc.encode(unique, lang or None)):
            rows[(lang, t)] = v

    class _Lookup:
        name, dimension = model_name, enc.dimension

        def encode(self, texts: list[str], lang: str | None = None) -> np.ndarray:
            key = (lang or "") if per_lang else ""
            return np.stack([rows[(key, t)] for t in texts])

    lookup = _Lookup()
    from xlsent.utils.progress import progress_bar

    out = []
    with progress_bar(None if len(groups) > 1 else False) as bar:  # per pool: P@k, margins, bootstrap intervals
        task = bar.add_task(f"scoring {len(groups):,} pools" + (f" ({model_name})" if model_name else ""),
                            total=len(groups))
        for name, (src, tgt, sl, tl) in groups.items():
            out.append(evaluate_retrieval(src, tgt, lookup, model_name, similarity, n_resamples, seed, k_nn, sl, tl,
                                          dataset or name, center, beside))
            bar.advance(task)
    return out


def mean_row(results: list[RetrievalResult]) -> dict:
    """Mean of each figure over pools (unweighted: every language counts once); ``beside`` scorings too."""
    out: dict = {}
    for d in ("src2tgt", "tgt2src"):
        out[d] = {f"p@{k}": float(np.mean([getattr(r, d)[f"p@{k}"] for r in results])) for k in KS}
    if results and all(r.beside for r in results):
        out["beside"] = {name: {d: float(np.mean([r.beside[name][d] for r in results])) for d in ("src2tgt", "tgt2src")}
                         for name in results[0].beside}
    return out
