"""``xlsent.evaluate(model, task, …)`` and ``xlsent.evaluate_tasks(model, tasks)``: every evaluation is a declared
task (:mod:`xlsent.evaluation.tasks`) run by its one runner; this module makes the :class:`Scorer` (the model
loads here, once, after every task's data is read) and turns Python's keywords into a task's declaration."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Sequence

from xlsent.api._common import (Note, check_backend, check_dimensions, check_options, encoder_for, old_names,
                               output_file, place, renamed, writes)
from xlsent.evaluation.tasks import TASK_TYPES, TaskRun, TaskType, declare
from xlsent.evaluation.tasks.options import declared
from xlsent.utils.errors import XlsentError
from xlsent.utils.options import Option

#: the names ``evaluate`` took before tasks were declared: old → task type (kept for one release)
_OLD_TYPES = {"classify": "classification", "align": "alignment"}
#: options that named the user's files before ``data="A,B"`` (kept for one release), in the order they join
_OLD_FILES = {"classification": ("train", "test", "train_target"), "mining": ("dev", "test"),
              "alignment": ("gold", "pred")}

#: Deprecated: :func:`evaluate` returns a :class:`~xlsent.evaluation.tasks.TaskRun` (the old name, for one release)
Evaluation = TaskRun


def evaluate(model: Any, task: str = "retrieval", *, pairs: str | Path | None = None, dataset: str | None = None,
             data: str | Path | None = None, backend: str = "auto", threads: int = 0, device: str = "auto",
             dtype: str = "auto", truncate_dim: int | None = None, prompt_name: str | None = None,
             prompt: str | None = None, show_progress_bar: bool | None = None, on_note: Note = None,
             **options: Any) -> TaskRun:
    """Evaluate a model on one task, through the same runner as ``xlsent eval run`` and every recipe's report.

    ``task`` is a declared task (``"retrieval:bible-en-ny:dev"``, ``"mining:udhr:zul"``,
    ``"classification:TRAIN.tsv,TEST.tsv"``; :func:`xlsent.evaluation.tasks.names`), or a task type with its data
    given here: ``pairs`` (a pairs file: TSV, JSONL, Moses ``A,B``), ``dataset`` (a bundled set) or ``data`` (the
    user's files in the type's form, :attr:`~xlsent.evaluation.tasks.TaskType.user_files`) — exactly one.

    Task types (``xlsent eval TYPE`` runs each; its main score is the same wherever it runs):

    * ``retrieval`` — P@1/5/10 both ways, tie-aware, bootstrap CIs; main score P@1, the mean of both directions
      (and of every language pair); MTEB's BitextMining ``f1`` beside it in every row.
    * ``documents`` — the same over whole documents, chunked pooling (``chunk_words``, default 20).
    * ``sts`` — Spearman's ρ of cosine with an STS2017-format file's gold scores.
    * ``triplet`` — triplet accuracy (cosine); ``negatives`` section | random | hard (mined by ``teacher``).
    * ``mse`` — −MSE×100 to a ``teacher``'s vectors of the English side (default teacher ``minilm-en``).
    * ``mining`` — BUCC F1 of mined pairs at the threshold chosen on dev.
    * ``classification`` — zero-shot transfer accuracy of a linear classifier (MLDoc-style).
    * ``alignment`` — strict F1 of sentence alignment (Vecalign's scorer); ``data="GOLD,PRED"`` scores a
      prediction with no model.
    * ``spans``, ``ner``, ``pos`` — structural-span P@1; a tagger's entity micro-F1 / accuracy.

    Args:
        model: a registered name, a model folder or a ``SentenceTransformer`` (:func:`xlsent.load`); a tagger's
            folder for ``ner`` / ``pos``; ``None`` only to score an alignment prediction.
        task: a task type or a declared task name.
        pairs, dataset, data: the task's data (a type only).
        backend, threads, device, dtype: where and how the model runs (as :func:`xlsent.embed`).
        truncate_dim: evaluate the first N coordinates of each vector, renormalised (``None``: the full width).
        prompt_name, prompt: the prompt prefixed to every text (as :func:`xlsent.embed`; the model's default unless
            given).
        show_progress_bar: progress bars with an ETA while encoding and scoring (``None``: off in Python, on in the
            CLI).
        on_note: called with each line the evaluation reports (pairs read, skipped lines, the main score).
        **options: the task type's options, with their defaults
            (:meth:`~xlsent.evaluation.tasks.TaskType.options`), e.g. ``similarity``, ``sample``, ``resamples``;
            the names of the last release (``dimensions``, ``show_progress``, ``k_nn``, task ``classify`` /
            ``align`` and their file options) still work, with a ``DeprecationWarning``.

    Returns:
        A :class:`~xlsent.evaluation.tasks.TaskRun`: ``main_score``, ``main_score_name``, ``scores`` (one row per
        language pair, MTEB's figures beside), ``results`` (the typed results), ``details`` (the JSON
        ``xlsent eval TYPE --output`` writes) and ``to_dict()`` / ``to_mteb()``.

    Example:
        >>> import xlsent
        >>> run = xlsent.evaluate("e5-small", "retrieval", dataset="bible-en-ny:test", sample=200, beside=False)
        >>> run.main_score_name, run.main_score > 0.8
        ('p@1', True)
    """
    old = {k: options.pop(k) for k in ("dimensions", "show_progress") if k in options}
    truncate_dim, show_progress_bar = old_names("evaluate", old, truncate_dim=truncate_dim,
                                                show_progress_bar=show_progress_bar)
    renamed(options, "k_nn", "k")
    if task in _OLD_TYPES:
        warnings.warn(f"task {task!r} is named {_OLD_TYPES[task]!r} (the old name goes in xlsent 0.3)",
                      DeprecationWarning, stacklevel=2)
        task = _OLD_TYPES[task]
    files = [options.pop(k) for k in _OLD_FILES.get(task, ()) if k in options and options[k] is not None]
    if files and not (pairs or dataset or data):
        warnings.warn(f"{'=, '.join(_OLD_FILES[task])}= are given together as data='A,B' (the old names go in "
                      "xlsent 0.3)", DeprecationWarning, stacklevel=2)
        data = ",".join(map(str, files))
    given = [x for x in (pairs, dataset, data) if x]
    if ":" not in task and task not in _suites():
        if task not in TASK_TYPES:
            declare(task)  # one line: the task types
        if len(given) != 1:
            raise XlsentError(f"task {task}: give exactly one of pairs= (a file), dataset= (a bundled set) or data= "
                              "(the task's files)")
        task = f"{task}:{given[0]}"
    elif given:
        raise XlsentError(f"task {task} names its data: leave out pairs=, dataset= and data=")
    if task in _suites():
        raise XlsentError(f"{task} is a suite of tasks: run it with xlsent.evaluate_tasks(model, {task!r})")
    from xlsent.evaluation.tasks import build

    scorer = _Scorer(model, backend, threads, truncate_dim, show_progress_bar, prompt_name=prompt_name, prompt=prompt)
    runs = _run(model, build(task, options, read=False), None, scorer, device, dtype, on_note)
    return runs[0]


#: :func:`evaluate_tasks`'s options (``xlsent eval run``'s built from them)
TASKS: dict[str, Option] = {
    "model": Option(None, help="registered name or local model folder (a tagger folder for ner:/pos: tasks)"),
    "tasks": Option(None, help="TASK[,TASK…] (TYPE:DATASET, e.g. retrieval:bible-en-ny:dev, mining:udhr:zul, "
                               "sts:FILE) or a suite: lite | dev | test"),
    "output": Option(None, help="folder: one result file a task, in MTEB's format"),
    "options": Option([], help="a task option KEY=VALUE, repeatable: sample, seed, resamples, similarity, k, "
                               "chunk_words, teacher, per_class, seeds, n_gold, n_distractors"),
}


@writes("output")
def evaluate_tasks(model: Any, tasks: str | Sequence[str], output: str | Path | None = None, *,
                   options: dict | Sequence[str] | None = None, backend: str = "auto", threads: int = 0,
                   device: str = "auto", dtype: str = "auto", truncate_dim: int | None = None,
                   prompt_name: str | None = None, prompt: str | None = None, show_progress_bar: bool | None = None,
                   on_note: Note = None, **old: Any) -> list[TaskRun]:
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
        options: the task types' options (a dict, or ``KEY=VALUE`` strings), each given to every task whose type
            has it (:meth:`xlsent.evaluation.tasks.TaskType.options`).
        backend, threads, device, dtype, truncate_dim, prompt_name, prompt, show_progress_bar, on_note: as
            :func:`evaluate`.

    Returns:
        One :class:`~xlsent.evaluation.tasks.TaskRun` a task, in order.

    Example:
        >>> import xlsent
        >>> run, = xlsent.evaluate_tasks("e5-small", "retrieval:bible-en-ny:dev", options={"sample": 200})
        >>> run.main_score_name, run.main_score > 0.8
        ('p@1', True)
    """
    from xlsent.evaluation.tasks import build, expand

    truncate_dim, show_progress_bar = old_names("evaluate_tasks", old, truncate_dim=truncate_dim,
                                                show_progress_bar=show_progress_bar)
    folder = Path(output) if output is not None else None
    if folder is not None:
        output_file(folder / "task.json", "output")
    scorer = _Scorer(model, backend, threads, truncate_dim, show_progress_bar, prompt_name=prompt_name, prompt=prompt)
    return _run(model, build(expand(tasks), options, read=False), folder, scorer, device, dtype, on_note)


def _run(model: Any, tasks: list[TaskType], folder: Path | None, scorer: "_Scorer", device: str, dtype: str,
         note: Note) -> list[TaskRun]:
    """Check the runtime and the model's name (``tasks``' names and options are checked), read every task's data,
    then load the model once and run them."""
    from xlsent.evaluation.tasks import run_tasks

    check_backend(scorer.backend, scorer.threads)
    if isinstance(model, (str, Path)):  # a wrong path: one line before any task's data is read
        from xlsent.encoding.onnx_folder import is_export_folder
        from xlsent.models.registry import REGISTRY, resolve_model_path

        given = Path(str(model)).expanduser()
        if str(model) not in REGISTRY and not (given.is_dir() and is_export_folder(given)):
            resolve_model_path(str(model))
    scorer.dimensions = check_dimensions(model, scorer.dimensions) if model is not None else None
    for task in tasks:  # every file read and checked before the model loads
        task.load()
    if model is None and any(t.needs_model for t in tasks):
        raise XlsentError(f"task {tasks[0].declaration.name} scores a model: give one (a registered name or a model "
                          "folder)")
    place(device, dtype)
    return run_tasks(tasks, scorer, note, folder)


class _Scorer:
    """What a task is called with (:class:`xlsent.evaluation.tasks.Scorer`): the model loads here, in the API,
    never in an evaluation, and once for every task."""

    def __init__(self, source: Any, backend: str = "auto", threads: int = 0, dimensions: int | None = None,
                 show_progress_bar: bool | None = None, tagger: tuple[Any, Any] | None = None, prompt_name: str | None = None,
                 prompt: str | None = None):
        self.source, self.backend, self.threads, self._tagger = source, backend, threads, tagger
        self.dimensions, self.show_progress_bar = dimensions, show_progress_bar
        self.prompt_name, self.prompt = prompt_name, prompt
        self.model = "" if source is None else str(source) if isinstance(source, (str, Path)) else "model"

    def encoder(self, **options: Any) -> Any:
        return encoder_for(self.source, backend=self.backend, threads=self.threads, memo=True, name=self.model,
                           dimensions=self.dimensions, show_progress=self.show_progress_bar,
                           prompt_name=self.prompt_name, prompt=self.prompt, **options)

    def teacher(self, name: str) -> Any:
        return encoder_for(name, backend=self.backend, threads=self.threads, memo=True, name=name)

    def sentence_model(self, name: str | None = None) -> Any:
        from types import SimpleNamespace

        from xlsent.models.handle import load_model, model_prompt

        source = self.source if name is None else name
        if isinstance(source, (str, Path)):
            return load_model(source)
        return SimpleNamespace(model=source, prompt=model_prompt(source))

    def tagger(self) -> tuple[Any, Any]:
        from xlsent.models.tagger import load_tagger

        if self._tagger is not None:
            return self._tagger
        if not isinstance(self.source, (str, Path)):
            raise XlsentError("a ner: or pos: task scores a tagger: give its folder (xlsent train tagger)")
        return load_tagger(self.source)


def _suites() -> dict:
    from xlsent.evaluation.tasks import SUITES

    return SUITES


def evaluate_taggers(models: Sequence[str], test: str | Path, task: str = "ner", *, compare: Sequence[str] = (),
                     sample: int = 0, seed: int = 0, resamples: int = 1000, scheme: str | None = None,
                     strict: bool = False, tag_column: int = -1, max_length: int = 128, on_note: Note = None) -> dict:
    """Score taggers (``xlsent train tagger`` folders; several = several seeds) on a CoNLL file or bundled tagged
    set (``xlsent eval ner`` / ``eval pos``), each as the task ``TASK:TEST`` (:func:`evaluate`): entity micro/macro
    F1 (``ner``) or accuracy (``pos``) with bootstrap CIs, per label; the mean and spread over the ``models``; with
    ``compare`` (one tagger per model, seed i against seed i) the seed-averaged difference with a paired bootstrap.

    Returns:
        The ``xlsent.tagging-eval/1`` dict the command writes (``models`` maps each folder to its scores; the typed
        scores are under ``scored``, the corpus under ``corpus``; both are dropped from the JSON).
    """
    from xlsent.data.formats.tagging import data_kind
    from xlsent.evaluation.tagging import over_seeds, paired_bootstrap_seeds
    from xlsent.evaluation.tasks import build, run_tasks
    from xlsent.models.tagger import load_tagger

    if task not in ("ner", "pos"):
        raise XlsentError(f"unknown task '{task}': use ner or pos")
    if compare and len(compare) != len(models):
        raise XlsentError(f"compare=: give one tagger per model= ({len(models)}), seed i against seed i — "
                          f"got {len(compare)}")
    declared(TASK_TYPES[task].options()["resamples"]).check(resamples, "resamples")
    if not models:
        raise XlsentError("give at least one model= (a tagger folder; several for several seeds)")
    options = {"sample": sample, "seed": seed, "resamples": resamples, "scheme": scheme, "strict": strict,
               "tag_column": tag_column, "max_length": max_length}
    loaded, = build(f"{task}:{test}", options)
    taggers = {m: load_tagger(m) for m in [*models, *compare]}  # every folder checked before the first is scored
    runs = [run_tasks([loaded], _Scorer(m, tagger=taggers[m]), on_note)[0] for m in [*models, *compare]]
    scored = [(r.model, r.results[0]) for r in runs]
    corpus = loaded.corpus  # type: ignore[attr-defined]
    base, other = scored[: len(models)], scored[len(models):]
    mean, spread = over_seeds([s.main() for _, s in base])
    paired = paired_bootstrap_seeds(task, corpus.tags, [s.predictions for _, s in base],
                                    [s.predictions for _, s in other], max(resamples, 1), seed) if compare else None
    return {"schema": "xlsent.tagging-eval/1", "task": task, "test": str(test), "labels": data_kind(test),
            "sentences": len(corpus), "models": {n: s.to_dict() for n, s in scored}, "mean": mean, "sd": spread,
            "paired": paired.to_dict() if paired else None, "scored": scored, "corpus": corpus}


#: :func:`evaluate_adversarial`'s options, each declared once (``xlsent eval adversarial``'s built from them)
ADVERSARIAL: dict[str, Option] = {
    "output": Option(..., help="folder: taggers, perturbed files + logs, adversarial.json, adversarial.png"),
    "pairs": Option([], help="L1-L2=L1_TRAIN,L2_TRAIN,L2_TEST, repeatable (default: "
                             "en-ny=silver-TASK:en:train,silver-TASK:ny:train,silver-TASK:ny:test)"),
    "seeds": Option(3, low=1, help="training seeds per condition (0..N-1)"),
    "perturbations": Option(None, help="comma-separated subset of P1,P2,P3,P4,P5,P4-random (default: all for NER, "
                                       "P4,P4-random for POS)"),
    "config": Option(None, help="tagger config YAML overriding the defaults"),
    "settings": Option([], help="tagger config override key=value, repeatable"),
    "preset": Option(None, help="tagger preset ('paper': every layer, GPU-sized; default: the measured CPU setting)"),
    "test_sample": Option(None, low=0, help="test sentences per pair (default: the config's eval.sample; 0 = all)"),
    "names": Option(None, help="given names for P1, one per line (default: the L2 training file's PER entities)"),
    "places": Option(None, help="place names for P2 (default: the L2 training file's LOC entities)"),
    "stopwords": Option(None, help="stop words for P4 (default: stopwords-iso, or frequency-derived)"),
}


@writes("output")
def evaluate_adversarial(output: str | Path, *, pairs: Sequence[str] = (), seeds: int = 3,
                         perturbations: str | None = None, config: str | Path | None = None,
                         settings: Sequence[str] = (), preset: str | None = None, test_sample: int | None = None,
                         resamples: int = 1000, names: str | Path | None = None, places: str | Path | None = None,
                         stopwords: str | Path | None = None, on_note: Note = None) -> tuple[dict, Any]:
    """Base vs P1–P5 over seeds × {native, transfer} (Manafi 2025 §3.1, ``xlsent eval adversarial``): the tagger
    config (``config``, ``settings``, ``preset``) checked and written to ``output/config.yaml``, every tagger
    trained (or reused) in ``output``, each test file perturbed and scored. ``pairs``: ``L1-L2=L1_TRAIN,L2_TRAIN,
    L2_TEST`` each (default: en-ny's silver sets of the config's task); ``perturbations``: a comma-separated subset
    of P1…P5, P4-random (default: all for NER, P4,P4-random for POS). Returns the report
    (:func:`xlsent.recipes.adversarial.run_adversarial`) and the config."""
    from xlsent.api._common import output_folder
    from xlsent.perturbations.suite import KINDS
    from xlsent.recipes.adversarial import parse_pair, read_list, read_places, run_adversarial
    from xlsent.recipes.config import dump_config, load_config
    from xlsent.utils.io import write_text_atomic

    output = output_folder(output)
    check_options(ADVERSARIAL, {"seeds": seeds})
    declared(TASK_TYPES["ner"].options()["resamples"]).check(resamples, "resamples")
    perts = [p.strip() for p in (perturbations or "").split(",") if p.strip()]
    for p in perts:
        if p not in KINDS:
            raise XlsentError(f"perturbations=: unknown {p!r}: use a comma-separated subset of {', '.join(KINDS)}")
    cfg = load_config("tagger", config, list(settings), preset or None)
    t = cfg.tagger.task
    specs = [parse_pair(p) for p in pairs] or [
        parse_pair(f"en-ny=silver-{t}:en:train,silver-{t}:ny:train,silver-{t}:ny:test")]
    perts = perts or (["P1", "P2", "P3", "P4", "P5", "P4-random"] if t == "ner" else ["P4", "P4-random"])
    if t != "ner" and any(p != "P4" and p != "P4-random" for p in perts):
        raise XlsentError("P1, P2, P3 and P5 change entities: with tagger.task=pos use perturbations=P4,P4-random")
    n = cfg.eval.sample if test_sample is None else test_sample
    check_options(ADVERSARIAL, {"test_sample": n})
    place_rows = read_places(_path(places))
    output.mkdir(parents=True, exist_ok=True)
    write_text_atomic(output / "config.yaml", dump_config(cfg))
    report = run_adversarial(cfg, specs, list(range(seeds)), perts, output, n, resamples,
                             read_list(_path(names), "given name"), place_rows, _path(stopwords), on_note)
    return report, cfg


def _path(given: str | Path | None) -> Path | None:
    return None if given is None else Path(given)


#: :func:`evaluate_title_selection`'s options (``xlsent eval titles``'s built from them)
TITLES: dict[str, Option] = {
    "model": Option(..., help="title selector folder (run folder or its model/)"),
    "test": Option(..., help="text<TAB>gold<TAB>distractor… file"),
    "train": Option(None, help="the model's training file: with it, P4 and its random control are applied to the "
                               "test texts and the word overlap is reported"),
    "lang": Option("", help="test language code for the stop words of P4"),
    "stopwords": Option(None, help="stop words for P4, one per line"),
    "embed_model": Option("e5-small", help="model that embeds words for P4"),
    "seed": Option(0, help="seed of the candidates' order, P4-random and the bootstrap"),
    "max_length": Option(128, help="pieces of section text read"),
}


def evaluate_title_selection(model: str | Path, test: str | Path, *, train: str | Path | None = None, lang: str = "",
                             stopwords: str | Path | None = None, embed_model: str = "e5-small", seed: int = 0,
                             resamples: int = 1000, max_length: int = 128, on_note: Note = None) -> Any:
    """Title-selection accuracy of a title selector (a run folder or its ``model/``) on ``test`` (text<TAB>gold<TAB>
    distractor… a line) with a bootstrap CI; with ``train`` (its training file), also under P4 and P4-random
    (stop words from ``stopwords``, a file, or ``lang``'s) and the word overlap (``xlsent eval titles``;
    :func:`xlsent.recipes.titles.evaluate_titles`)."""
    from xlsent.data.formats.multiple_choice import read_choices
    from xlsent.recipes.titles import evaluate_titles

    declared(TASK_TYPES["ner"].options()["resamples"]).check(resamples, "resamples")
    data = read_choices(test)
    tr = read_choices(train) if train is not None else None
    p = Path(model).expanduser()
    p = p / "model" if (p / "model" / "config.json").exists() else p
    sw: frozenset[str] = frozenset()
    if tr is not None:
        from xlsent.data.text.stopwords import read_stopword_file, stopwords_for

        if stopwords is not None:
            sw = read_stopword_file(str(stopwords))
        else:
            from xlsent.data.derived.projection import tokenize_words

            if not lang:
                raise XlsentError("give lang=CODE (for the stop words of P4) or stopwords=FILE")
            sw, n = stopwords_for(lang, [tokenize_words(t) for t in data.texts])
            (on_note or (lambda line: None))(n)
    return evaluate_titles(p, data, str(test), tr, sw, embed_model, seed, resamples, max_length)


#: :func:`perturb_file`'s options, each declared once (``xlsent perturb``'s built from them)
PERTURB: dict[str, Option] = {
    "test": Option(..., help="BIO test file (or bundled set, e.g. silver-ner:ny:test)"),
    "train": Option(..., help="the tagger's training file (read, never changed)"),
    "output": Option(..., help="perturbed CoNLL file; the log goes to OUTPUT.json"),
    "perturbation": Option(..., help="which perturbation"),
    "target_train": Option(None, help="the test language's own training file (default name/place lists come from its "
                                      "entities; default: --train)"),
    "names": Option(None, help="given names for P1, one per line"),
    "places": Option(None, help="place names for P2, one per line"),
    "stopwords": Option(None, help="P4, P5, P4-random: stop words, one per line (default: stopwords-iso, or "
                                   "frequency-derived where it lacks the language)"),
    "lang": Option("", help="P4, P5, P4-random: the test language's code, for the stop words (default: from a "
                            "bundled set's name)"),
    "model": Option("e5-small", help="model that embeds words for P4/P5"),
    "seed": Option(0, help="seed of every random choice"),
    "sample": Option(0, help="perturb a seeded sample of N test sentences (0 = all)"),
    "strict": Option(False, help="an I- tag after O is an error instead of a repair"),
}


@writes("output")
def perturb_file(test: str, train: str, output: str | Path, perturbation: str, *, target_train: str | None = None,
                 names: str | Path | None = None, places: str | Path | None = None,
                 stopwords: str | Path | None = None, lang: str = "", model: str = "e5-small", seed: int = 0,
                 sample: int = 0, strict: bool = False, on_note: Note = None) -> tuple[Any, Path]:
    """A perturbed copy of a BIO test file (Manafi 2025 §3.1.2, ``xlsent perturb``): P1 given names, P2 places, P3
    shared entities → test-only ones, P4 shared context words → the most similar test-only word (by ``model``), P5
    = P3 + P4, P4-random = random substitutes; written to ``output`` with a JSON log of every replacement
    (``OUTPUT.json``). What reading the files and perturbing reported is said to ``on_note``. Returns the
    perturbation's result (:func:`xlsent.perturbations.suite.perturb`) and the log's path."""
    from xlsent.perturbations.suite import perturb, write_perturbed
    from xlsent.recipes.adversarial import load_inputs

    note = on_note or (lambda line: None)
    output_file(output)
    context = perturbation.startswith(("P4", "P5"))  # the ones that replace context words, which skip stop words
    if not context and (stopwords is not None or lang):
        raise XlsentError(f"stopwords= and lang= apply to P4, P5 and P4-random (context words); {perturbation} "
                          "replaces entities only — leave them out")
    inp = load_inputs(test, train, target_train, lang, _path(names), _path(places), _path(stopwords), model, strict,
                      sample, seed, need_stopwords=context)
    for c in (inp.test, inp.train, inp.target_train):
        for n in (c.notes if c else []):
            note(n)
    if perturbation in ("P4", "P5"):
        from xlsent.models.registry import resolve_model_path

        resolve_model_path(model)
    out = perturb(perturbation, inp, seed)
    log = write_perturbed(out, Path(output), inp, seed)
    for n in out.notes:
        note(n)
    return out, log
