"""The named tasks, as data: every task type by its ``type`` (:data:`TASK_TYPES`, :data:`TYPES`), the declaration
of a name ``TYPE:DATASET`` (:func:`declare`), every named task over the bundled data (:func:`names`), and the
suites (:data:`SUITES`, :func:`expand`)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from xlsent.evaluation.tasks.alignment import AlignmentTask
from xlsent.evaluation.tasks.base import TaskType
from xlsent.evaluation.tasks.classification import ClassificationTask
from xlsent.evaluation.tasks.declaration import TaskDeclaration
from xlsent.evaluation.tasks.documents import DocumentsTask
from xlsent.evaluation.tasks.mining import MiningTask
from xlsent.evaluation.tasks.mse import MseTask
from xlsent.evaluation.tasks.retrieval import RetrievalTask
from xlsent.evaluation.tasks.spans import SpansTask
from xlsent.evaluation.tasks.sts import StsTask
from xlsent.evaluation.tasks.tagging import NerTask, PosTask
from xlsent.evaluation.tasks.triplet import TripletTask
from xlsent.utils.errors import XlsentError


#: every task type by its ``type``
TASK_TYPES: dict[str, type[TaskType]] = {c.type: c for c in (
    RetrievalTask, StsTask, MiningTask, TripletTask, MseTask, ClassificationTask, DocumentsTask, AlignmentTask,
    SpansTask, NerTask, PosTask)}

#: type → (main score, what it measures, the MTEB task type that runs it in MTEB itself, or "")
TYPES: dict[str, tuple[str, str, str]] = {t: (c.main_score, c.measures, c.mteb_type) for t, c in TASK_TYPES.items()}


def declare(name: str) -> TaskDeclaration:
    """The declaration of ``TYPE:DATASET`` — a bundled set of the kind the type reads, or the user's files in the
    type's form — or an error naming the fix."""
    from xlsent.data.sets.registry import entries, find

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
    from xlsent.data.sets.registry import entries

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
