"""A task's result (:class:`TaskRun`): its main score, one score row per subset, the typed results of the evaluation
it wraps, and the same in MTEB's format (:meth:`TaskRun.to_mteb`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from xlsent.evaluation.tasks.declaration import TaskDeclaration


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
