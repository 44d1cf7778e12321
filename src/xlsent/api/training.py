"""Training: :func:`train` runs any recipe (what ``xlsent train RECIPE`` runs), :func:`adapt` the best one for a
user's own pairs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from xlsent.api._common import Note, output_folder
from xlsent.recipes.registry import RunResult  # what every recipe's train_* returns, completed here
from xlsent.utils.errors import XlsentError


def settings_to_overrides(settings: dict[str, Any] | None) -> list[str]:
    """A dict of dotted config keys (``{"optim.epochs": 1}``) as ``--set`` overrides (``optim.epochs=1``)."""
    out = []
    for key, value in (settings or {}).items():
        if not isinstance(key, str) or not key:
            raise XlsentError(f"settings: keys are dotted config keys such as 'optim.epochs', not {key!r}")
        out.append(f"{key}={value if isinstance(value, (str, Path)) else json.dumps(value)}")
    return out


def recipe_config(recipe: str, data: str | Path | None = None, *, settings: dict[str, Any] | list[str] | None = None,
                  config: str | Path | None = None, preset: str | None = None, device: str | None = None):
    """The merged, validated config of a recipe run (every value checked before any model loads): the recipe's
    defaults, ``preset``, the ``config`` file, then ``settings`` (a dict of dotted keys, or ``--set`` strings),
    with ``data`` as the recipe's training data (``train.pairs``; ``train.spans`` for scp; ``train.data`` for the
    tagger and title selection) and ``device`` as ``models.device``."""
    from xlsent.recipes.config import load_config
    from xlsent.recipes.registry import REGISTRY

    if recipe not in REGISTRY:
        raise XlsentError(f"unknown recipe '{recipe}': use one of {', '.join(REGISTRY)}")
    sets = list(settings) if isinstance(settings, list) else settings_to_overrides(settings)
    if data is not None:
        key = REGISTRY[recipe].data_key
        if any(s.split("=", 1)[0].strip() == key for s in sets):
            raise XlsentError(f"the training data is given twice: as the argument ({data}) and as {key} — give it once")
        sets = [f"{key}={data}", *sets]
    if device:
        sets.append(f"models.device={device}")
    return load_config(recipe, config, sets, preset)


def run_recipe(recipe: str, cfg, output: str | Path, *, evaluate: bool = True, on_note: Note = None) -> RunResult:
    """Train ``recipe`` with a config from :func:`recipe_config` into ``output``; write ``metrics.json`` and the
    model card. Under torchrun every process trains and only the main one evaluates (the others return
    ``metrics=None``)."""
    from xlsent.recipes.registry import REGISTRY
    from xlsent.report.model_card import write_model_card
    from xlsent.training.processes import is_main_process
    from xlsent.utils.io import write_json_atomic

    spec = REGISTRY[recipe]
    output = Path(output)
    result = replace(spec.train_fn()(cfg, output, on_note), recipe=recipe)
    if not is_main_process():  # under torchrun / accelerate launch: the main process evaluates and reports
        return result
    report = spec.evaluate_fn()(cfg, result, output, on_note, not evaluate)
    metrics = None
    if report.metrics is not None:
        report.metrics.recipe = spec.name
        metrics = report.metrics.to_dict()
        write_json_atomic(output / "metrics.json", metrics)  # schema xlsent.metrics/2
    elif (output / "metrics.json").exists():
        (output / "metrics.json").unlink()  # an earlier run's figures must not sit beside this model
    card = write_model_card(spec, output, report.model, metrics)
    return replace(result, model_path=Path(report.model), metrics=metrics, model_card=card, sizes=report.sizes,
                   title=report.title, usage=report.usage, held_out=report.metrics)


def train(recipe: str, *positional: str | Path, output: str | Path | None = None, data: str | Path | None = None,
          settings: dict[str, Any] | None = None, config: str | Path | None = None, preset: str | None = None,
          device: str = "auto", evaluate: bool = True, on_note: Note = None) -> RunResult:
    """Train a model with one of the recipes: ``train(recipe, data, output=DIR)``, in the order of
    ``xlsent train RECIPE DATA -o DIR`` and of :func:`adapt` (the last release's ``train(recipe, output, data)``
    still works, with a ``DeprecationWarning``, until xlsent 0.3).

    Recipes: ``adapt`` (the best model for your own pairs), ``siamese``, ``xkd``, ``triplet-kd``, ``gloss``,
    ``lightweight``, ``multistage``, ``scp``, ``tagger``, ``titles`` — the guide to each is on the docs site.

    Args:
        recipe: the recipe's name.
        positional: ``data`` (the one positional argument after the recipe).
        output: the run folder (``model/``, ``config.yaml``, ``metrics.json``, logs). A rerun with the same config
            resumes from its last checkpoint; a finished stage is skipped.
        data: what the recipe trains on: a pairs file (TSV ``src<TAB>tgt``, JSONL, Moses ``A,B``) or a bundled
            dataset name, or several of them comma-separated (``train.pairs``; scp: ``train.spans``; tagger,
            titles: ``train.data``). Default: the recipe's own (bundled) data.
        settings: config overrides as dotted keys, e.g. ``{"optim.epochs": 1, "train.sample": 500}`` (what
            ``--set`` takes); every value is checked before any model loads.
        config: a YAML file overriding the recipe's defaults; ``preset``: a shipped preset (``paper``, ``small`` …).
        device: where it trains (``models.device``): ``auto`` (the config's ``models.device``, itself ``auto``
            unless a config says otherwise) | ``cpu`` | ``cuda`` | ``cuda:N`` | ``mps``.
        evaluate: run the held-out evaluation after training.
        on_note: called with each line the recipe reports (data read, progress of stages).

    Returns:
        A :class:`RunResult`: ``model_path`` (loads with ``SentenceTransformer``), ``metrics`` (the
        ``xlsent.metrics/2`` dict also written as ``metrics.json``) and ``model_card``.

    Example:
        >>> import contextlib, io, tempfile, xlsent
        >>> with contextlib.redirect_stdout(io.StringIO()):  # the trainer prints its log
        ...     run = xlsent.train("adapt", "bible-en-ny:dev", output=tempfile.mkdtemp(),
        ...                        settings={"train.sample": 200, "optim.max_steps": 4, "optim.batch_size": 8,
        ...                                  "eval.udhr": False})
        >>> run.model_path.name, "retrieval" in run.metrics["models"]["adapted"]
        ('model', True)
    """
    if output is None:  # the last release's order, train(recipe, output[, data])
        if not positional:
            raise XlsentError("output=: give the run folder — xlsent.train(recipe, data, output=DIR)")
        import warnings

        warnings.warn("xlsent.train(recipe, output, data) is now xlsent.train(recipe, data, output=DIR), the order of "
                      "the command line (the old order goes in xlsent 0.3)", DeprecationWarning, stacklevel=2)
        output, positional = positional[0], positional[1:]
    if len(positional) > 1 or (positional and data is not None):
        raise XlsentError("train: give the data once — xlsent.train(recipe, data, output=DIR)")
    data = positional[0] if positional else data
    output = output_folder(Path(output))
    cfg = recipe_config(recipe, data, settings=settings, config=config, preset=preset,
                        device=None if device == "auto" else device)
    return run_recipe(recipe, cfg, output, evaluate=evaluate, on_note=on_note)


def adapt(pairs: str | Path, output: str | Path, *, model: str = "e5-small", device: str = "auto",
          settings: dict[str, Any] | None = None, evaluate: bool = True, on_note: Note = None) -> RunResult:
    """Adapt a model to your own translated pairs: the best model for your language (``xlsent train adapt``).

    In-batch ranking both ways (sentence-transformers' ``MultipleNegativesRankingLoss``) plus self-distillation of
    both sides to the frozen base model's English vector, the token table frozen; 10% of the pairs (at least 100)
    are held out to choose the step and to report. The defaults were chosen on development data (the results page,
    "adapt").

    Args:
        pairs: a pairs file (TSV ``src<TAB>tgt`` with an optional header of language codes, JSONL with ``src``,
            ``tgt``, ``src_lang``, ``tgt_lang``, or Moses ``A,B``) or a bundled dataset name.
        output: the run folder; a rerun resumes.
        model: the model to adapt: a registered name or a local sentence-transformers folder.
        device: where it trains: ``auto`` (the config's ``models.device``, itself ``auto``) | ``cpu`` | ``cuda`` |
            ``cuda:N`` | ``mps``.
        settings: config overrides as dotted keys; a file's pairs are used whole (``{"train.sample_files": 500}``
            draws 500 of them; ``train.sample`` draws from bundled sets only).
        evaluate: report the held-out figures after training.
        on_note: called with each line the recipe reports.

    Returns:
        A :class:`RunResult` with ``model_path`` and ``metrics``.

    Example:
        >>> import contextlib, io, tempfile, xlsent
        >>> with contextlib.redirect_stdout(io.StringIO()):  # the trainer prints its log
        ...     run = xlsent.adapt("bible-en-ny:dev", tempfile.mkdtemp(),
        ...                        settings={"train.sample": 200, "optim.max_steps": 4, "optim.batch_size": 8,
        ...                                  "eval.udhr": False})
        >>> from sentence_transformers import SentenceTransformer
        >>> SentenceTransformer(str(run.model_path)).get_embedding_dimension()
        384
    """
    return train("adapt", pairs, output=output, settings={"models.student": str(model), **(settings or {})},
                 device=device, evaluate=evaluate, on_note=on_note)
