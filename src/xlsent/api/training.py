"""Training: :func:`train` runs any recipe (what ``xlsent train RECIPE`` runs), :func:`adapt` the best one for a
user's own pairs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from xlsent.api._common import Note, output_folder, writes
from xlsent.recipes.curve import CurveResult  # what learning_curve returns
from xlsent.recipes.registry import RunResult  # what every recipe's train_* returns, completed here
from xlsent.utils.errors import XlsentError
from xlsent.utils.options import Option

#: :func:`learning_curve`'s options, each declared once (``xlsent train curve``'s built from them)
CURVE: dict[str, Option] = {
    "output": Option(..., help="folder: curve.json, curve.png, holdout.jsonl, a run folder a share"),
    "model": Option("e5-small", help="the model to adapt (registered name or folder)"),
    "shares": Option(4, help="nested shares, halving from all the pairs (4: ⅛, ¼, ½, all)"),
    "budget_minutes": Option(60.0, help="time all the shares may take; a share that would pass it is skipped and said"),
    "held_out": Option("", help="score every share on these pairs (a file or bundled pool, eval.sample of them) "
                                "instead of a part of yours; all of yours train"),
    "keep_models": Option(False, help="keep every share's model (default: the largest only)"),
}


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


@writes("output")
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
    if evaluate and on_note is not None and is_main_process():
        chose = cfg.eval.get("pairs") == "holdout"  # adapt: the held-out part of the training file
        on_note("held-out evaluation after training (" + (
            "the held-out pairs also choose the step; the UDHR is reported only" if chose
            else "reported only; never used to pick a checkpoint") + ")")
    result = replace(spec.train_fn()(cfg, output, on_note), recipe=recipe)
    if not is_main_process():  # under torchrun / accelerate launch: the main process evaluates and reports
        return result
    from xlsent.utils.memory import trim_heap

    trim_heap()  # the trainer's freed memory goes back before the models to score are loaded
    report = spec.evaluate_fn()(cfg, result, output, on_note, not evaluate)
    metrics = None
    if report.metrics is not None:
        report.metrics.recipe = spec.name
        metrics = report.metrics.to_dict()
        write_json_atomic(output / "metrics.json", metrics)  # schema xlsent.metrics/2
    elif (output / "metrics.json").exists():
        (output / "metrics.json").unlink()  # an earlier run's figures must not sit beside this model
    card = write_model_card(spec, output, report.model, metrics)
    return replace(result, model_path=Path(report.model), metrics=metrics, model_card=card,
                   title=report.title, usage=report.usage, held_out=report.metrics,
                   details={**result.details, **report.details})


def train(recipe: str, *positional: str | Path, output: str | Path | None = None, data: str | Path | None = None,
          settings: dict[str, Any] | list[str] | None = None, config: str | Path | None = None, preset: str | None = None,
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
        ...                        settings={"train.sample": 100, "optim.max_steps": 2, "optim.batch_size": 8,
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
    both sides to the frozen base model's English vector, the token table frozen, dropout off; 10% of the pairs (at
    least 100) are held out to choose the step and to report. The defaults were chosen on development data (the
    results page, "adapt").

    What it trains on: every pair of your file, after cleaning (``train.sample_files`` draws a sample of them,
    ``train.sample`` one of each bundled set). What it costs: one note before the first step gives the pairs, the
    steps, the time on this device and the peak memory, timed on two of the run's own batches (``stage.json``
    keeps it as ``estimate``); one epoch, a step per 32 pairs. :func:`learning_curve` tells what more pairs would
    add.

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
        ...     run = xlsent.adapt("bible-en-ny:dev", tempfile.mkdtemp(), evaluate=False,
        ...                        settings={"train.sample": 100, "optim.max_steps": 2, "optim.batch_size": 8})
        >>> from sentence_transformers import SentenceTransformer
        >>> SentenceTransformer(str(run.model_path)).get_embedding_dimension()
        384
    """
    return train("adapt", pairs, output=output, settings={"models.student": str(model), **(settings or {})},
                 device=device, evaluate=evaluate, on_note=on_note)


@writes("output")
def learning_curve(pairs: str | Path, output: str | Path, *, model: str = "e5-small", shares: int = 4,
                   budget_minutes: float = 60.0, device: str = "auto",
                   settings: dict[str, Any] | list[str] | None = None, held_out: str | Path | None = None,
                   keep_models: bool = False, on_note: Note = None) -> CurveResult:
    """How many pairs do I need? ``adapt`` trained on nested shares of your pairs (⅛, ¼, ½, all with
    ``shares=4``), each scored on the same held-out pairs; P@1 against pairs is fitted with a power law and the
    gain of twice the pairs forecast with a 90% interval (``xlsent train curve``).

    The held-out pairs (``train.holdout`` of the cleaned pairs, 10%, at least ``train.holdout_min``) are set aside
    once, before anything trains — or, with ``held_out``, every share is scored on pairs from elsewhere (a file or a
    bundled pool, ``eval.sample`` of them drawn) and all of your pairs train: held-out text of your own file
    forecasts your file's kind of text, text from elsewhere usually gains less and later. Each share is a prefix of one seeded shuffle of the rest, so every share holds the
    smaller ones. A share trains as ``adapt`` does with its defaults and keeps its last step (nothing of the share is
    held out: the common held-out pairs only score). Shares run smallest first; one whose time, scaled from the
    last one's by its pairs, would pass ``budget_minutes`` is skipped and said. The fit, its uncertainty and where
    it misleads: :mod:`xlsent.evaluation.curve`.

    Args:
        pairs: your pairs (as :func:`adapt`).
        output: the folder: ``curve.json``, ``curve.png``, ``holdout.jsonl`` and a run folder a share; a rerun
            reuses the shares already scored.
        model: the model to adapt.
        shares: how many nested shares (halving from all of the pairs: 4 = ⅛, ¼, ½, all).
        budget_minutes: the time all the shares may take, training and scoring.
        device: as :func:`adapt`.
        settings: adapt's config overrides (dotted keys, or ``--set`` strings).
        held_out: score on these pairs (a file or bundled pool) instead of a part of yours.
        keep_models: keep each share's model folder (by default only the largest is kept).
        on_note: called with each line.

    Returns:
        A :class:`CurveResult`; ``line`` is the one-line forecast.
    """
    from xlsent.recipes.curve import run_curve
    from xlsent.report.plots import learning_curve_png
    from xlsent.utils.errors import named

    if shares < 2:
        raise XlsentError(f"{named('shares', shares)}: a curve needs at least 2 shares")
    if budget_minutes <= 0:
        raise XlsentError(f"{named('budget_minutes', budget_minutes)}: give a positive number of minutes")
    sets = [f"models.student={model}",
            *(list(settings) if isinstance(settings, list) else settings_to_overrides(settings))]
    cfg = recipe_config("adapt", pairs, settings=sets, device=None if device == "auto" else device)  # checked first
    output = output_folder(output)

    def train_share(data: Path, run: Path, extra: list[str]) -> Path:
        return train("adapt", str(data), output=run, settings=[*sets, *extra], device=device, evaluate=False,
                     on_note=on_note).model_path

    return run_curve(cfg, pairs, output, model=model, shares=shares, budget_minutes=budget_minutes,
                     held_out=held_out, keep_models=keep_models, train_share=train_share, plot=learning_curve_png,
                     on_note=on_note)
