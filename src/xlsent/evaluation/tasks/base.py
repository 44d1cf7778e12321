"""What every task type shares: the :class:`Scorer` a task is called with, the :class:`TaskType` base class (its
class attributes, its options, ``load``, ``run`` and ``finish``, which makes the :class:`TaskRun`) and the helpers
of MTEB's rows (a language tag read from the texts, one score row)."""

from __future__ import annotations

import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Mapping, Protocol, Sequence

import numpy as np

from xlsent.evaluation.tasks.declaration import TaskDeclaration
from xlsent.evaluation.tasks.options import _check_option
from xlsent.evaluation.tasks.result import TaskRun
from xlsent.utils.errors import XlsentError


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


def _lang_tag(code: str, texts: Sequence[str]) -> str:
    """``eng-Latn``: MTEB's language tag, the script read from the texts."""
    from xlsent.data.langid.scripts import detect_script

    return f"{code or 'und'}-{detect_script(' '.join(texts[:50])) if len(texts) else 'Zyyy'}"


def _tags(decl: TaskDeclaration, texts: list[list[str]]) -> list[str]:
    """MTEB language tags of the codes a declaration names (``"eng, nya"``), each with the script of its texts."""
    codes = [c.strip() for c in decl.languages.split(",") if len(c.strip()) == 3 and c.strip().isalpha()] or ["und"]
    return [_lang_tag(c, texts[min(i, len(texts) - 1)] if texts else []) for i, c in enumerate(codes)]


def _row(subset: str, languages: list[str], figures: dict, xlsent: Any, mteb_main: str) -> dict:
    return {"hf_subset": subset, "languages": languages, "main_score": float(figures[mteb_main]), **figures,
            "xlsent": xlsent}


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
