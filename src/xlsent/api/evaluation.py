"""``xlsent.evaluate(model, task, …)``: one entry point for the evaluations, each returning a typed result with a
``main_score`` and the JSON its command writes (``to_dict()``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from xlsent.api._common import (Note, at_least, check_backend, check_dimensions, check_unicode, choice, encoder_for,
                                output_file, place)
from xlsent.utils.errors import XlsentError

TASKS = ("retrieval", "sts", "triplet", "mse", "mining", "documents", "classify", "align")


@dataclass
class Evaluation:
    """What :func:`evaluate` returns: the task, one result per pool, the headline figure and the JSON."""

    task: str
    results: list = field(default_factory=list)  # typed results (RetrievalResult, StsResult …), one per pool
    main_score: float = float("nan")
    main_score_name: str = ""
    summary: dict | None = None  # retrieval over a set flagged for it (udhr-all): by script and tokenizer pieces

    def to_dict(self) -> Any:
        """Exactly what the task's command writes with ``--output``: one pool's dict, or a list of them — or, for
        the languages of a set with a summary (``udhr-all:test``), ``{"dataset", "model", "languages": [that
        list], "mean", "summary"}`` (:func:`xlsent.evaluation.languages.summarize`)."""
        if len(self.results) == 1:
            r = self.results[0]
            return r.to_dict() if hasattr(r, "to_dict") else r
        languages = [r.to_dict() for r in self.results]
        if self.summary is None:
            return languages
        return {"dataset": self.results[0].dataset, "model": self.results[0].model, "languages": languages,
                "mean": self.mean(), "summary": self.summary}

    def mean(self) -> dict | None:
        """Retrieval over several pools: each figure's unweighted mean over pools (every language counts once)."""
        if self.task != "retrieval" or len(self.results) < 2:
            return None
        from xlsent.evaluation.retrieval import mean_row

        return mean_row(self.results)


def evaluate(model: Any, task: str = "retrieval", *, pairs: str | Path | None = None, dataset: str | None = None,
             data: str | Path | None = None, backend: str = "auto", threads: int = 0, device: str = "auto",
             dtype: str = "auto", chunk_words: int = 0, dimensions: int | None = None, on_note: Note = None,
             show_progress: bool = False, **options: Any) -> Evaluation:
    """Evaluate a model on a task.

    Tasks:

    * ``"retrieval"`` (``xlsent eval retrieval``): P@1/5/10 both directions over the whole pool, tie-aware, with
      bootstrap 95% CIs, on ``pairs`` (a file: TSV, JSONL, Moses ``A,B``) or ``dataset`` (bundled:
      ``bible-en-ny:test``, ``udhr``, ``udhr:nya`` …). Options: ``similarity`` (``cosine`` | ``dot`` |
      ``euclidean`` | ``manhattan`` | ``margin`` | ``csls``), ``center``, ``beside`` (P@1 with centering, CSLS and
      the margin reported beside the main figure; default True), ``k_nn``, ``resamples``, ``seed``, ``sample``,
      ``by_language`` (one pool per target language; default: on for several languages), ``on_bad_lines``,
      ``queries`` (large-pool mode: N queries among every sentence of the pool) with ``src_distractors`` /
      ``tgt_distractors`` (extra candidates: a list, or a file of one a line). ``main_score``: P@1, the mean of
      both directions (and of every pool). With one pool per language each result also carries its language's ``script`` (ISO 15924)
      and the model tokenizer's ``pieces_per_word`` and ``unk_rate``; over ``udhr-all`` (and its ``:dev`` /
      ``:test``) ``summary`` groups the languages by script, pieces per word and unknown-piece rate
      (:mod:`xlsent.evaluation.languages`).
    * ``"sts"`` (``xlsent eval sts``): Spearman and Pearson correlation with gold scores of an STS2017-format
      file, ``data`` (``sentence1<TAB>sentence2<TAB>score``). Options: ``resamples``, ``seed``, ``on_bad_lines``.
      ``main_score``: Spearman's ρ of cosine similarity.
    * ``"triplet"`` (``xlsent eval triplet``): triplet accuracy (cosine, dot, Manhattan, Euclidean), by length
      difference, on ``data`` (a triplets file, ``anchor<TAB>positive<TAB>negative``) or triplets built from
      ``dataset`` / ``pairs``. Options: ``negatives`` (``section`` | ``random`` | ``hard``), ``teacher`` (mines hard
      negatives), ``sample``, ``resamples``, ``seed``, ``on_bad_lines``. ``main_score``: cosine accuracy.
    * ``"mse"`` (``xlsent eval mse``): MSE of the model to a teacher (option ``teacher``, default ``minilm-en``) on
      ``pairs`` / ``dataset``; options ``sample`` (1,000), ``seed``, ``on_bad_lines``. ``main_score``: −MSE×100 of
      the other language against the teacher's English.
    * ``"mining"`` (``xlsent eval mining``): BUCC-style P/R/F1 with the threshold chosen on dev, on ``dataset``
      (``bible``, ``udhr:CODE``, ``udhr-dev:CODE``) or BUCC files (options ``dev``, ``test``, ``src_lang``,
      ``tgt_lang``). Options: ``n_gold``, ``n_distractors``, ``mode``, ``margin``, ``k``, ``center``,
      ``precision``, ``seed``. ``main_score``: test F1.
    * ``"documents"`` (``xlsent eval documents``): document matching P@1/5/10 on ``dataset`` (``bible-chapters``,
      ``udhr-articles:CODE``) or ``pairs``; give ``chunk_words`` (the command's default is 20). Options:
      ``similarity``, ``resamples``, ``seed``, ``on_bad_lines``. ``main_score``: P@1, mean of both directions.
    * ``"classify"`` (``xlsent eval classify``): zero-shot classification transfer on ``dataset`` (``bible-genre``)
      or label files (options ``train``, ``test``, ``train_target``, ``train_lang``, ``test_lang``); options
      ``per_class``, ``seeds``, ``resamples``. ``main_score``: transfer accuracy.
    * ``"align"`` (``xlsent eval align``): sentence-alignment strict / lax P, R, F1 of ``dataset`` (``bible-align``
      …, aligned here with ``model``; options ``max_overlap``, ``deletion_quantile``, ``plain``, ``runs``,
      ``length_weight``), or of a prediction against gold files (options ``gold``, ``pred``; ``model`` None).
      ``main_score``: strict F1.
    * a declared task or suite (``"retrieval:bible-en-ny:dev"``, ``"mining:udhr:zul"``, ``"lite"``): run as
      :func:`evaluate_tasks` does, ``**options`` being its task options; returns its
      :class:`~xlsent.evaluation.tasks.TaskRun` (a list of them for several).

    Args:
        model: a registered name, a model folder or a ``SentenceTransformer`` (:func:`xlsent.load`).
        task: one of the tasks above.
        pairs, dataset: the retrieval pool (exactly one).
        data: the STS file (``sts``), the triplets file (``triplet``).
        backend, threads, device, dtype, chunk_words: how the model runs (as :func:`xlsent.embed`).
        dimensions: evaluate the first N coordinates of each vector, renormalised (``None`` = the full width; as
            :func:`xlsent.embed`).
        on_note: called with each line the evaluation reports (pairs read, skipped lines).
        **options: the task's options, above.

    Returns:
        An :class:`Evaluation`: ``main_score``, ``results`` (typed, one per pool) and ``to_dict()`` — for
        retrieval exactly the JSON ``xlsent eval retrieval --output`` writes.

    Example:
        >>> import xlsent
        >>> result = xlsent.evaluate("e5-small", "retrieval", dataset="bible-en-ny:test", sample=200,
        ...                          beside=False)
        >>> result.main_score > 0.8
        True
        >>> sorted(result.to_dict())[:3]
        ['dataset', 'model', 'n']
    """
    if task not in TASKS and (":" in task or task in _suites()):  # a declared task (or suite): xlsent eval run
        if pairs or dataset or data:
            raise XlsentError(f"task {task} names its data: leave out pairs=, dataset= and data=")
        runs = evaluate_tasks(model, task, options=options, backend=backend, threads=threads, device=device,
                              dtype=dtype, dimensions=dimensions, on_note=on_note)
        return runs[0] if len(runs) == 1 else runs
    choice(task, TASKS, "task")
    check_backend(backend, threads)
    at_least(chunk_words, 0, "--chunk-words")
    run, known = _RUNNERS[task]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise XlsentError(f"unknown option {unknown[0]}= for task {task}: use {', '.join(sorted(known))}")
    if task == "sts" and (pairs or dataset):
        raise XlsentError("task sts reads an STS file: give data=FILE (sentence1<TAB>sentence2<TAB>score)")
    if model is None and not (task == "align" and not dataset):
        raise XlsentError(f"task {task} scores a model: give one (a registered name or a model folder)")
    dimensions = check_dimensions(model, dimensions) if model is not None else None

    def load(name: str, other: Any = None, **kw: Any):  # models load only after every input is read and checked
        """The model's encoder (``other``: another model's, e.g. a teacher, on the same backend)."""
        place(device, dtype)
        return encoder_for(model if other is None else other, backend=backend, threads=threads,
                           chunk_words=chunk_words, show_progress=show_progress, memo=True, name=name,
                           dimensions=dimensions if other is None else None, **kw)

    kwargs = {"pairs": pairs, "dataset": dataset, "data": data}
    return run(model, load, on_note or (lambda line: None), **kwargs, **options)


class _Scorer:
    """What a declared task is called with (:class:`xlsent.evaluation.tasks.Scorer`): the model loads here, in
    the API, never in an evaluation."""

    def __init__(self, label: str, encoder: Callable[..., Any], source: Any):
        self.model, self.encoder, self.source = label, encoder, source

    def teacher(self, name: str):
        return encoder_for(name, memo=True, name=name)

    def sentence_model(self):
        from types import SimpleNamespace

        from xlsent.models.handle import load_model, model_prompt

        if isinstance(self.source, (str, Path)):
            return load_model(self.source)
        return SimpleNamespace(model=self.source, prompt=model_prompt(self.source))

    def tagger(self):
        from xlsent.models.tagger import load_tagger

        if not isinstance(self.source, (str, Path)):
            raise XlsentError("a ner: or pos: task scores a tagger: give its folder (xlsent train tagger)")
        return load_tagger(self.source)


def _suites() -> dict:
    from xlsent.evaluation.tasks import SUITES

    return SUITES


def evaluate_tasks(model: Any, tasks: str | Sequence[str], output: str | Path | None = None, *,
                   options: dict | Sequence[str] | None = None, backend: str = "auto", threads: int = 0, device: str = "auto",
                   dtype: str = "auto", dimensions: int | None = None, on_note: Note = None) -> list:
    """Run declared tasks (``xlsent eval run``): ``tasks`` is ``NAME[,NAME…]`` or a list — task names
    (``retrieval:bible-en-ny:dev``, ``mining:udhr:zul``, ``sts:FILE``; see :func:`xlsent.evaluation.tasks.names`)
    or suites (``lite``, ``dev``, ``test``: :data:`xlsent.evaluation.tasks.SUITES`).

    Every name is checked and every task's data read before the model loads; the model loads once. With
    ``output``, one file per task is written there, ``<task>.json`` in MTEB's result format
    (``mteb.TaskResult.from_disk`` reads it; :meth:`~xlsent.evaluation.tasks.TaskRun.to_mteb`).

    Args:
        model: a registered name, a model folder or a ``SentenceTransformer``; a tagger folder for ``ner:`` /
            ``pos:`` tasks.
        tasks: the task and suite names.
        output: a folder for the result files (created).
        options: options of the task types (:func:`xlsent.evaluation.tasks.build`), a dict or ``KEY=VALUE``
            strings: ``sample``, ``seed``,
            ``resamples``, ``similarity``, ``k``, ``chunk_words``, ``teacher``, ``per_class``, ``n_gold``,
            ``n_distractors``.
        backend, threads, device, dtype, dimensions, on_note: as :func:`evaluate`.

    Returns:
        One :class:`~xlsent.evaluation.tasks.TaskRun` a task, in order: ``main_score``, ``scores`` (one row per
        language pair), ``results`` (the typed results), ``to_mteb()``.

    Example:
        >>> import xlsent
        >>> run, = xlsent.evaluate_tasks("e5-small", "retrieval:bible-en-ny:dev", options={"sample": 200})
        >>> run.main_score_name, run.main_score > 0.8
        ('f1', True)
    """
    import time

    from xlsent.evaluation.tasks import build, expand
    from xlsent.utils.io import write_json_atomic

    check_backend(backend, threads)
    if isinstance(model, (str, Path)):  # a wrong path: one line before any task's data is read
        from xlsent.models.registry import REGISTRY, resolve_model_path

        if str(model) not in REGISTRY:
            resolve_model_path(str(model))
    folder = Path(output) if output is not None else None
    if folder is not None:
        output_file(folder / "task.json", "--output")
    names = expand(tasks)
    dimensions = check_dimensions(model, dimensions)
    note = on_note or (lambda line: None)
    built = [build(n, options) for n in names]  # every file read and checked before the model loads
    place(device, dtype)
    label = _label(model)

    def encoder(**kw):
        return encoder_for(model, backend=backend, threads=threads, memo=True, name=label, dimensions=dimensions,
                           **kw)

    scorer = _Scorer(label, encoder, model)
    runs = []
    for task in built:
        note(f"{task.declaration.name}…")
        start = time.perf_counter()
        run = task.run(scorer)
        run.evaluation_time = round(time.perf_counter() - start, 2)
        note(f"{task.declaration.name}: {run.main_score_name} {run.main_score:.4f}")
        if folder is not None:
            write_json_atomic(folder / f"{run.declaration.mteb_name}.json", run.to_mteb())
        runs.append(run)
    return runs


_RETRIEVAL_OPTIONS = ("similarity", "center", "beside", "k_nn", "resamples", "seed", "sample", "by_language",
                      "on_bad_lines", "queries", "src_distractors", "tgt_distractors")
_STS_OPTIONS = ("resamples", "seed", "on_bad_lines")


def _label(model: Any) -> str:
    return str(model) if isinstance(model, (str, Path)) else "model"


def _retrieval(model: Any, load: Callable[[str], Any], note: Callable[[str], None], *, pairs=None, dataset=None,
               data=None, similarity: str = "cosine", center: bool = False, beside: bool = True, k_nn: int = 4,
               resamples: int = 1000, seed: int = 0, sample: int = 0, by_language: bool | None = None,
               on_bad_lines: str = "error", queries: int = 0, src_distractors: Sequence[str] = (),
               tgt_distractors: Sequence[str] = ()) -> Evaluation:
    from xlsent.data.bundled import bundled_spec, is_bundled, split_by_language
    from xlsent.data.pairs import load_pairs, side_langs
    from xlsent.evaluation.languages import profile_languages, summarize
    from xlsent.evaluation.retrieval import SIMILARITIES, Pool, evaluate_many

    choice(similarity, SIMILARITIES, "--similarity")
    if bool(pairs) == bool(dataset):
        raise XlsentError("give exactly one of --pairs FILE or --dataset NAME")
    if dataset and not is_bundled(dataset):
        raise XlsentError(f"unknown dataset '{dataset}': see xlsent data list (e.g. bible-en-ny:test, udhr, udhr:nya); "
                          "a file goes in --pairs")
    for value, minimum, option in ((sample, 0, "--sample"), (resamples, 1, "--resamples"), (k_nn, 1, "--k-nn"),
                                   (queries, 0, "--queries")):
        at_least(value, minimum, option)
    if (src_distractors or tgt_distractors) and not queries:
        raise XlsentError("--src-distractors / --tgt-distractors need --queries N (the large-pool mode)")
    src_distractors = _distractors(src_distractors, "--src-distractors", note)
    tgt_distractors = _distractors(tgt_distractors, "--tgt-distractors", note)
    check_unicode(src_distractors, "src_distractors")
    check_unicode(tgt_distractors, "tgt_distractors")
    spec = bundled_spec(dataset) if dataset else None
    source = str(pairs or dataset)
    loaded = load_pairs(source, on_bad_lines=on_bad_lines, dedupe=False, sample=sample, seed=seed)
    for line in loaded.notes():
        note(line)
    ds = loaded.dataset
    langs = list(dict.fromkeys(ds["tgt_lang"])) if "tgt_lang" in ds.column_names else [""]
    split = by_language if by_language is not None else len(langs) > 1
    parts = split_by_language(ds) if split else {source: ds}
    groups = {name: Pool(list(p["src"]), list(p["tgt"]), *side_langs(p)) for name, p in parts.items()}
    label = _label(model)
    enc = None
    if queries:
        small = {name: len(g[0]) for name, g in groups.items() if len(g[0]) < queries}
        if small:
            raise XlsentError(f"--queries {queries}: more than the pool's pairs "
                              f"({', '.join(f'{k}: {v}' for k, v in small.items())}) — give fewer queries")
        from xlsent.evaluation.retrieval import evaluate_queries

        enc = load(label)
        results = [evaluate_queries(src, tgt, enc, queries, label, similarity, resamples, seed, k_nn, sl, tl, name,
                                    list(src_distractors), list(tgt_distractors), center)
                   for name, (src, tgt, sl, tl) in groups.items()]
    else:
        enc = load(label)
        results = evaluate_many(groups, enc, label, similarity, resamples, seed, k_nn, source, center, beside)
    if split or (spec is not None and spec.by_language):  # one pool per language: its script and tokenization
        profile_languages(results, groups, enc)
    score = float(np.mean([(r.src2tgt["p@1"] + r.tgt2src["p@1"]) / 2 for r in results]))
    summary = summarize(results) if spec is not None and spec.summary and len(results) > 1 else None
    return Evaluation("retrieval", results, score, "p@1 (mean of both directions)", summary)


def _distractors(given: Any, option: str, note: Callable[[str], None]) -> list[str]:
    """Distractor sentences: a list, or a file (one a line; blank lines skipped and counted)."""
    if not isinstance(given, (str, Path)):
        return list(given)
    from xlsent.data.readers import read_lines

    lines = read_lines(Path(given))
    kept = [x.strip() for x in lines if x.strip()]
    if len(kept) < len(lines):
        note(f"{given}: {len(lines) - len(kept)} blank line(s) skipped")
    note(f"{given}: {len(kept)} distractors ({option})")
    return kept


def _sts(model: Any, load: Callable[[str], Any], note: Callable[[str], None], *, pairs=None, dataset=None, data=None,
         resamples: int = 1000,
         seed: int = 0, on_bad_lines: str = "error") -> Evaluation:
    from xlsent.data.sts import read_sts
    from xlsent.evaluation.sts import evaluate_sts

    if data is None:
        raise XlsentError("task sts needs data=FILE (STS2017 format: sentence1<TAB>sentence2<TAB>score, 0–5)")
    at_least(resamples, 1, "--resamples")
    ds, report = read_sts(Path(data), on_bad_lines)
    for line in report.lines():
        note(line)
    label = _label(model)
    res = evaluate_sts(ds["sentence1"], ds["sentence2"], ds["score"], load(label), label, str(data), resamples, seed)
    return Evaluation("sts", [res], float(res.by_similarity["cosine"].spearman), "spearman (cosine)")


def _one_source(pairs, dataset, files: str = "--pairs FILE") -> str:
    if bool(pairs) == bool(dataset):
        raise XlsentError(f"give exactly one of {files} or --dataset NAME")
    return str(pairs or dataset)


def _triplet(model, load, note, *, pairs=None, dataset=None, data=None, negatives: str = "section",
             teacher: str = "minilm-en", sample: int = 0, resamples: int = 1000, seed: int = 0,
             on_bad_lines: str = "error") -> Evaluation:
    from xlsent.data.pairs import english_side, load_pairs, side_langs
    from xlsent.data.triplets import build_triplets, read_triplets
    from xlsent.evaluation.triplet import evaluate_triplets

    choice(negatives, ("section", "random", "hard"), "--negatives")
    source = _one_source(data, dataset or pairs, "--triplets FILE")
    anchor_lang = None  # a triplet file's anchors: the low-resource side, language not given
    if data:
        ds, report = read_triplets(data, on_bad_lines)
        notes = report.lines()
    else:
        loaded = load_pairs(source, on_bad_lines=on_bad_lines, dedupe=False)
        miner = None
        if negatives == "hard":
            from xlsent.models.handle import load_model

            miner = load_model(teacher).model
        ds, rep = build_triplets(loaded.dataset, negatives, seed, teacher=miner)
        notes = loaded.notes() + rep.lines()
        langs = side_langs(loaded.dataset)
        anchor_lang = langs[0 if english_side(loaded.dataset)[0] == "src" else 1] or None
    if sample and sample < len(ds):
        ds = ds.shuffle(seed=seed).select(range(sample))
        notes.append(f"sampled {sample} triplets (seed {seed})")
    for line in notes:
        note(line)
    label = _label(model)
    r = evaluate_triplets(ds["anchor"], ds["positive"], ds["negative"], load(label), label, source, resamples, seed,
                          anchor_lang=anchor_lang)
    return Evaluation("triplet", [r], float(r.accuracy["cosine"].accuracy), "accuracy (cosine)")


def _mse(model, load, note, *, pairs=None, dataset=None, data=None, teacher: str = "minilm-en", sample: int = 1000,
         seed: int = 0, on_bad_lines: str = "error") -> Evaluation:
    from xlsent.data.pairs import english_side, load_pairs, side_langs
    from xlsent.evaluation.mse import evaluate_mse

    source = _one_source(pairs, dataset)
    loaded = load_pairs(source, on_bad_lines=on_bad_lines, dedupe=False, sample=sample, seed=seed)
    for line in loaded.notes():
        note(line)
    other, en = english_side(loaded.dataset)
    other_lang = side_langs(loaded.dataset)[0 if other == "src" else 1]
    label = _label(model)
    r = evaluate_mse(loaded.dataset[en], loaded.dataset[other], load(label), load(teacher, teacher), label, teacher,
                     source, tgt_lang=other_lang or None)
    return Evaluation("mse", [r], -100 * float(r.mse_tgt), "−MSE×100 (other language against the teacher's English)")


def _mining(model, load, note, *, pairs=None, dataset=None, data=None, dev=None, test=None, src_lang: str = "",
            tgt_lang: str = "", n_gold: int = 1000, n_distractors: int = 7000, mode: str = "max",
            margin: str = "ratio", k: int = 4, center: bool = False, precision: str = "float16",
            seed: int = 0) -> Evaluation:
    from xlsent.data.comparable import read_bucc
    from xlsent.data.registry import find
    from xlsent.evaluation.mining import evaluate_mining
    from xlsent.mining.job import MineConfig
    from xlsent.mining.store import DTYPES

    choice(mode, ("forward", "backward", "intersect", "max"), "--mode")
    choice(margin, ("ratio", "distance", "absolute"), "--margin")
    choice(precision, DTYPES, "--precision")
    if bool(dataset) == bool(dev or test):
        raise XlsentError("give either --dataset (bible, udhr:CODE) or --dev PREFIX and --test PREFIX")
    if dataset:
        bundled = find(dataset, "mining")
        if bundled is None or (bundled.entry.by_language and not bundled.lang):
            raise XlsentError(f"unknown comparable corpus '{dataset}': use bible, udhr:CODE or udhr-dev:CODE")
        corpora = bundled.load(n_gold=n_gold, n_distractors=n_distractors, seed=seed)
    else:
        if not (dev and test and src_lang and tgt_lang):
            raise XlsentError("BUCC files need --dev PREFIX --test PREFIX --src-lang X --tgt-lang Y")
        corpora = [read_bucc(p, src_lang, tgt_lang) for p in (dev, test)]
    label = _label(model)
    r = evaluate_mining(load(label), corpora[0], corpora[1],
                        MineConfig(k=k, mode=mode, margin=margin, center=center, dtype=precision), label)
    return Evaluation("mining", [r], float(r.test.f1), "F1 at the dev threshold")


def _documents(model, load, note, *, pairs=None, dataset=None, data=None, similarity: str = "cosine",
               resamples: int = 1000, seed: int = 0, on_bad_lines: str = "error") -> Evaluation:
    from xlsent.evaluation.documents import document_units
    from xlsent.evaluation.retrieval import SIMILARITIES, evaluate_retrieval

    choice(similarity, SIMILARITIES, "--similarity")
    source = _one_source(pairs, dataset)
    if dataset:
        src, tgt, sl, tl = document_units(dataset)
    else:
        from xlsent.data.pairs import load_pairs, side_langs

        ds = load_pairs(pairs, on_bad_lines=on_bad_lines, dedupe=False).dataset
        src, tgt = list(ds["src"]), list(ds["tgt"])
        sl, tl = side_langs(ds)
    label = _label(model)
    r = evaluate_retrieval(src, tgt, load(label), label, similarity, resamples, seed, 4, sl, tl, source)
    return Evaluation("documents", [r], (r.src2tgt["p@1"] + r.tgt2src["p@1"]) / 2, "p@1 (mean of both directions)")


def _classify(model, load, note, *, pairs=None, dataset=None, data=None, train=None, test=None, train_target=None,
              train_lang: str = "", test_lang: str = "", per_class: int = 500, seeds: int = 5,
              resamples: int = 1000) -> Evaluation:
    from xlsent.data.labelled import read_labelled
    from xlsent.data.registry import find
    from xlsent.evaluation.classify import evaluate_classification

    for value, minimum, option in ((seeds, 1, "--seeds"), (resamples, 1, "--resamples"), (per_class, 0, "--per-class")):
        at_least(value, minimum, option)
    if bool(dataset) == bool(train or test):
        raise XlsentError("give --dataset bible-genre, or --train FILE and --test FILE")
    if dataset:
        bundled = find(dataset, "labelled")
        if bundled is None:
            raise XlsentError(f"unknown classification task '{dataset}' — the bundled one is bible-genre")
        task = bundled.load(per_class=per_class)
        tr, te, tt = task["train"], task["test"], task["train_target"]
    else:
        if not (train and test):
            raise XlsentError("give both --train FILE and --test FILE")
        tr, te = read_labelled(train), read_labelled(test)
        tt = read_labelled(train_target) if train_target else None
        tr.lang, te.lang = train_lang, test_lang
        if tt is not None:
            tt.lang = test_lang
    unseen = sorted(set(te.labels) - set(tr.labels))
    if unseen:
        raise XlsentError(f"{te.source}: label(s) {', '.join(unseen)} never occur in {tr.source} — the classifier "
                          "cannot predict them; give training texts for every test label")
    if len(set(tr.labels)) < 2:
        raise XlsentError(f"{tr.source}: a classifier needs at least 2 labels")
    note(f"train {len(tr.texts)} ({tr.source}), test {len(te.texts)} ({te.source})"
         + (f", in-language train {len(tt.texts)} ({tt.source})" if tt else ""))
    label = _label(model)
    r = evaluate_classification(load(label), tr, te, tt, seeds, resamples)
    return Evaluation("classify", [{"model": label, "train": tr.source, "test": te.source, **r}],
                      float(r["transfer"]["accuracy"]), "transfer accuracy")


def _align(model, load, note, *, pairs=None, dataset=None, data=None, gold=None, pred=None, max_overlap: int = 3,
           deletion_quantile: float = 0.02, plain: bool = False, runs: str = "mean",
           length_weight: float = 0.1) -> Evaluation:
    from xlsent.data.alignment import read_alignment
    from xlsent.evaluation.alignment import evaluate_alignment, score_alignments

    if bool(dataset) == bool(gold or pred):
        raise XlsentError("give either --gold GOLD --pred PRED, or --dataset bible-align with --model")
    if dataset:
        from xlsent.aligner.vecalign import EMBED_BATCH, align_documents
        from xlsent.api.alignment import align_config
        from xlsent.data.registry import entries, load as load_set

        choice(dataset, tuple(e.name for e in entries("alignment")), "--dataset")
        if model is None:
            raise XlsentError("--dataset aligns its documents with a model: give --model (e.g. e5-small)")
        cfg = align_config(max_overlap, deletion_quantile, 5, plain, runs, length_weight)
        docs = load_set(dataset, "alignment")
        enc = load(_label(model), normalize=True, batch_size=EMBED_BATCH)
        scores, _ = evaluate_alignment(docs, lambda d: align_documents(d.src, d.tgt, enc.encode, enc.dimension, cfg,
                                                                       ("en", "ny")))
        name = f"{model} on {dataset} ({len(docs)} chapters)"
    else:
        if not (gold and pred):
            raise XlsentError("give both --gold and --pred")
        gold, pred = Path(gold), Path(pred)
        for p, opt in ((gold, "--gold"), (pred, "--pred")):
            if not p.exists():
                raise XlsentError(f"{p}: no such file or folder ({opt})")
        if gold.is_dir() != pred.is_dir():
            raise XlsentError("--gold and --pred must both be files or both be folders")
        if gold.is_dir():
            names = sorted(p.name for p in gold.iterdir() if p.is_file() and not p.name.endswith(".json"))
            missing = [n for n in names if not (pred / n).is_file()]
            if missing:
                raise XlsentError(f"{pred}: no prediction for {missing[0]} (and {len(missing) - 1} more) — files "
                                  "are matched by name")
            files = [(gold / n, pred / n) for n in names]
        else:
            files = [(gold, pred)]
        scores = score_alignments([read_alignment(g) for g, _ in files], [read_alignment(p) for _, p in files])
        name = f"{pred} against {gold}"
    note(name)
    return Evaluation("align", [{"dataset": dataset, "model": model if model is None else _label(model),
                                 **scores.to_dict()}], float(scores.strict_f1), "strict F1")


_RUNNERS = {
    "retrieval": (_retrieval, _RETRIEVAL_OPTIONS), "sts": (_sts, _STS_OPTIONS),
    "triplet": (_triplet, ("negatives", "teacher", "sample", "resamples", "seed", "on_bad_lines")),
    "mse": (_mse, ("teacher", "sample", "seed", "on_bad_lines")),
    "mining": (_mining, ("dev", "test", "src_lang", "tgt_lang", "n_gold", "n_distractors", "mode", "margin", "k",
                         "center", "precision", "seed")),
    "documents": (_documents, ("similarity", "resamples", "seed", "on_bad_lines")),
    "classify": (_classify, ("train", "test", "train_target", "train_lang", "test_lang", "per_class", "seeds",
                             "resamples")),
    "align": (_align, ("gold", "pred", "max_overlap", "deletion_quantile", "plain", "runs", "length_weight")),
}


def evaluate_taggers(models: Sequence[str], test: str | Path, task: str = "ner", *, compare: Sequence[str] = (),
                     sample: int = 0, seed: int = 0, resamples: int = 1000, scheme: str | None = None,
                     strict: bool = False, tag_column: int = -1, max_length: int = 128, on_note: Note = None) -> dict:
    """Score taggers (``xlsent train tagger`` folders; several = several seeds) on a CoNLL file or bundled tagged
    set (``xlsent eval ner`` / ``eval pos``): entity micro/macro F1 (``ner``) or accuracy (``pos``) with bootstrap
    CIs, per label; the mean and spread over the ``models``; with ``compare`` (one tagger per model, seed i against
    seed i) the seed-averaged difference with a paired bootstrap.

    Returns:
        The ``xlsent.tagging-eval/1`` dict the command writes (``models`` maps each folder to its scores; the typed
        scores are under ``scored``, the corpus under ``corpus``; both are dropped from the JSON).
    """
    from xlsent.data.tagging import data_kind, load_tagged
    from xlsent.evaluation.tagging import evaluate_tagger, over_seeds, paired_bootstrap_seeds, sample_corpus
    from xlsent.models.tagger import load_tagger

    choice(task, ("ner", "pos"), "task")
    if compare and len(compare) != len(models):
        raise XlsentError(f"--compare: give one tagger per --model ({len(models)}), seed i against seed i — "
                          f"got {len(compare)}")
    for v, m, o in ((sample, 0, "--sample"), (resamples, 0, "--resamples"), (max_length, 8, "--max-length")):
        at_least(v, m, o)
    if not models:
        raise XlsentError("give at least one --model (a tagger folder; repeat it for several seeds)")
    corpus = sample_corpus(load_tagged(test, scheme, tag_column, strict, task=task), sample, seed)
    for n in corpus.notes:
        (on_note or (lambda line: None))(n)
    rows = [(m, *load_tagger(m)) for m in [*models, *compare]]  # every folder checked before the first is scored
    scored = [(n, evaluate_tagger(model, tok, corpus, task, resamples, seed, max_length)) for n, model, tok in rows]
    base, other = scored[: len(models)], scored[len(models):]
    mean, spread = over_seeds([s.main() for _, s in base])
    paired = paired_bootstrap_seeds(task, corpus.tags, [s.predictions for _, s in base],
                                    [s.predictions for _, s in other], max(resamples, 1), seed) if compare else None
    return {"schema": "xlsent.tagging-eval/1", "task": task, "test": str(test), "labels": data_kind(test),
            "sentences": len(corpus), "models": {n: s.to_dict() for n, s in scored}, "mean": mean, "sd": spread,
            "paired": paired.to_dict() if paired else None, "scored": scored, "corpus": corpus}
