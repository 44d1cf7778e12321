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

One module a part (as MTEB: a task type a file, declarations as data): :mod:`~xlsent.evaluation.tasks.declaration`
(:class:`TaskDeclaration`), :mod:`~xlsent.evaluation.tasks.result` (:class:`TaskRun`),
:mod:`~xlsent.evaluation.tasks.options` (:func:`option` and the options several types share),
:mod:`~xlsent.evaluation.tasks.base` (:class:`Scorer`, :class:`TaskType`), one module a task type (``retrieval``,
``documents``, ``sts``, ``mining``, ``triplet``, ``mse``, ``classification``, ``alignment``, ``spans``, and
``tagging`` for ``ner`` / ``pos``), :mod:`~xlsent.evaluation.tasks.registry` (:data:`TASK_TYPES`, :func:`declare`,
:func:`names`, :data:`SUITES`), :mod:`~xlsent.evaluation.tasks.runner` (:func:`build`, :func:`run_tasks`) and
:mod:`~xlsent.evaluation.tasks.mteb_bridge` (:func:`mteb_tasks`). Every name is imported from here.
"""

from __future__ import annotations

from xlsent.evaluation.tasks.alignment import AlignmentTask
from xlsent.evaluation.tasks.base import Scorer, TaskType, _lang_tag, _row, _tags
from xlsent.evaluation.tasks.classification import ClassificationTask
from xlsent.evaluation.tasks.declaration import TaskDeclaration
from xlsent.evaluation.tasks.documents import DocumentsTask
from xlsent.evaluation.tasks.mining import MiningTask
from xlsent.evaluation.tasks.mse import MseTask
from xlsent.evaluation.tasks.mteb_bridge import mteb_tasks
from xlsent.evaluation.tasks.options import (ON_BAD_LINES, _chunk_words, _data, _on_bad_lines, _resamples, _sample,
                                             _seed, option)
from xlsent.evaluation.tasks.registry import SUITES, TASK_TYPES, TYPES, declare, expand, names
from xlsent.evaluation.tasks.result import TaskRun
from xlsent.evaluation.tasks.retrieval import RetrievalTask, bitext_f1
from xlsent.evaluation.tasks.runner import build, run_tasks
from xlsent.evaluation.tasks.spans import SpansTask
from xlsent.evaluation.tasks.sts import StsTask
from xlsent.evaluation.tasks.tagging import NerTask, PosTask
from xlsent.evaluation.tasks.triplet import TripletTask

__all__ = [
    # the declaration, the result, what a task is called with, the base of the types
    "TaskDeclaration", "TaskRun", "Scorer", "TaskType",
    # the option system (``_data`` and the makers of shared options: for a new type's fields)
    "ON_BAD_LINES", "option", "_seed", "_resamples", "_sample", "_chunk_words", "_on_bad_lines", "_data",
    # the task types
    "RetrievalTask", "DocumentsTask", "StsTask", "MiningTask", "TripletTask", "MseTask", "ClassificationTask",
    "AlignmentTask", "SpansTask", "NerTask", "PosTask",
    # the helpers of MTEB's rows a type uses
    "bitext_f1", "_lang_tag", "_tags", "_row",
    # the named tasks, the runner, MTEB itself
    "TASK_TYPES", "TYPES", "SUITES", "declare", "names", "expand", "build", "run_tasks", "mteb_tasks",
]
