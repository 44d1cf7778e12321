"""Every evaluation as a declared task, run by one runner, with its result in MTEB's format.

A **task** is a declaration (:class:`TaskDeclaration`: name, type, dataset, languages, splits, main score, licence,
citation, what its labels are) plus a **task type** (:class:`TaskType`) that owns its options as typed fields with
their defaults and ranges, reads its data (before any model loads) and, called with what it scores (a
:class:`Scorer`), returns a :class:`TaskRun`. :func:`run_tasks` is the one runner: ``xlsent.evaluate``, every
``xlsent eval`` command, ``xlsent eval run`` and every recipe's held-out report call it.

A task is named ``TYPE:DATASET``: a bundled set of the kind the type reads (``retrieval:bible-en-ny:dev``,
``mining:udhr:zul``, ``classification:bible-genre`` …) or the user's files in the type's own form
(``retrieval:PAIRS.tsv``, ``classification:TRAIN.tsv,TEST.tsv``; :attr:`TaskType.user_files`). :data:`SUITES`
name a few tasks together.

**One main score a task**, wherever it runs (``TYPES``): for ``retrieval`` and ``documents`` it is P@1, the mean
of both directions (tie-aware) and of every language pair — the figure this project and its papers report, and
the one that sees a low-resource language both ways; MTEB's BitextMining ``f1`` (one direction, weighted F1 of the
top-1) stands beside it in every row under its own name, and is the ``main_score`` of the result files in MTEB's
format (:meth:`TaskRun.to_mteb`), so that a file xlsent writes and one MTEB writes for the same task agree.
"""

from __future__ import annotations

import time
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping, Protocol, Sequence

import numpy as np

from xlsent.utils.errors import XlsentError

ON_BAD_LINES = ("error", "skip")


@dataclass(frozen=True)
class TaskDeclaration:
    """What a task is: enough to list it, cite it and read its result without running it."""

    name: str  # TYPE:DATASET
    type: str  # a key of TYPES
    dataset: str  # a bundled name (NAME or NAME:CODE) or the user's files
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
        return "xlsent." + self.name.replace(":", ".").replace("/", "_").replace(",", "+")

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


@dataclass
class TaskRun:
    """A task's result: its main score, one score row per subset (MTEB's ``hf_subset``: a language pair of a set
    split by language), the typed result(s) of the evaluation it wraps, and ``details``, the JSON
    ``xlsent eval TYPE --output`` writes."""

    declaration: TaskDeclaration
    model: str
    main_score: float
    split: str
    scores: list[dict]  # one per subset: {"hf_subset", "languages", "main_score" (MTEB's), figures…, "xlsent": {…}}
    results: list = field(default_factory=list)
    details: Any = None
    evaluation_time: float = 0.0

    @property
    def task(self) -> str:
        return self.declaration.name

    @property
    def main_score_name(self) -> str:
        return self.declaration.main_score

    def to_dict(self) -> dict:
        """xlsent's own JSON: the declaration, the main score, each subset's row and the details."""
        return {"task": self.declaration.to_dict(), "model": self.model, "main_score": self.main_score,
                "main_score_name": self.main_score_name, "split": self.split, "scores": self.scores,
                "details": self.details, "evaluation_time": self.evaluation_time}

    def to_mteb(self) -> dict:
        """The result in MTEB's format (``mteb.TaskResult.from_disk`` reads it): each subset's row, its
        ``main_score`` the one MTEB names for the type, xlsent's main score beside it under its own name."""
        from importlib.metadata import PackageNotFoundError, version

        def installed(name: str) -> str | None:
            try:
                return version(name)
            except PackageNotFoundError:  # mteb is an extra: the format does not need it
                return None

        return {"dataset_revision": f"xlsent-{installed('xlsent') or 'source'}", "mteb_version": installed("mteb"),
                "task_name": self.declaration.mteb_name, "scores": {self.split: self.scores},
                "evaluation_time": self.evaluation_time, "kg_co2_emissions": None,
                "date": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())}


class Scorer(Protocol):
    """What a task is called with: the name results carry, the model's encoder (``encoder(**options)``, options
    of ``xlsent.api._common.encoder_for``; one model load for every task), a teacher's encoder, a loaded
    SentenceTransformer with its prompt (span tasks; hard triplet negatives), and a tagger for ``ner`` / ``pos``.
    Evaluations never load a model themselves."""

    model: str

    def encoder(self, **options: Any) -> Any: ...

    def teacher(self, name: str) -> Any: ...

    def sentence_model(self, name: str | None = None) -> Any: ...  # .model (a SentenceTransformer) and .prompt

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

    def encode(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
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


def _row(subset: str, languages: list[str], figures: dict, xlsent: Any, mteb_main: str) -> dict:
    return {"hf_subset": subset, "languages": languages, "main_score": float(figures[mteb_main]), **figures,
            "xlsent": xlsent}


def option(default: Any, *, low: float | None = None, choices: Sequence[str] = ()) -> Any:
    """A task option: a dataclass field with its default, and its lowest value or its allowed words."""
    return field(default=default, metadata={"low": low, "choices": tuple(choices)})


# Options several types share: each default and range written once.
def _seed() -> Any:
    return option(0)  # of the sample and the bootstrap


def _resamples() -> Any:
    return option(1000, low=0)  # of the bootstrap's 95% interval (0: none, the point value twice)


def _sample(default: int = 0) -> Any:
    return option(default, low=0)  # drawn at random (0 = all)


def _chunk_words(default: int = 0) -> Any:
    return option(default, low=0)  # embed each text as the mean of chunks of at most this many words (0: whole)


def _on_bad_lines() -> Any:
    return option("error", choices=ON_BAD_LINES)  # a malformed line: stop (error) or skip it, counted


def _data() -> Any:
    """What a task reads (``load``): not an option."""
    return field(default=None, init=False, repr=False)


def _bool(value: Any, key: str) -> bool | None:
    if isinstance(value, bool) or value is None:
        return value
    word = str(value).strip().lower()
    for answer, words in ((True, ("true", "1", "yes", "on")), (False, ("false", "0", "no", "off")),
                          (None, ("none", "auto"))):
        if word in words:
            return answer
    raise XlsentError(f"{key}={value!r}: expected true or false")


def _check_option(key: str, value: Any, hint: Any, f: Any) -> Any:
    """``value`` as the field's type (``"500"`` from the CLI is 500), within its range or words."""
    kinds = set(typing.get_args(hint)) or {hint}
    if value is not None and bool in kinds:
        value = _bool(value, key)
    elif value is not None and (int in kinds or float in kinds) and not isinstance(value, bool):
        try:
            value = int(value) if int in kinds else float(value)
        except (TypeError, ValueError):
            raise XlsentError(f"{key}={value!r}: expected a "
                              f"{'whole number' if int in kinds else 'number'}") from None
    low, choices = f.metadata.get("low"), f.metadata.get("choices")
    if low is not None and value is not None and value < low:
        raise XlsentError(f"{key}={value!r}: must be ≥ {low:g}")
    if choices and value is not None and value not in choices:
        raise XlsentError(f"unknown {key}={value!r}: use one of {', '.join(choices)}")
    return value


# ---- the task types ----------------------------------------------------------------------------------------------


@dataclass
class TaskType:
    """A kind of evaluation. A subclass declares, as class attributes, its ``type`` (the ``TYPE`` of ``TYPE:DATASET``),
    ``main_score`` (and ``mteb_main_score``, MTEB's for the type where it differs), what that measures, the
    dataset-registry ``kind`` it reads (``None``: the user's files only), the form of the user's files
    (``user_files``; ``""``: none) and the MTEB task type that runs it in MTEB itself (``mteb_type``, or ``""``).
    Its options are dataclass fields with their defaults and ranges (:func:`option`); ``load`` reads its data
    (before any model loads, a bad file failing there) and ``run(scorer)`` returns a :class:`TaskRun`. A new type
    is one subclass here plus its evaluation module; :data:`TASK_TYPES` lists it by ``type``."""

    type: ClassVar[str] = ""
    main_score: ClassVar[str] = ""
    mteb_main_score: ClassVar[str] = ""
    measures: ClassVar[str] = ""
    kind: ClassVar[str | None] = None
    user_files: ClassVar[str] = ""
    mteb_type: ClassVar[str] = ""
    one_language: ClassVar[bool] = False  # a set of several languages is read one at a time (NAME:CODE)
    chooses_on_dev: ClassVar[bool] = False  # its dev part chooses a setting, the figure is its test part's
    lists_languages: ClassVar[bool] = True  # names() lists its sets of several languages

    declaration: TaskDeclaration
    notes: list[str] = field(default_factory=list, init=False, repr=False)  # what reading the data reported

    @classmethod
    def options(cls) -> dict[str, Any]:
        """The type's options: name → dataclass field (its default, and ``low`` / ``choices`` in its metadata)."""
        return {f.name: f for f in fields(cls) if f.init and f.name != "declaration"}

    @classmethod
    def make(cls, d: TaskDeclaration, given: Mapping[str, Any]) -> "TaskType":
        """The task with ``given`` options checked (its data not read yet: :meth:`load`)."""
        known = cls.options()
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise XlsentError(f"unknown task option {unknown[0]} for a {cls.type} task: use one of {', '.join(known)}")
        hints = typing.get_type_hints(cls)
        return cls(d, **{k: _check_option(k, v, hints[k], known[k]) for k, v in given.items()})

    @classmethod
    def accepts(cls, entry) -> bool:
        """Whether a registry entry of ``kind`` is this type's (NER sets for ``ner``, …)."""
        return True

    @classmethod
    def listed(cls, entry) -> bool:
        """Whether :func:`names` lists the set as a task (training data is no task; it can still be named)."""
        return (cls.accepts(entry) and not set(entry.splits) <= {"train", "dev-train"}
                and (cls.lists_languages or not entry.by_language))

    @classmethod
    def has_files(cls, dataset: str) -> bool:
        """Whether ``dataset`` names the user's files in this type's form (every comma-separated part there)."""
        return all(Path(p).expanduser().exists() for p in dataset.split(","))

    @property
    def needs_model(self) -> bool:
        return True

    def load(self) -> None:
        raise NotImplementedError

    def run(self, scorer: Scorer) -> TaskRun:
        raise NotImplementedError

    def finish(self, scorer: Scorer, rows: list[dict], results: list, details: Any) -> TaskRun:
        """The run: its main score is the mean over subsets (every language counts once, as in MTEB)."""
        d = self.declaration
        main = float(np.mean([r[d.main_score] for r in rows]))
        return TaskRun(d, scorer.model, main, d.splits[0] if len(d.splits) == 1 else "test", rows, results, details)

    def mteb_row(self, subset: str, languages: list[str], figures: dict, xlsent: Any) -> dict:
        return _row(subset, languages, figures, xlsent, self.mteb_main_score or self.main_score)

    def mteb_data(self, dataset: Any, dataset_dict: Any) -> tuple[dict, dict]:
        """(subset → MTEB language tags, subset → its ``DatasetDict``) for MTEB to run the task itself (a type with
        an ``mteb_type``; ``dataset`` / ``dataset_dict``: the ``datasets`` classes)."""
        raise NotImplementedError


def _lines(given: Any, name: str, notes: list[str]) -> list[str]:
    """Sentences given as a list, or a file of one a line (blank lines skipped and counted)."""
    if not isinstance(given, (str, Path)):
        return list(given)
    from xlsent.data.readers import read_lines

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

    sample: int = _sample()  # pairs drawn at random (0 = all)
    seed: int = _seed()
    resamples: int = _resamples()
    similarity: str = option("cosine", choices=("cosine", "dot", "euclidean", "manhattan", "margin", "csls"))
    center: bool = option(False)  # subtract each side's mean vector before scoring
    beside: bool = option(True)  # P@1 with centering, CSLS and both, beside the main figure
    k: int = option(4, low=1)  # neighbours of the margin and of CSLS
    by_language: bool | None = option(None)  # one pool per target language (None: when there are several)
    queries: int = option(0, low=0)
    src_distractors: Any = option(())
    tgt_distractors: Any = option(())
    chunk_words: int = _chunk_words()
    on_bad_lines: str = _on_bad_lines()
    pools: dict = _data()  # name → xlsent.evaluation.retrieval.Pool
    profile: bool = _data()  # one pool per language: each pool's script and tokenization are reported
    summary: bool = _data()

    @classmethod
    def has_files(cls, dataset: str) -> bool:
        from xlsent.data.pairs import bad_source

        return bad_source(dataset) is None

    def load(self) -> None:
        from xlsent.data.bundled import bundled_spec, split_by_language
        from xlsent.data.pairs import load_pairs

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
        from xlsent.data.pairs import side_langs
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

        from xlsent.encoding.readable import encoder_share, warn_unreadable

        enc = _Memo(scorer.encoder(chunk_words=self.chunk_words))
        dataset = self.declaration.dataset
        one = len(self.pools) == 1
        warn_unreadable(encoder_share(enc.enc), [(f"{dataset if one else name} ({lang or side} side)", texts,
                                                  lang or None)
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


@dataclass
class DocumentsTask(RetrievalTask):
    """Document matching: retrieval over whole documents, each embedded as the mean of ≤ ``chunk_words``-word
    chunks (Huang et al. 2023, Table 12)."""

    type = "documents"
    mteb_main_score = "p@1"
    measures = "P@1 over documents (chunked pooling), mean of both directions"
    kind = "documents"
    user_files = "SRC.jsonl,TGT.jsonl (documents paired by id) or PAIRS whose lines are documents"
    mteb_type = ""  # MTEB embeds a document whole: not this protocol
    one_language = True

    chunk_words: int = _chunk_words(20)

    def load(self) -> None:
        from xlsent.data.registry import find
        from xlsent.evaluation.documents import document_units

        dataset = self.declaration.dataset
        if find(dataset, "documents") is None and not all(p.endswith(".jsonl") for p in dataset.split(",")):
            return super().load()  # a pairs file whose lines are documents
        from xlsent.evaluation.retrieval import Pool

        self.pools = {dataset: Pool(*document_units(dataset))}
        self.profile = self.summary = False


@dataclass
class StsTask(TaskType):
    type = "sts"
    main_score = "cosine_spearman"
    measures = "Spearman's ρ of cosine similarity with the gold scores"
    user_files = "FILE (sentence1<TAB>sentence2<TAB>score, 0–5)"
    mteb_type = "STS"

    resamples: int = _resamples()
    seed: int = _seed()
    chunk_words: int = _chunk_words()
    on_bad_lines: str = _on_bad_lines()
    sentences1: list[str] = _data()
    sentences2: list[str] = _data()
    gold: list[float] = _data()

    def load(self) -> None:
        from xlsent.data.sts import read_sts

        table, report = read_sts(Path(self.declaration.dataset), self.on_bad_lines)
        self.notes += report.lines()
        self.sentences1, self.sentences2, self.gold = list(table["sentence1"]), list(table["sentence2"]), list(
            table["score"])

    def mteb_data(self, dataset: Any, dataset_dict: Any) -> tuple[dict, dict]:
        return {"default": ["und-Zyyy"]}, {"default": dataset_dict({self.declaration.splits[0]: dataset.from_dict(
            {"sentence1": self.sentences1, "sentence2": self.sentences2, "score": self.gold})})}

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.sts import evaluate_sts

        r = evaluate_sts(self.sentences1, self.sentences2, self.gold, scorer.encoder(chunk_words=self.chunk_words),
                         scorer.model,
                         self.declaration.dataset, self.resamples, self.seed)
        figures = {f"{sim}_{kind}": float(getattr(c, kind)) for sim, c in r.by_similarity.items()
                   for kind in ("spearman", "pearson")}
        row = self.mteb_row("default", [_lang_tag("und", self.sentences1)], figures, r.to_dict())
        return self.finish(scorer, [row], [r], r.to_dict())


@dataclass
class MiningTask(TaskType):
    """A BUCC-style comparable corpus: the threshold is chosen on ``dev``, the figure is ``test``'s (with
    ``xlsent mine``'s settings: ``mode``, ``margin``, ``k``, ``center``, ``precision``)."""

    type = "mining"
    main_score = "f1"
    measures = "BUCC F1 of the mined pairs at the threshold chosen on dev"
    kind = "mining"
    user_files = "DEV,TEST (BUCC prefixes: PREFIX.SRC, PREFIX.TGT, PREFIX.gold; give src_lang and tgt_lang)"
    one_language = True
    chooses_on_dev = True

    n_gold: int = option(1000, low=1)  # bundled corpora: gold pairs per split
    n_distractors: int = option(7000, low=0)  # bundled corpora: unrelated sentences per side
    mode: str = option("max", choices=("forward", "backward", "intersect", "max"))
    margin: str = option("ratio", choices=("ratio", "distance", "absolute"))
    k: int = option(4, low=1)
    center: bool = option(False)
    precision: str = option("float16", choices=("float32", "float16", "int8", "ubinary"))
    seed: int = _seed()
    src_lang: str = option("")  # BUCC files: the source suffix (e.g. de)
    tgt_lang: str = option("")
    dev: Any = _data()  # xlsent.data.comparable.ComparableCorpus
    test: Any = _data()

    @classmethod
    def has_files(cls, dataset: str) -> bool:
        parts = [Path(p).expanduser() for p in dataset.split(",")]
        return len(parts) == 2 and all(any(p.parent.glob(p.name + ".*")) for p in parts)

    def load(self) -> None:
        from xlsent.data.comparable import read_bucc
        from xlsent.data.registry import find, load

        dataset = self.declaration.dataset
        if find(dataset, "mining") is not None:
            self.dev, self.test = load(dataset, "mining", n_gold=self.n_gold, n_distractors=self.n_distractors,
                                       seed=self.seed)
            return
        if not (self.src_lang and self.tgt_lang):
            raise XlsentError("BUCC files need src_lang and tgt_lang (the files' suffixes, e.g. de and en)")
        self.dev, self.test = (read_bucc(p, self.src_lang, self.tgt_lang) for p in dataset.split(","))

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.mining import evaluate_mining
        from xlsent.mining.job import MineConfig

        cfg = MineConfig(k=self.k, mode=self.mode, margin=self.margin, center=self.center, dtype=self.precision)
        r = evaluate_mining(scorer.encoder(), self.dev, self.test, cfg, scorer.model)
        t = r.test
        figures = {"precision": t.precision, "recall": t.recall, "f1": t.f1, "top1_gold_sources": r.top1_gold_sources}
        tags = [_lang_tag(self.test.src_lang, [x for _, x in self.test.src]),
                _lang_tag(self.test.tgt_lang, [x for _, x in self.test.tgt])]
        return self.finish(scorer, [self.mteb_row("default", tags, figures, r.to_dict())], [r], r.to_dict())


def _triplet_file(dataset: str) -> bool:
    """A file of ``anchor<TAB>positive<TAB>negative`` lines (a pairs TSV has two fields a line)."""
    from xlsent.data.readers import read_lines

    p = Path(dataset).expanduser()
    if not p.is_file() or ".jsonl" in p.name:
        return False
    first = next((x for x in read_lines(p)[:50] if x.strip()), "")
    return first.count("\t") == 2


@dataclass
class TripletTask(TaskType):
    """Held-out triplets: the English anchor's translation nearer than a negative — by default another section of
    the same document where the pool has sections (paper 004), else a random one; ``hard``: mined by ``teacher``."""

    type = "triplet"
    main_score = "accuracy"
    measures = "share of triplets whose positive is nearer than the negative (cosine)"
    kind = "pairs"
    user_files = "TRIPLETS (anchor<TAB>positive<TAB>negative) or PAIRS"

    sample: int = _sample()  # pairs of the pool (or lines of a triplets file) drawn at random (0 = all)
    seed: int = _seed()
    resamples: int = _resamples()
    negatives: str | None = option(None, choices=("section", "random", "hard"))
    teacher: str = option("minilm-en")  # mines hard negatives
    chunk_words: int = _chunk_words()
    on_bad_lines: str = _on_bad_lines()
    triplets: Any = _data()  # a datasets.Dataset: anchor, positive, negative
    pool: Any = _data()
    anchor_lang: str = _data()

    lists_languages = False

    @classmethod
    def has_files(cls, dataset: str) -> bool:
        return _triplet_file(dataset) or RetrievalTask.has_files(dataset)

    def load(self) -> None:
        from xlsent.data.pairs import load_pairs, other_language, section_keys
        from xlsent.data.triplets import read_triplets

        dataset, self.anchor_lang = self.declaration.dataset, ""
        if _triplet_file(dataset):
            ds, report = read_triplets(dataset, self.on_bad_lines)
            self.notes += report.lines()
            if self.sample and self.sample < len(ds):
                ds = ds.shuffle(seed=self.seed).select(range(self.sample))
            self.triplets = ds
            return
        loaded = load_pairs(dataset, on_bad_lines=self.on_bad_lines, dedupe=False, sample=self.sample, seed=self.seed)
        self.notes += loaded.notes()
        self.pool = loaded.dataset
        self.anchor_lang = other_language(self.pool)
        if self.negatives is None:
            self.negatives = "section" if section_keys(self.pool) is not None else "random"
        if self.negatives != "hard":  # hard negatives need the teacher: built when it runs
            self.build()

    def build(self, teacher: Any = None) -> None:
        from xlsent.data.triplets import build_triplets

        self.triplets, report = build_triplets(self.pool, self.negatives or "random", self.seed, teacher=teacher)
        self.notes += report.lines()

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.triplet import evaluate_triplets

        if self.triplets is None:
            self.build(scorer.sentence_model(self.teacher).model)
        t = self.triplets
        r = evaluate_triplets(list(t["anchor"]), list(t["positive"]), list(t["negative"]),
                              scorer.encoder(chunk_words=self.chunk_words),
                              scorer.model, self.declaration.dataset, self.resamples, self.seed,
                              anchor_lang=self.anchor_lang or None)
        figures = {f"{k}_accuracy": float(v.accuracy) for k, v in r.accuracy.items()}
        figures["accuracy"] = figures["cosine_accuracy"]
        tags = [_lang_tag(self.anchor_lang, list(t["anchor"])), _lang_tag("eng", list(t["positive"]))]
        return self.finish(scorer, [self.mteb_row("default", tags, figures, r.to_dict())], [r], r.to_dict())


@dataclass
class MseTask(TaskType):
    """Distance to a teacher: the model's vectors of both sides against the teacher's of the English side."""

    type = "mse"
    main_score = "negative_mse"
    measures = "−MSE×100 between the model's vectors of the other language and the teacher's of the English"
    kind = "pairs"
    user_files = "PAIRS (English on one side)"

    teacher: str = option("minilm-en")
    sample: int = _sample(1000)
    seed: int = _seed()
    chunk_words: int = _chunk_words()
    on_bad_lines: str = _on_bad_lines()
    english: list[str] = _data()
    other: list[str] = _data()
    other_lang: str = _data()

    lists_languages = False

    @classmethod
    def has_files(cls, dataset: str) -> bool:
        return RetrievalTask.has_files(dataset)

    def load(self) -> None:
        from xlsent.data.pairs import english_side, load_pairs, other_language

        loaded = load_pairs(self.declaration.dataset, on_bad_lines=self.on_bad_lines, dedupe=False,
                            sample=self.sample, seed=self.seed)
        self.notes += loaded.notes()
        pool: Any = loaded.dataset
        other_col, en_col = english_side(pool)
        self.english, self.other = list(pool[en_col]), list(pool[other_col])
        self.other_lang = other_language(pool, other_col)

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.mse import evaluate_mse

        r = evaluate_mse(self.english, self.other, scorer.encoder(chunk_words=self.chunk_words), scorer.teacher(self.teacher), scorer.model,
                         self.teacher, self.declaration.dataset, tgt_lang=self.other_lang or None)
        main = -100 * float(r.mse_tgt)
        tags = [_lang_tag("eng", self.english), _lang_tag(self.other_lang, self.other)]
        return self.finish(scorer, [self.mteb_row("default", tags, {"negative_mse": main}, r.to_dict())], [r],
                           r.to_dict())


@dataclass
class ClassificationTask(TaskType):
    """Zero-shot transfer: a linear classifier on source-language vectors, tested on the target language."""

    type = "classification"
    main_score = "accuracy"
    measures = "accuracy of the source-trained classifier on the target language"
    kind = "labelled"
    user_files = "TRAIN,TEST[,TRAIN_TARGET] (label<TAB>text files; train_lang and test_lang name their languages)"
    chooses_on_dev = True

    per_class: int = option(500, low=0)  # bible-genre: verses per class and side (0 = all)
    seeds: int = option(5, low=1)  # validation splits (C chosen on each)
    resamples: int = _resamples()
    train_lang: str = option("")
    test_lang: str = option("")
    chunk_words: int = _chunk_words()
    train: Any = _data()  # xlsent.data.labelled.Labelled
    test: Any = _data()
    train_target: Any = _data()

    def load(self) -> None:
        from xlsent.data.labelled import read_labelled
        from xlsent.data.registry import find, load

        dataset = self.declaration.dataset
        if find(dataset, "labelled") is not None:
            task = load(dataset, "labelled", per_class=self.per_class)
            self.train, self.test, self.train_target = task["train"], task["test"], task["train_target"]
        else:
            files = dataset.split(",")
            if len(files) not in (2, 3):
                raise XlsentError(f"classification:{dataset}: give TRAIN,TEST or TRAIN,TEST,TRAIN_TARGET files")
            self.train, self.test, *rest = (read_labelled(f) for f in files)
            self.train_target = rest[0] if rest else None
            self.train.lang = self.train_lang
            for part in (self.test, self.train_target):
                if part is not None:
                    part.lang = self.test_lang
        tr, te, tt = self.train, self.test, self.train_target
        unseen = sorted(set(te.labels) - set(tr.labels))
        if unseen:
            raise XlsentError(f"{te.source}: label(s) {', '.join(unseen)} never occur in {tr.source} — the "
                              "classifier cannot predict them; give training texts for every test label")
        if len(set(tr.labels)) < 2:
            raise XlsentError(f"{tr.source}: a classifier needs at least 2 labels")
        self.notes.append(f"train {len(tr.texts)} ({tr.source}), test {len(te.texts)} ({te.source})"
                          + (f", in-language train {len(tt.texts)} ({tt.source})" if tt else ""))

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.classify import evaluate_classification

        r = evaluate_classification(scorer.encoder(chunk_words=self.chunk_words), self.train, self.test, self.train_target, self.seeds,
                                    self.resamples)
        t = {"model": scorer.model, "train": self.train.source, "test": self.test.source, **r}
        tags = [_lang_tag(self.train.lang, self.train.texts), _lang_tag(self.test.lang, self.test.texts)]
        figures = {"accuracy": r["transfer"]["accuracy"], "f1": r["transfer"]["macro_f1"]}
        return self.finish(scorer, [self.mteb_row("default", tags, figures, t)], [t], t)


@dataclass
class AlignmentTask(TaskType):
    """Sentence alignment of document pairs with ``xlsent align``'s settings, scored against the gold with
    Vecalign's scorer; or the user's prediction scored against their gold (no model)."""

    type = "alignment"
    main_score = "strict_f1"
    measures = "strict F1 of the aligned blocks (Vecalign's scorer)"
    kind = "alignment"
    user_files = "GOLD,PRED (alignment files, or folders of them matched by name: scores the prediction)"

    max_overlap: int = option(3)
    deletion_quantile: float = option(0.02)
    plain: bool = option(False)
    runs: str = option("mean", choices=("mean", "concat"))
    length_weight: float = option(0.1)
    documents: list = _data()  # xlsent.data.alignment.DocumentPair
    gold: list = _data()
    predicted: list = _data()
    config: Any = _data()

    @property
    def needs_model(self) -> bool:
        return self.predicted is None

    def load(self) -> None:
        from xlsent.aligner.vecalign import AlignConfig
        from xlsent.data.alignment import read_alignment
        from xlsent.data.registry import find, load

        dataset = self.declaration.dataset
        self.config = AlignConfig.of(self.max_overlap, self.deletion_quantile, 5, self.plain, self.runs,
                                     self.length_weight)
        if find(dataset, "alignment") is not None:
            self.documents = load(dataset, "alignment")
            return
        parts = dataset.split(",")
        if len(parts) != 2:
            raise XlsentError(f"alignment:{dataset}: give GOLD,PRED (two files, or two folders)")
        gold, pred = (Path(p).expanduser() for p in parts)
        if gold.is_dir() != pred.is_dir():
            raise XlsentError("gold and pred must both be files or both be folders")
        files = [(gold, pred)]
        if gold.is_dir():
            names = sorted(p.name for p in gold.iterdir() if p.is_file() and not p.name.endswith(".json"))
            missing = [n for n in names if not (pred / n).is_file()]
            if missing:
                raise XlsentError(f"{pred}: no prediction for {missing[0]} (and {len(missing) - 1} more) — files "
                                  "are matched by name")
            files = [(gold / n, pred / n) for n in names]
        self.gold = [read_alignment(g) for g, _ in files]
        self.predicted = [read_alignment(p) for _, p in files]

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.alignment import evaluate_alignment, score_alignments

        if self.predicted is not None:
            s = score_alignments(self.gold, self.predicted)
            details = {"dataset": None, "model": None, **s.to_dict()}
            tags = ["und-Zyyy"]
        else:
            from xlsent.aligner.vecalign import EMBED_BATCH, align_documents

            enc = scorer.encoder(normalize=True, batch_size=EMBED_BATCH)
            s, _ = evaluate_alignment(self.documents, lambda x: align_documents(
                x.src, x.tgt, enc.encode, enc.dimension, self.config, ("en", "ny")))
            details = {"dataset": self.declaration.dataset, "model": scorer.model, **s.to_dict()}
            first = self.documents[:1]
            tags = _tags(self.declaration, [x.src[:50] for x in first] + [x.tgt[:50] for x in first])
        figures = {k: getattr(s, k) for k in ("strict_precision", "strict_recall", "strict_f1", "lax_precision",
                                               "lax_recall", "lax_f1")}
        return self.finish(scorer, [self.mteb_row("default", tags, figures, details)], [s], details)


@dataclass
class SpansTask(TaskType):
    """Structural-span retrieval (what the SCP recipe trains): each English span (subject, verb, object, entity)
    finds its aligned span among every span of the pool, and back (Chen et al. 2023, Eq. 4)."""

    type = "spans"
    main_score = "p@1"
    measures = "structural-span P@1, mean of both directions"
    kind = "spans"
    user_files = "SPANS (a file of xlsent data structural-words)"

    sample: int = _sample(1000)  # pairs of the pool (0 = all)
    seed: int = _seed()
    max_length: int = option(128, low=8)  # pieces per sentence (spans past it are left out and counted)
    resamples: int = _resamples()
    records: list[dict] = _data()

    def load(self) -> None:
        from xlsent.data.structural import read_spans
        from xlsent.evaluation.spans import sample_records

        records, _ = read_spans(self.declaration.dataset)
        self.records = sample_records(records, self.sample, self.seed)

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.spans import span_retrieval

        handle = scorer.sentence_model()
        r = span_retrieval(handle.model, handle.prompt, self.records, self.max_length, bootstrap=self.resamples,
                           seed=self.seed, name=scorer.model)
        main = (r.src2tgt.p_at_1 + r.tgt2src.p_at_1) / 2
        figures = {"p@1": main, "src2tgt_p@1": r.src2tgt.p_at_1, "tgt2src_p@1": r.tgt2src.p_at_1}
        tags = _tags(self.declaration, [[x["src"] for x in self.records[:50]], [x["tgt"] for x in self.records[:50]]])
        return self.finish(scorer, [self.mteb_row("default", tags, figures, r.to_dict())], [r], r.to_dict())


@dataclass
class NerTask(TaskType):
    """A token tagger (``xlsent train tagger``) on a CoNLL set: the scorer's model is the tagger's folder."""

    type = "ner"
    main_score = "micro_f1"
    measures = "entity micro-F1 (seqeval-style spans)"
    kind = "tagged"
    user_files = "CONLL (token … tag a line, a blank line between sentences)"

    sample: int = _sample()  # sentences (0 = all)
    seed: int = _seed()
    resamples: int = _resamples()
    scheme: str | None = option(None, choices=("iob2", "iob1", "plain"))  # default: iob2 for NER, plain for POS
    strict: bool = option(False)  # an I- tag after O is an error instead of a counted repair
    tag_column: int = option(-1)
    max_length: int = option(128, low=8)
    corpus: Any = _data()  # xlsent.data.tagging.TaggedCorpus

    @classmethod
    def accepts(cls, entry) -> bool:
        return entry.name.split(":")[0].endswith(cls.type)

    def load(self) -> None:
        from xlsent.data.tagging import load_tagged
        from xlsent.evaluation.tagging import sample_corpus

        scheme: Any = self.scheme  # checked against the schemes (option choices)
        self.corpus = sample_corpus(load_tagged(self.declaration.dataset, scheme, self.tag_column, self.strict,
                                                task=self.type), self.sample, self.seed)
        self.notes += self.corpus.notes

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.tagging import evaluate_tagger

        model, tok = scorer.tagger()
        s = evaluate_tagger(model, tok, self.corpus, self.type, self.resamples, self.seed, self.max_length)
        main = float(s.main())
        tags = _tags(self.declaration, [[" ".join(t) for t in self.corpus.tokens[:50]]])
        return self.finish(scorer, [self.mteb_row("default", tags, {self.main_score: main}, s.to_dict())], [s],
                           s.to_dict())


@dataclass
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


def declare(name: str) -> TaskDeclaration:
    """The declaration of ``TYPE:DATASET`` — a bundled set of the kind the type reads, or the user's files in the
    type's form — or an error naming the fix."""
    from xlsent.data.registry import entries, find

    task_type, _, dataset = name.partition(":")
    if task_type not in TASK_TYPES or not dataset:
        raise XlsentError(f"unknown task '{name}': write TYPE:DATASET with TYPE one of {', '.join(TASK_TYPES)} "
                          "(e.g. retrieval:bible-en-ny:dev); xlsent eval run --list shows them")
    cls = TASK_TYPES[task_type]
    found = find(dataset, cls.kind) if cls.kind else None
    if found is None:
        if cls.user_files and cls.has_files(dataset):
            return TaskDeclaration(name, task_type, dataset, "", ("test",), cls.main_score, "the user's", "", "user",
                                   f"{cls.measures}, on the user's files {dataset}")
        for part in dataset.split(","):  # a path of the user's that is not there: said as such
            p = Path(part).expanduser()
            if p.is_dir() and not cls.has_files(dataset):
                raise XlsentError(f"{part}: is a folder — task {task_type} reads {cls.user_files}")
            if not p.exists() and (p.suffix or "/" in part) and (cls.kind is None or find(part, cls.kind) is None):
                if cls.type != "mining" or not any(p.parent.glob(p.name + ".*")):
                    raise XlsentError(f"{part}: no such file — task {task_type} reads {cls.user_files}")
        sets = ", ".join(e.name + ("[:CODE]" if e.by_language else "") for e in entries(cls.kind)
                         if cls.listed(e)) if cls.kind else ""
        raise XlsentError(f"task '{name}': unknown dataset '{dataset}', neither a bundled {cls.kind or task_type} set "
                          f"nor a file — give {cls.user_files}" + (f", or one of the bundled {cls.kind} sets: {sets}"
                                                                    if sets else ""))
    e = found.entry
    if not cls.accepts(e):
        raise XlsentError(f"task '{name}': {e.name} is not a {task_type.upper()} set")
    if cls.one_language and e.by_language and not found.lang:
        raise XlsentError(f"task '{name}': {e.name} is read one language at a time — write {task_type}:{e.name}:CODE "
                          f"(e.g. {task_type}:{e.name}:nya)")
    splits = ("test",) if cls.chooses_on_dev else (e.splits[:1] if dataset.count(":") and len(e.splits) > 1
                                                    else e.splits)
    languages = f"eng, {found.lang}" if found.lang else e.languages
    return TaskDeclaration(name, task_type, dataset, languages, splits, cls.main_score, e.licence,
                           e.citation, e.labels, f"{cls.measures} — {e.description}")


def names() -> list[str]:
    """Every named task over the bundled data (one a set; sets read a language at a time appear as ``:CODE``)."""
    from xlsent.data.registry import entries

    return [f"{t}:{e.name}" + (":CODE" if e.by_language and cls.one_language else "")
            for t, cls in TASK_TYPES.items() if cls.kind for e in entries(cls.kind) if cls.listed(e)]


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


def build(names: str | Sequence[str], options: Mapping[str, Any] | Sequence[str] | None = None,
          read: bool = True) -> list[TaskType]:
    """The tasks ``names`` (each one name: a file's comma is not split here; :func:`expand` splits a list) with
    their data read — a bad file fails here, before any model loads. ``options`` (a dict, or ``KEY=VALUE``
    strings as the CLI's ``--option``) go to every task whose type has them (:meth:`TaskType.options`); one no
    task has is an error. ``read=False``: names and options checked, the data left to each task's ``load``."""
    if options is not None and not isinstance(options, Mapping):
        pairs = [o.partition("=") for o in options]
        bad = [k for k, sep, _ in pairs if not sep]
        if bad:
            raise XlsentError(f"--option {bad[0]}: write KEY=VALUE (e.g. --option sample=500)")
        options = {k.strip(): v.strip() for k, _, v in pairs}
    given = dict(options or {})
    declared = [declare(n) for n in ([names] if isinstance(names, str) else names)]
    types = [TASK_TYPES[d.type] for d in declared]
    known = {k for t in types for k in t.options()}
    unknown = sorted(set(given) - known)
    if unknown:
        raise XlsentError(f"unknown task option {unknown[0]}: the task(s) take {', '.join(sorted(known))}")
    tasks = [t.make(d, {k: v for k, v in given.items() if k in t.options()}) for t, d in zip(types, declared)]
    for task in tasks if read else ():
        task.load()
    return tasks


def run_tasks(tasks: Sequence[TaskType], scorer: Scorer, on_note: Callable[[str], None] | None = None,
              output: str | Path | None = None) -> list[TaskRun]:
    """The one runner: each task's notes, then its run, timed; with ``output``, one file a task in MTEB's format
    (``<mteb_name>.json``)."""
    from xlsent.utils.io import write_json_atomic

    note = on_note or (lambda line: None)
    runs = []
    for task in tasks:
        for line in task.notes:
            note(line)
        start = time.perf_counter()
        run = task.run(scorer)
        run.evaluation_time = round(time.perf_counter() - start, 2)
        note(f"{run.task}: {run.main_score_name} {run.main_score:.4f}")
        if output is not None:
            write_json_atomic(Path(output) / f"{run.declaration.mteb_name}.json", run.to_mteb())
        runs.append(run)
    return runs


# ---- MTEB itself -------------------------------------------------------------------------------------------------


def mteb_tasks(task_names: str | Sequence[str], options: Mapping[str, Any] | None = None) -> list:
    """MTEB task objects over xlsent's offline data, for ``mteb.evaluate(model, tasks=…)``: the ``retrieval``
    tasks as ``BitextMining`` (one subset per language pair), the ``sts`` tasks as ``STS``. Their main score is
    MTEB's own for the type (``f1``, ``cosine_spearman``), the one xlsent writes as ``main_score`` in MTEB's
    format. Needs ``pip install 'xlsent[mteb]'``."""
    try:
        from datasets import Dataset, DatasetDict
        from mteb.abstasks.task_metadata import TaskMetadata
        from mteb.abstasks.text.bitext_mining import AbsTaskBitextMining
        from mteb.abstasks.sts import AbsTaskSTS
    except ImportError as e:
        raise XlsentError(f"mteb is not installed ({e}): pip install 'xlsent[mteb]'") from None

    out = []
    for task in build(expand(task_names), options):
        d, cls = task.declaration, type(task)
        if not cls.mteb_type:
            raise XlsentError(f"task {d.name}: MTEB has no task type with this protocol ({cls.measures}) — it "
                              "runs in xlsent only (xlsent eval run writes its result in MTEB's format)")
        langs, data = task.mteb_data(Dataset, DatasetDict)
        base = {"BitextMining": AbsTaskBitextMining, "STS": AbsTaskSTS}[cls.mteb_type]
        metadata = TaskMetadata(
            name=d.mteb_name, dataset={"path": f"xlsent/{d.dataset}", "revision": "bundled"},
            description=d.description, type=typing.cast(Any, cls.mteb_type), category="t2t", modalities=["text"],
            eval_splits=list(d.splits[:1]), eval_langs=langs if len(langs) > 1 else next(iter(langs.values())),
            main_score=cls.mteb_main_score or cls.main_score, license="not specified",
            annotations_creators="human-annotated", sample_creation="found", bibtex_citation="", reference=None,
            domains=["Written"], task_subtypes=[], dialect=[], date=None)
        out.append(_mteb_task(base, metadata, data, len(langs) > 1))
    return out


def _mteb_task(base: type, metadata: Any, data: dict, multilingual: bool) -> Any:
    extra = {"min_score": 0, "max_score": 5} if base.__name__ == "AbsTaskSTS" else {}

    class XlsentTask(base):  # type: ignore[misc, valid-type]
        def load_data(self, **kwargs: Any) -> None:
            self.dataset = data if multilingual else data["default"]
            self.data_loaded = True

    XlsentTask.metadata = metadata
    for k, v in extra.items():
        setattr(XlsentTask, k, v)
    XlsentTask.__name__ = XlsentTask.__qualname__ = metadata.name.replace(".", "_").replace("-", "_")
    return XlsentTask()
