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

TASKS = ("retrieval", "sts")


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
            return self.results[0].to_dict()
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
      ``tgt_distractors`` (lists of extra candidates). ``main_score``: P@1, the mean of both directions (and of
      every pool). With one pool per language each result also carries its language's ``script`` (ISO 15924)
      and the model tokenizer's ``pieces_per_word`` and ``unk_rate``; over ``udhr-all`` (and its ``:dev`` /
      ``:test``) ``summary`` groups the languages by script, pieces per word and unknown-piece rate
      (:mod:`xlsent.evaluation.languages`).
    * ``"sts"`` (``xlsent eval sts``): Spearman and Pearson correlation with gold scores of an STS2017-format
      file, ``data`` (``sentence1<TAB>sentence2<TAB>score``). Options: ``resamples``, ``seed``, ``on_bad_lines``.
      ``main_score``: Spearman's ρ of cosine similarity.
    * a declared task or suite (``"retrieval:bible-en-ny:dev"``, ``"mining:udhr:zul"``, ``"lite"``): run as
      :func:`evaluate_tasks` does, ``**options`` being its task options; returns its
      :class:`~xlsent.evaluation.tasks.TaskRun` (a list of them for several).

    Args:
        model: a registered name, a model folder or a ``SentenceTransformer`` (:func:`xlsent.load`).
        task: one of the tasks above.
        pairs, dataset: the retrieval pool (exactly one).
        data: the STS file.
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
    run = {"retrieval": _retrieval, "sts": _sts}[task]
    known = {"retrieval": _RETRIEVAL_OPTIONS, "sts": _STS_OPTIONS}[task]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise XlsentError(f"unknown option {unknown[0]}= for task {task}: use {', '.join(sorted(known))}")
    if task == "sts" and (pairs or dataset):
        raise XlsentError("task sts reads an STS file: give data=FILE (sentence1<TAB>sentence2<TAB>score)")
    dimensions = check_dimensions(model, dimensions)

    def load(name: str):  # the model loads only after every input is read and checked
        place(device, dtype)
        return encoder_for(model, backend=backend, threads=threads, chunk_words=chunk_words,
                           show_progress=show_progress, memo=True, name=name, dimensions=dimensions)

    kwargs = {"pairs": pairs, "dataset": dataset} if task == "retrieval" else {"data": data}
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
                   options: dict | None = None, backend: str = "auto", threads: int = 0, device: str = "auto",
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
        options: options of the task types (:func:`xlsent.evaluation.tasks.build`): ``sample``, ``seed``,
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
               similarity: str = "cosine", center: bool = False, beside: bool = True, k_nn: int = 4,
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
    check_unicode(list(src_distractors), "src_distractors")
    check_unicode(list(tgt_distractors), "tgt_distractors")
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


def _sts(model: Any, load: Callable[[str], Any], note: Callable[[str], None], *, data=None, resamples: int = 1000,
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
