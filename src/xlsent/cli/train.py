"""``xlsent train <recipe>``: config file + ``--preset`` + ``--set`` overrides → a sentence-transformers model folder.

One command per entry of :data:`xlsent.recipes.registry.REGISTRY`, all with the same options: the
config is merged and validated before any model loads, the recipe trains, its evaluation hook
returns the held-out metrics, and only this module prints them.
"""

from __future__ import annotations

from pathlib import Path

import typer

from xlsent.cli.common import TRAIN_DEVICE as DEVICE
from xlsent.cli.common import console, err_console, output_folder, show_note, size_table, summary_table, with_device
from xlsent.recipes.registry import REGISTRY, Recipe
from xlsent.recipes.config import dump_config, load_config
from xlsent.utils.io import write_json_atomic

app = typer.Typer(help="Train a model with one of the recipes.", no_args_is_help=True)

OUTPUT = typer.Option(..., "--output", "-o", help="run folder (model/, config.yaml, metrics.json, logs)")
CONFIG = typer.Option(None, "--config", "-c", help="YAML file overriding the recipe's defaults")
SET = typer.Option([], "--set", help="key=value override, repeatable (e.g. --set optim.epochs=1)")


def _preset_option(recipe: Recipe):
    """``--preset``, naming only this recipe's shipped presets (each with its file's first sentence)."""
    from xlsent.recipes.config import preset_summary

    if not recipe.presets:
        return typer.Option(None, "--preset", "-p", help="none is shipped for this recipe (use --config / --set)")
    listed = "; ".join(f"'{p}': {preset_summary(recipe.name, p)}" for p in recipe.presets)
    return typer.Option(None, "--preset", "-p", help=f"a shipped preset — {listed}")
SHOW = typer.Option(False, help="print the merged config and exit")
NO_EVAL = typer.Option(False, "--no-eval", help="skip the held-out evaluation after training")


def _config(recipe: str, config, set_, preset, show: bool, output: Path | None = None) -> dict | None:
    """The merged, validated config (every value checked before any model loads); None after --show-config."""
    cfg = load_config(recipe, config, set_, preset)
    if output is not None:
        output_folder(output)
    if show:
        console.print(dump_config(cfg), markup=False)
        return None
    return cfg


def _render(recipe: Recipe, report, output: Path) -> None:
    from xlsent.report.model_card import write_model_card

    if report.sizes:
        console.print(size_table(report.sizes))
    m = None
    if report.metrics is not None:
        report.metrics.recipe = recipe.name
        m = report.metrics.to_dict()
        write_json_atomic(output / "metrics.json", m)  # schema xlsent.metrics/1 (README)
        console.print(summary_table(m, report.title))
        console.print(f"metrics: {output / 'metrics.json'}")
    elif (output / "metrics.json").exists():
        (output / "metrics.json").unlink()  # an earlier run's figures must not sit beside this model
    card = write_model_card(recipe, output, report.model, m)
    how = "" if recipe.name in ("tagger", "titles") else f"  (SentenceTransformer('{report.model}'))"
    console.print(f"model: {report.model}{how}; model card: {card}")
    if report.usage:
        console.print(report.usage)


def _command(recipe: Recipe):
    def command(output: Path = OUTPUT, config: Path = CONFIG, set_: list[str] = SET, preset: str = _preset_option(recipe),
                show_config: bool = SHOW, no_eval: bool = NO_EVAL, device: str = DEVICE) -> None:
        cfg = _config(recipe.name, config, with_device(set_, device), preset,
                      show_config, output)
        if cfg is None:
            return
        result = recipe.train_fn()(cfg, output, show_note)
        from xlsent.training.processes import is_main_process

        if not is_main_process():  # under torchrun / accelerate launch: the main process evaluates and reports
            return
        if not no_eval:
            chose = cfg.eval.get("pairs") == "holdout"  # adapt: the held-out part of the training file
            err_console.print("held-out evaluation (" + ("the held-out pairs also chose the step; the UDHR is reported only"
                              if chose else "reported only; never used to pick a checkpoint") + ")")
        _render(recipe, recipe.evaluate_fn()(cfg, result, output, show_note, no_eval), output)

    command.__doc__ = recipe.help
    command.__name__ = recipe.name.replace("-", "_")
    return command


for _recipe in REGISTRY.values():
    app.command(_recipe.name, help=f"{_recipe.help} Presets: {', '.join(_recipe.presets) or 'none'}.")(_command(_recipe))
