"""``xlsent train <recipe>``: config file + ``--preset`` + ``--set`` overrides → a sentence-transformers model folder.

One command per entry of :data:`xlsent.recipes.registry.REGISTRY`, all with the same options and an optional
first argument, the data it trains on (``xlsent train adapt PAIRS -o DIR``). The command is
:func:`xlsent.train` (:mod:`xlsent.api.training`): the config is merged and validated before any model loads,
the recipe trains, its evaluation hook returns the held-out metrics; only this module prints them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from xlsent.api.bootstrapping import BOOTSTRAP
from xlsent.cli.common import console, err_console, output_folder, show_note, size_table, summary_table
from xlsent.api.mining import INDEXES, MINE
from xlsent.api.training import CURVE
from xlsent.cli.options import RAY, K, Learn, Margin, MatchMode, Model, StoredPrecision, TrainDevice, declared, takes
from xlsent.recipes.config import dump_config
from xlsent.recipes.registry import REGISTRY, Recipe

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


def _data_argument(recipe: Recipe):
    """The optional positional argument: what the recipe trains on (its config key, ``recipe.data_key``)."""
    what = {"train.pairs": "your pairs: a TSV (src<TAB>tgt, optional header of language codes), JSONL or Moses A,B "
                           "file, or a bundled dataset name; several, comma-separated",
            "train.spans": "structural spans: an `xlsent data structural-words` output or a bundled set",
            "train.data": "training file (or a bundled set)"}[recipe.data_key]
    return typer.Argument(None, metavar="[DATA]", show_default=False,
                          help=f"{what} (= --set {recipe.data_key}=…; default: the recipe's own)")


def _render(recipe: Recipe, run, output: Path) -> None:
    if run.sizes:
        console.print(size_table(run.sizes))
    if run.metrics is not None:
        console.print(summary_table(run.metrics, run.title))
        console.print(f"metrics: {output / 'metrics.json'}")
    how = f"  (SentenceTransformer('{run.model_path}'))" if recipe.output == "embedding" else ""
    console.print(f"model: {run.model_path}{how}; model card: {run.model_card}")
    if run.usage:
        console.print(run.usage)


def _command(recipe: Recipe):
    def command(data: str = _data_argument(recipe), output: Path = OUTPUT, config: Path = CONFIG,
                set_: list[str] = SET, preset: str = _preset_option(recipe), show_config: bool = SHOW,
                no_eval: bool = NO_EVAL, device: TrainDevice = None) -> None:
        from xlsent.api.training import recipe_config, run_recipe

        cfg = recipe_config(recipe.name, data, settings=list(set_), config=config, preset=preset, device=device)
        output_folder(output)
        if show_config:
            console.print(dump_config(cfg), markup=False)
            return
        from xlsent.recipes.registry import place
        from xlsent.training.processes import is_main_process

        place(cfg)  # a device that is not there: one line, before anything is said or loaded
        run = run_recipe(recipe.name, cfg, output, evaluate=not no_eval, on_note=show_note)
        if is_main_process():  # under torchrun / accelerate launch: the main process reports
            _render(recipe, run, output)

    command.__doc__ = recipe.help
    command.__name__ = recipe.name.replace("-", "_")
    return command


for _recipe in REGISTRY.values():
    app.command(_recipe.name, help=f"{_recipe.help} Presets: {', '.join(_recipe.presets) or 'none'}.")(_command(_recipe))


@app.command("curve")
def curve_command(
    pairs: str = typer.Argument(..., metavar="PAIRS", help="your pairs, as for `xlsent train adapt PAIRS`"),
    output: Path = declared(CURVE["output"], "--output", "-o"),
    model: str = declared(CURVE["model"], "--model", "-m"),
    shares: int = declared(CURVE["shares"], "--shares", min=2),
    budget_minutes: float = declared(CURVE["budget_minutes"], "--budget-minutes"),
    set_: list[str] = SET,
    device: TrainDevice = None,
    held_out: str = declared(CURVE["held_out"], "--held-out"),
    keep_models: bool = declared(CURVE["keep_models"]),
) -> None:
    """How many pairs do I need? adapt on nested shares of your pairs, held-out P@1 against pairs, a fitted curve
    and the forecast for twice the pairs (xlsent.learning_curve)."""
    from xlsent.api.training import learning_curve

    res = learning_curve(pairs, output, model=model, shares=shares, budget_minutes=budget_minutes,
                         device=device or "auto", settings=list(set_), held_out=held_out or None,
                         keep_models=keep_models, on_note=show_note)
    for p in res.points:
        console.print(f"{p['pairs']:>8,} pairs: held-out P@1 {p['p_at_1']:.3f} [{p['ci90'][0]:.3f}, "
                      f"{p['ci90'][1]:.3f}] (xx→en {p['xx2en']:.3f}, en→xx {p['en2xx']:.3f})")
    console.print(res.line)
    for c in res.cautions:
        console.print(f"caution: {c}")
    console.print(f"wrote {res.json_file} and {res.plot}")


@app.command("bootstrap")
@takes(*RAY)
def bootstrap_command(
    seed_pairs: str = typer.Argument(..., metavar="SEED_PAIRS", help=BOOTSTRAP["seed_pairs"].help),
    src_texts: Path = declared(BOOTSTRAP["src_texts"], "--src-texts"),
    tgt_texts: Path = declared(BOOTSTRAP["tgt_texts"], "--tgt-texts"),
    output: Path = declared(BOOTSTRAP["output"], "--output", "-o"),
    model: Model = "e5-small",
    rounds: int = declared(BOOTSTRAP["rounds"], "--rounds"),
    start: str = declared(BOOTSTRAP["start"], "--start"),
    set_: list[str] = SET,
    config: Path = declared(BOOTSTRAP["config"], "--config", "-c"),
    preset: str = declared(BOOTSTRAP["preset"], "--preset", "-p"),
    device: TrainDevice = None,
    src_lang: str = declared(BOOTSTRAP["src_lang"]),
    tgt_lang: str = declared(BOOTSTRAP["tgt_lang"]),
    documents: bool = declared(BOOTSTRAP["documents"], "--documents"),
    threshold: str = declared(BOOTSTRAP["threshold"]),
    anchor: bool = declared(BOOTSTRAP["anchor"], "--anchor/--no-anchor"),
    filters: str = declared(BOOTSTRAP["filters"], "--filters"),
    learn: Learn = [],
    holdout: float = declared(BOOTSTRAP["holdout"], "--holdout"),
    k: K = 4,
    mode: MatchMode = "max",
    margin: Margin = declared(BOOTSTRAP["margin"]),
    index: Literal[INDEXES] = declared(BOOTSTRAP["index"]),
    precision: StoredPrecision = declared(BOOTSTRAP["precision"], "--precision"),
    batch_size: int = declared(MINE["batch_size"]),
    memory_gib: float = declared(BOOTSTRAP["memory_gib"]),
    shard_size: int = declared(MINE["shard_size"]),
    keep_rounds: bool = declared(BOOTSTRAP["keep_rounds"], "--keep-rounds"),
    run: dict = None,
) -> None:
    """From a few pairs and plain text to a model: adapt on the seed, then mine the texts, clean and retrain, round
    by round; the round that finds the held-out seed pairs best among every plain line is the model
    (xlsent.bootstrap)."""
    from xlsent.api.bootstrapping import bootstrap
    from xlsent.data.langid.ngram import parse_learn

    res = bootstrap(seed_pairs, src_texts, tgt_texts, output, model=model, rounds=rounds, start=start,
                    settings=list(set_), src_lang=src_lang or None, tgt_lang=tgt_lang or None, documents=documents,
                    threshold=threshold, filters=filters, learn=parse_learn(learn) or None,
                    mining={"k": k, "mode": mode, "margin": margin, "index": index, "precision": precision,
                            "batch_size": batch_size, "memory_gib": memory_gib, "shard_size": shard_size},
                    holdout=holdout, config=config, preset=preset, engine=run["engine"], device=device or "auto",
                    anchor=anchor, keep_rounds=keep_rounds, on_note=show_note, console=err_console)
    console.print(rounds_table(res))
    console.print(f"model: {res.model_path}  (SentenceTransformer('{res.model_path}')); round {res.best_round}; "
                  f"model card: {res.model_card}\nrounds: {res.output / 'bootstrap.json'}, {res.plot}")


def rounds_table(res):
    """A bootstrap's rounds as a table: what each trained on, what it mined and kept, its held-out score."""
    from rich import box
    from rich.table import Table

    table = Table(title=f"held-out P@1 among every plain line ({res.held_out} seed pairs, both ways)",
                  box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False)
    for col in ("round", "seed+mined", "found", "cut", "kept", "P@1", "95% CI", "time"):
        table.add_column(col, justify="left" if col == "round" else "right", no_wrap=True)
    for r in res.rounds:
        c, h = r["counts"], r["held_out"]
        secs = sum(r["seconds"].values())
        table.add_row(f"{r['round']}{' *' if r['round'] == res.best_round else ''}",
                      f"{r['trained_on']['seed']:,}+{r['trained_on']['mined']:,}", f"{c.get('candidates', 0):,}",
                      f"{c.get('after_cut', c.get('candidates', 0)):,}", f"{c.get('kept', 0):,}",
                      f"{h['p_at_1']:.3f}", f"{h['ci95'][0]:.2f}–{h['ci95'][1]:.2f}",
                      f"{secs / 60:.1f}m" if secs >= 90 else f"{secs:.0f}s")
    table.caption = f"* the model (round {res.best_round}); {res.stopped}" if res.stopped else \
        f"* the model (round {res.best_round})"
    return table
