"""The recipes, by name: what ``xlsent train <name>`` runs, with which config, presets and held-out report.

Each :class:`Recipe` names its training function and its evaluation hook by dotted path, so the
registry (and ``xlsent train --help``) loads no torch; the CLI builds one command per entry
(:mod:`xlsent.cli.train`). A recipe is two files: its module and ``configs/<name>.yaml``, whose ``recipe:``
section is this registry's entry (help line, paper, training function and evaluation hook by dotted path, its
place in the list, the key ``DATA`` sets) and whose other sections are the defaults; presets are ``configs/<name>.<preset>.yaml``.

A training function is ``train(cfg, output, on_note=None, progress=True) -> RunResult`` (every recipe's
``train_*`` returns a :class:`RunResult`); an evaluation hook is ``evaluate(cfg, result, output, on_note=None,
no_eval=False) -> Report`` (data only: recipes never print; ``on_note(text)`` hands what they report to the CLI,
which shows it). :class:`Report` carries the trained model's folder, the metrics to save as ``metrics.json`` and,
for recipes that have one, a size report; :func:`xlsent.train` adds them to the :class:`RunResult`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from xlsent.recipes.config import presets


@dataclass
class RunResult:
    """A run of a recipe: what every ``train_*`` returns (the run folder, the trained model's folder and what the
    recipe knows of its training) and, from :func:`xlsent.train`, also the held-out metrics and the model card."""

    output: Path  # the run folder: model/, config.yaml, metrics.json, logs
    model_path: Path  # loads with SentenceTransformer(model_path) (a tagger's: a token-classification folder)
    metrics: dict | None = None  # the xlsent.metrics/2 dict written as metrics.json; None without evaluation
    recipe: str = ""
    model_card: Path | None = None
    sizes: dict | None = None  # multistage: parameters of the assistant and the student
    title: str = ""  # what the held-out report compares
    usage: str = ""  # how to use the model, when it needs more than SentenceTransformer(path)
    held_out: Any = None  # the typed metrics (xlsent.evaluation.suite.HeldOut)
    stages: dict[str, Path] = field(default_factory=dict)  # multistage: each stage's model folder
    labels: list[str] = field(default_factory=list)  # tagger: the label set
    examples: int = 0  # tagger: training sentences
    seconds: float = 0.0  # tagger: training time
    notes: list[str] = field(default_factory=list)  # what the reader and the filters said of the training data
    log: list[dict] = field(default_factory=list)  # siamese: the loss at each logged step
    trained: Any = None  # siamese: the head over the feature cache (encode, encoder), without reloading the model

    def to_dict(self) -> dict:
        """Where the run is and what it measured: the JSON of ``xlsent train``'s summary."""
        return {"recipe": self.recipe, "output": str(self.output), "model_path": str(self.model_path),
                "model_card": str(self.model_card) if self.model_card else None, "metrics": self.metrics,
                "sizes": self.sizes, "stages": {k: str(v) for k, v in self.stages.items()}, "notes": self.notes}


@dataclass
class Report:
    """What a run produced: the model folder, held-out metrics (None with --no-eval) and extras."""

    model: Path
    metrics: Any = None  # an xlsent.evaluation.suite.HeldOut
    sizes: dict | None = None
    title: str = ""
    usage: str = ""  # a line on how to use the model, when it needs more than SentenceTransformer(path)


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
