"""The recipes, by name: what ``xlsent train <name>`` runs, with which config, presets and held-out report.

Each :class:`Recipe` names its training function and its evaluation hook by dotted path, so the
registry (and ``xlsent train --help``) loads no torch; the CLI builds one command per entry
(:mod:`xlsent.cli.train`). A recipe is two files: its module and ``configs/<name>.yaml``, whose ``recipe:``
section is this registry's entry (help line, paper, training function and evaluation hook by dotted path, its
place in the list, the key ``DATA`` sets) and whose other sections are the defaults; presets are ``configs/<name>.<preset>.yaml``.

A training function is ``train(cfg, output, on_note=None, progress=True) -> RunResult`` (every recipe's
``train_*`` returns a :class:`RunResult`); an evaluation hook is ``evaluate(cfg, result, output, on_note=None,
no_eval=False) -> Report`` (data only: recipes never print; ``on_note(text)`` hands what they report to the CLI,
which shows it). :class:`Report` carries the trained model's folder, the metrics to save as ``metrics.json`` and
the recipe's own figures (``details``: multistage's size report); :func:`xlsent.train` adds them to the
:class:`RunResult`, whose fields are every recipe's and whose ``details`` hold what only one recipe has.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Generic, TypeVar, overload

from xlsent.recipes.config import presets

T = TypeVar("T")


class _Detail(Generic[T]):
    """A recipe's own figure under the attribute name it always had: ``result.sizes`` reads and sets
    ``result.details["sizes"]`` (absent: ``default()``; an empty container is kept there, so
    ``result.stages[name] = path`` stays, a plain value is not: reading never changes what a result holds)."""

    def __init__(self, default: Callable[[], T]) -> None:
        self.default = default
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _Detail[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        if self.name in obj.details:
            return obj.details[self.name]
        value = self.default()
        return obj.details.setdefault(self.name, value) if isinstance(value, (dict, list)) else value

    def __set__(self, obj: Any, value: T) -> None:
        obj.details[self.name] = value


@dataclass(init=False)
class RunResult:
    """A run of a recipe: what every ``train_*`` returns (the run folder, the trained model's folder and what the
    recipe knows of its training) and, from :func:`xlsent.train`, also the held-out metrics and the model card.

    The fields are every recipe's; what only one recipe has is in ``details``, by name, and reads (and sets) as an
    attribute too: ``sizes`` and ``stages`` (multistage: the assistant's and the student's parameters, each stage's
    model folder), ``labels``, ``examples`` and ``seconds`` (tagger: the label set, the training sentences, the
    training time), ``log`` and ``trained`` (siamese: the loss at each logged step; the head over the feature cache,
    which encodes without reloading the model). ``RunResult(output, model_path, sizes=…)`` still builds one: a
    keyword that is not a field is a detail."""

    output: Path  # the run folder: model/, config.yaml, metrics.json, logs
    model_path: Path  # loads with SentenceTransformer(model_path) (a tagger's: a token-classification folder)
    metrics: dict | None = None  # the xlsent.metrics/2 dict written as metrics.json; None without evaluation
    recipe: str = ""
    model_card: Path | None = None
    title: str = ""  # what the held-out report compares
    usage: str = ""  # how to use the model, when it needs more than SentenceTransformer(path)
    held_out: Any = None  # the typed metrics (xlsent.evaluation.suite.HeldOut)
    notes: list[str] = field(default_factory=list)  # what the reader and the filters said of the training data
    details: dict[str, Any] = field(default_factory=dict)  # the recipe's own figures, by name

    def __init__(self, output: Path, model_path: Path, metrics: dict | None = None, recipe: str = "",
                 model_card: Path | None = None, *, title: str = "", usage: str = "", held_out: Any = None,
                 notes: list[str] | None = None, details: dict[str, Any] | None = None, **figures: Any) -> None:
        self.output, self.model_path, self.metrics, self.recipe = output, model_path, metrics, recipe
        self.model_card, self.title, self.usage, self.held_out = model_card, title, usage, held_out
        self.notes = [] if notes is None else notes
        self.details = {**(details or {}), **figures}

    sizes = _Detail[dict | None](lambda: None)
    stages = _Detail[dict[str, Path]](dict)
    labels = _Detail[list[str]](list)
    examples = _Detail[int](int)
    seconds = _Detail[float](float)
    log = _Detail[list[dict]](list)
    trained = _Detail[Any](lambda: None)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and _state(self) == _state(other)

    def to_dict(self) -> dict:
        """Where the run is and what it measured: the JSON of ``xlsent train``'s summary."""
        return {"recipe": self.recipe, "output": str(self.output), "model_path": str(self.model_path),
                "model_card": str(self.model_card) if self.model_card else None, "metrics": self.metrics,
                "sizes": self.sizes, "stages": {k: str(v) for k, v in self.stages.items()}, "notes": self.notes}


@dataclass(init=False)
class Report:
    """What a run produced: the model folder, held-out metrics (None with --no-eval) and extras — the recipe's own
    figures in ``details`` (multistage: ``sizes``, which reads as an attribute too), which join the run's."""

    model: Path
    metrics: Any = None  # an xlsent.evaluation.suite.HeldOut
    title: str = ""
    usage: str = ""  # a line on how to use the model, when it needs more than SentenceTransformer(path)
    details: dict[str, Any] = field(default_factory=dict)

    def __init__(self, model: Path, metrics: Any = None, *, title: str = "", usage: str = "",
                 details: dict[str, Any] | None = None, **figures: Any) -> None:
        self.model, self.metrics, self.title, self.usage = model, metrics, title, usage
        self.details = {**(details or {}), **figures}

    sizes = _Detail[dict | None](lambda: None)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and _state(self) == _state(other)


def _state(result: Any) -> tuple:
    """What a result holds, for equality: its fields and its details, an absent figure as its default (so that a
    figure once read, and kept as an empty container, does not make two equal results differ)."""
    cls = type(result)
    defaults = {k: v.default() for k, v in vars(cls).items() if isinstance(v, _Detail)}
    fields = {k: v for k, v in vars(result).items() if k != "details"}
    return fields, {**defaults, **result.details}


@dataclass(frozen=True)
class Recipe:
    name: str
    help: str
    paper: str
    train: str  # "module:function"
    evaluate: str  # "module:function"
    data_key: str = "train.pairs"  # the config key ``xlsent train RECIPE DATA`` sets: what the recipe trains on

    @staticmethod
    def _load(dotted: str) -> Callable[..., Any]:
        module, _, fn = dotted.partition(":")
        return getattr(importlib.import_module(module), fn)

    def train_fn(self) -> Callable[..., Any]:
        fn = self._load(self.train)

        def train(cfg, output, on_note=None, *args, **kwargs):
            from xlsent.training.processes import is_main_process

            place(cfg)
            # under torchrun / accelerate launch every process trains; the main one reports
            return fn(cfg, output, on_note if is_main_process() else None, *args, **kwargs)

        return train

    def evaluate_fn(self) -> Callable[..., Report]:
        return self._load(self.evaluate)

    def declared(self, name: str, default: Any = None) -> Any:
        """What the recipe's module declares (``OUTPUT``, ``CARD_NOTE``…), or ``default``."""
        return getattr(importlib.import_module(self.train.partition(":")[0]), name, default)

    @property
    def output(self) -> str:
        """What the trained model gives: ``embedding`` (a sentence-transformers folder, the default), ``tagger``
        (token classification) or ``choice`` (multiple choice) — the module's ``OUTPUT``."""
        return self.declared("OUTPUT", "embedding")

    @property
    def presets(self) -> list[str]:
        return presets(self.name)


def place(cfg) -> str:
    """Make ``models.device`` the process's device before anything loads (a device that is not there, or a
    precision it lacks, is one error line). Every recipe trains on any device."""
    from xlsent.utils.device import resolve_device, training_precision, use_device

    device = resolve_device(str(cfg.models.get("device", "auto") or "auto"), "models.device")
    spec = str(cfg.optim.get("precision", "auto"))
    if spec != "auto":  # fp16 on the CPU: one line, now (auto is decided once the model is loaded)
        training_precision(spec, device)
    return use_device(device, "models.device")


def _declared_recipes() -> dict[str, Recipe]:
    """Every ``configs/<name>.yaml`` with a ``recipe:`` section, in its ``order``: a recipe is its module and that
    file, nothing to register elsewhere."""
    from importlib import resources

    from xlsent.recipes.config import _yaml

    found = []
    for f in resources.files("xlsent").joinpath("configs").iterdir():
        name = f.name.removesuffix(".yaml")
        if f.name.endswith(".yaml") and "." not in name:
            entry = (_yaml(f.read_text(encoding="utf-8")) or {}).get("recipe")
            if entry:
                found.append((entry.get("order", 99), name, entry))
    return {name: Recipe(name, e["help"], e["paper"], e["train"], e["evaluate"], e.get("data_key", "train.pairs"))
            for _, name, e in sorted(found)}


REGISTRY: dict[str, Recipe] = _declared_recipes()
