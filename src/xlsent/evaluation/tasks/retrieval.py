"""The ``retrieval`` task type: parallel pools, each side finding its translation among the other side's (P@1 both
ways, tie-aware), with MTEB's BitextMining figures beside it (:func:`bitext_f1`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from xlsent.evaluation.tasks.base import Scorer, TaskType, _lang_tag
from xlsent.evaluation.tasks.options import _chunk_words, _data, _on_bad_lines, _resamples, _sample, _seed, option
from xlsent.evaluation.tasks.result import TaskRun
from xlsent.similarity import SIMILARITIES
from xlsent.utils.errors import XlsentError


def bitext_f1(src_vectors: np.ndarray, tgt_vectors: np.ndarray) -> dict:
    """MTEB's BitextMining figures: each source's top-1 target by cosine, scored against its own index with
    sklearn's weighted precision, recall and F1, and accuracy (``mteb.abstasks.text.bitext_mining``)."""
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

    s = src_vectors / np.maximum(np.linalg.norm(src_vectors, axis=1, keepdims=True), 1e-12)
    t = tgt_vectors / np.maximum(np.linalg.norm(tgt_vectors, axis=1, keepdims=True), 1e-12)
    pred = [int(i) for i in np.argmax(s @ t.T, axis=1)]
    gold = list(range(len(pred)))
    return {"precision": float(precision_score(gold, pred, zero_division=0, average="weighted")),
            "recall": float(recall_score(gold, pred, zero_division=0, average="weighted")),
            "f1": float(f1_score(gold, pred, zero_division=0, average="weighted")),
            "accuracy": float(accuracy_score(gold, pred))}


class _Memo:
    """An encoder that keeps every vector it made, by (language, text): the MTEB figures reuse them."""

    def __init__(self, enc):
        self.enc, self.rows = enc, {}
        self.name, self.dimension = getattr(enc, "name", ""), enc.dimension
        self.language_dependent = getattr(enc, "language_dependent", True)

    def encode(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        key = (lang or "") if self.language_dependent else ""
        todo = list(dict.fromkeys(t for t in texts if (key, t) not in self.rows))
        if todo:
            for t, v in zip(todo, self.enc.encode(todo, lang)):
                self.rows[(key, t)] = v
        return np.stack([self.rows[(key, t)] for t in texts])


def _lines(given: Any, name: str, notes: list[str]) -> list[str]:
    """Sentences given as a list, or a file of one a line (blank lines skipped and counted)."""
    if not isinstance(given, (str, Path)):
        return list(given)
    from xlsent.data.formats.readers import read_lines

    lines = read_lines(Path(given))
    kept = [x.strip() for x in lines if x.strip()]
    if len(kept) < len(lines):
        notes.append(f"{given}: {len(lines) - len(kept)} blank line(s) skipped")
    notes.append(f"{given}: {len(kept)} distractors ({name})")
    return kept


@dataclass
class RetrievalTask(TaskType):
    """Parallel pools, one per language pair: each side finds its translation among the pool's other side —
    P@1/5/10 both ways, tie-aware, with bootstrap CIs (:mod:`xlsent.evaluation.retrieval`). With ``queries``
    (Mao et al. 2021: 2,000 queries among 200k sentences), N pairs are drawn and each query is searched among
    every sentence of the pool's other side plus the distractors (a list, or a file of one a line)."""

    type = "retrieval"
    main_score = "p@1"
    mteb_main_score = "f1"
    measures = "P@1, mean of both directions (MTEB's BitextMining f1 beside it)"
    kind = "pairs"
    user_files = "PAIRS (TSV, JSONL or Moses A,B)"
    mteb_type = "BitextMining"

    # each option's help is xlsent eval retrieval's (xlsent.cli.eval builds its options from these fields)
    sample: int = _sample(help="evaluate on this many pairs drawn at random (0 = all)")
    seed: int = _seed(help="seed for sampling and the bootstrap")
    resamples: int = _resamples()
    similarity: str = option("cosine", choices=SIMILARITIES, help="the main figure's scoring (plain cosine by "
                             "default, the literature's; the others are reported beside it)")
    center: bool = option(False, help="subtract each side's (language's) mean vector over the pool before scoring "
                          "the main figure (the main figure stays plain cosine by default, the literature's; measured "
                          "effect: docs/experiments/centering-and-csls.md)")
    beside: bool = option(True, help="also report P@1 with centering, CSLS and both, beside the main figure")
    k: int = option(4, low=1)  # neighbours of the margin and of CSLS
    by_language: bool | None = option(None, help="one pool per target language (default: on for multi-language "
                                      "data)")
    queries: int = option(0, low=0, help="large-pool mode: N queries (seeded) searched among every sentence of the "
                          "other side of the pool, plus distractors (0 = off: each pair's pool)")
    src_distractors: Any = option((), help="large-pool mode: extra source-language candidates, one a line")
    tgt_distractors: Any = option((), help="large-pool mode: extra target-language candidates, one a line")
    chunk_words: int = _chunk_words()
    on_bad_lines: str = _on_bad_lines()
    pools: dict = _data()  # name → xlsent.evaluation.retrieval.Pool
    profile: bool = _data()  # one pool per language: each pool's script and tokenization are reported
    summary: bool = _data()

    @classmethod
    def has_files(cls, dataset: str) -> bool:
        from xlsent.data.sets.pairs import bad_source

        return bad_source(dataset) is None

    def load(self) -> None:
        from xlsent.data.sets.bundled import bundled_spec, split_by_language
        from xlsent.data.sets.pairs import load_pairs

        if (self.src_distractors or self.tgt_distractors) and not self.queries:
            raise XlsentError("src_distractors / tgt_distractors need queries=N (the large-pool mode)")
        self.src_distractors = _lines(self.src_distractors, "src_distractors", self.notes)
        self.tgt_distractors = _lines(self.tgt_distractors, "tgt_distractors", self.notes)
        _check_unicode(self.src_distractors, "src_distractors")
        _check_unicode(self.tgt_distractors, "tgt_distractors")
        dataset = self.declaration.dataset
        loaded = load_pairs(dataset, on_bad_lines=self.on_bad_lines, dedupe=False, sample=self.sample,
                            seed=self.seed)
        self.notes += loaded.notes()
        ds: Any = loaded.dataset
        several = "tgt_lang" in ds.column_names and len(set(ds["tgt_lang"])) > 1
        split = self.by_language if self.by_language is not None else several
        self.use(split_by_language(ds) if split else {dataset: ds})
        spec = bundled_spec(dataset)
        self.profile = split or bool(spec and spec.by_language)
        self.summary = bool(spec and spec.summary and len(self.pools) > 1)

    def use(self, parts: dict) -> None:
        from xlsent.data.sets.pairs import side_langs
        from xlsent.evaluation.retrieval import Pool

        self.pools = {k: Pool(list(p["src"]), list(p["tgt"]), *side_langs(p)) for k, p in parts.items()}
        small = {k: len(p.src) for k, p in self.pools.items() if len(p.src) < self.queries}
        if small:
            raise XlsentError(f"queries={self.queries}: more than the pool's pairs "
                              f"({', '.join(f'{k}: {v}' for k, v in small.items())}) — give fewer queries")

    def mteb_data(self, dataset: Any, dataset_dict: Any) -> tuple[dict, dict]:
        subsets = {(f"{sl}-{tl}" if len(self.pools) > 1 else "default"): (src, tgt, sl, tl)
                   for src, tgt, sl, tl in self.pools.values()}
        langs = {k: [_lang_tag(sl, src), _lang_tag(tl, tgt)] for k, (src, tgt, sl, tl) in subsets.items()}
        split = self.declaration.splits[0]
        return langs, {k: dataset_dict({split: dataset.from_dict({"sentence1": src, "sentence2": tgt})})
                       for k, (src, tgt, _, _) in subsets.items()}

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.languages import profile_languages, summarize
        from xlsent.evaluation.retrieval import evaluate_many, evaluate_queries, mean_row

        from xlsent.encoding.readable import check_readable

        enc = _Memo(scorer.encoder(chunk_words=self.chunk_words))
        dataset = self.declaration.dataset
        one = len(self.pools) == 1
        check_readable(enc.enc, [(f"{dataset if one else name} ({lang or side} side)", texts, lang or None)
                                 for name, (src, tgt, sl, tl) in self.pools.items()
                                 for side, texts, lang in (("source", src, sl), ("target", tgt, tl))],
                       str(scorer.model))
        if self.queries:
            results = [evaluate_queries(src, tgt, enc, self.queries, scorer.model, self.similarity, self.resamples,
                                        self.seed, self.k, sl, tl, name, self.src_distractors, self.tgt_distractors,
                                        self.center) for name, (src, tgt, sl, tl) in self.pools.items()]
        else:
            results = evaluate_many(self.pools, enc, scorer.model, self.similarity, self.resamples, self.seed, self.k,
                                    dataset, self.center, self.beside)
        if self.profile:
            profile_languages(results, self.pools, enc.enc)
        rows, dicts = [], []
        for (src, tgt, sl, tl), r in zip(self.pools.values(), results):
            figures = {"p@1": (r.src2tgt["p@1"] + r.tgt2src["p@1"]) / 2,
                       **bitext_f1(enc.encode(src, sl or None), enc.encode(tgt, tl or None))}
            dicts.append(r.to_dict() | ({"chunk_words": self.chunk_words} if self.chunk_words else {}))
            rows.append(self.mteb_row(f"{sl}-{tl}" if len(self.pools) > 1 else "default",
                                      [_lang_tag(sl, src), _lang_tag(tl, tgt)], figures, dicts[-1]))
        details: Any = dicts[0] if len(dicts) == 1 else dicts
        if self.summary:
            details = {"dataset": dataset, "model": scorer.model, "languages": dicts, "mean": mean_row(results),
                       "summary": summarize(results)}
        return self.finish(scorer, rows, results, details)


def _check_unicode(texts: Sequence[str], name: str) -> None:
    from xlsent.utils.text import FIX, bad_char, describe

    for i, t in enumerate(texts):
        if isinstance(t, str) and (j := bad_char(t)) is not None:
            raise XlsentError(f"{name}[{i}]: text that is not Unicode ({describe('', j, t[j])}) — {FIX}")
