"""The one runner: :func:`build` makes the tasks of the names given with their options checked and their data read
(before any model loads), :func:`run_tasks` runs them with a :class:`Scorer` and writes each result in MTEB's
format."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from xlsent.evaluation.tasks.base import Scorer, TaskType
from xlsent.evaluation.tasks.registry import TASK_TYPES, declare
from xlsent.evaluation.tasks.result import TaskRun
from xlsent.utils.errors import XlsentError


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
