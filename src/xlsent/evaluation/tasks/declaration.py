"""A task's declaration (:class:`TaskDeclaration`): what the task is, as data — its name, type, dataset, languages,
splits, main score, licence and citation, enough to list it, cite it and read its result without running it."""

from __future__ import annotations

from dataclasses import dataclass


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
