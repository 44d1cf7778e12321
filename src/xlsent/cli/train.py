"""``xlsent train <recipe>``: config file + ``--preset`` + ``--set`` overrides → a sentence-transformers model folder."""

from __future__ import annotations

from pathlib import Path

import typer

from xlsent.cli.common import console, err_console, retrieval_table
from xlsent.utils.config import dump_config, load_config
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_json_atomic

app = typer.Typer(help="Train a model with one of the recipes.", no_args_is_help=True)

OUTPUT = typer.Option(..., "--output", "-o", help="run folder (model/, config.yaml, metrics.json, logs)")
CONFIG = typer.Option(None, "--config", "-c", help="YAML file overriding the recipe's defaults")
SET = typer.Option([], "--set", help="key=value override, repeatable (e.g. --set optim.epochs=1)")
PRESET = typer.Option(None, "--preset", "-p", help="shipped preset, e.g. 'small' (≤ 30 min per stage on 2 CPU cores)")
SHOW = typer.Option(False, help="print the merged config and exit")
NO_EVAL = typer.Option(False, "--no-eval", help="skip the held-out evaluation after training")


def _config(recipe: str, config, set_, preset, show: bool, output: Path | None = None) -> dict | None:
    """The merged, validated config (every value checked before any model loads); None after --show-config."""
    cfg = load_config(recipe, config, set_, preset)
    if output is not None and output.exists() and not output.is_dir():
        raise XlsentError(f"--output {output}: exists and is a file — give a folder for the run")
    if show:
        console.print(dump_config(cfg), markup=False)
        return None
    return cfg


@app.command("siamese")
def siamese(output: Path = OUTPUT, config: Path = CONFIG, set_: list[str] = SET, preset: str = PRESET,
            show_config: bool = SHOW) -> None:
    """Siamese fine-tuning over a frozen encoder (Huang et al. 2023, "mBERT-SF")."""
    cfg = _config("siamese", config, set_, preset, show_config, output)
    if cfg is None:
        return
    from xlsent.recipes.siamese import evaluate_run, train_siamese

    result = train_siamese(cfg, output, console=err_console)
    metrics = evaluate_run(result, err_console)
    write_json_atomic(output / "metrics.json", metrics)
    rows = [{**metrics[k], "pool": f"{k} ({metrics['eval_pool']['pairs']})"} for k in ("base", "trained")]
    console.print(retrieval_table(rows, f"held-out retrieval ({metrics['eval_pool']['n']} pairs)"))
    console.print(f"metrics: {output / 'metrics.json'}")
    console.print(f"model: {output / 'model'}  (SentenceTransformer('{output / 'model'}'))")


def _evaluate(cfg: dict, models: dict, output: Path, title: str, extra: dict | None = None,
              gloss=None) -> None:
    """``models``: report name → model name or folder; ``gloss`` (a gloss model's) is also applied to every
    other model, so the base English SBERT is scored on glossed input too."""
    from xlsent.encoding.encoder import Encoder
    from xlsent.recipes._common import evaluate_models, summary_table

    err_console.print("held-out evaluation (reported only; never used to pick a checkpoint)")
    chunk = int(cfg["eval"]["chunk_words"])
    teacher = Encoder.load(cfg["teacher"] if "teacher" in cfg else cfg["model"]["name"], memo=True, gloss=None)
    kw = {"gloss": gloss} if gloss is not None else {}
    encoders = {name: Encoder.load(str(path), chunk_words=chunk, memo=True, name=name, **kw)
                for name, path in models.items()}
    metrics = evaluate_models(encoders, cfg["eval"], teacher, int(cfg["optim"]["seed"]), err_console)
    metrics.update(extra or {})
    write_json_atomic(output / "metrics.json", metrics)
    console.print(summary_table(metrics, title))
    console.print(f"metrics: {output / 'metrics.json'}")


def _distil(recipe: str, label: str, output: Path, config, set_, preset, show: bool, no_eval: bool) -> None:
    """Train a one-student recipe (xkd, triplet-kd), then evaluate base vs trained on held-out data."""
    cfg = _config(recipe, config, set_, preset, show, output)
    if cfg is None:
        return
    from xlsent.recipes.triplet_kd import train_triplet_kd
    from xlsent.recipes.xkd import train_xkd

    model = {"xkd": train_xkd, "triplet-kd": train_triplet_kd}[recipe](cfg, output, err_console)
    if not no_eval:
        _evaluate(cfg, {f"base {cfg['student']}": cfg["student"], recipe: model}, output, f"{label}, held-out")
    console.print(f"model: {model}  (SentenceTransformer('{model}'))")


@app.command("xkd")
def xkd(output: Path = OUTPUT, config: Path = CONFIG, set_: list[str] = SET, preset: str = PRESET,
        show_config: bool = SHOW, no_eval: bool = NO_EVAL) -> None:
    """X-KD (Reimers & Gurevych 2020): MSE(S(en), T(en)) + MSE(S(xx), T(en))."""
    _distil("xkd", "X-KD", output, config, set_, preset, show_config, no_eval)


@app.command("triplet-kd")
def triplet_kd(output: Path = OUTPUT, config: Path = CONFIG, set_: list[str] = SET, preset: str = PRESET,
               show_config: bool = SHOW, no_eval: bool = NO_EVAL) -> None:
    """Triplet KD (Manafi 2025, "Distill-XLMR-Triplet"): soft-margin triplet loss + λ·KD."""
    _distil("triplet-kd", "triplet KD", output, config, set_, preset, show_config, no_eval)


@app.command("multistage")
def multistage(output: Path = OUTPUT, config: Path = CONFIG, set_: list[str] = SET, preset: str = PRESET,
               show_config: bool = SHOW, no_eval: bool = NO_EVAL) -> None:
    """Multi-stage distillation (Ding et al. 2022): assistant → bottleneck → recurrence → MCL; resumable."""
    cfg = _config("multistage", config, set_, preset, show_config, output)
    if cfg is None:
        return
    from xlsent.recipes.multistage import size_table, stage_records, train_multistage

    result = train_multistage(cfg, output, err_console)
    console.print(size_table(result.sizes))
    if not no_eval:
        models = {f"base {cfg['assistant']}": cfg["assistant"]} if cfg["eval"]["base"] else {}
        if "stage1-assistant" in result.stages:
            models["assistant (stage 1)"] = result.assistant
        if cfg["eval"]["each_stage"]:
            for name in ("stage2-embedding", "stage3-recurrence"):
                if name in result.stages:
                    models[name] = result.stages[name]
        models["student"] = result.model
        _evaluate(cfg, models, output, "multi-stage distillation, held-out",
                  {"sizes": result.sizes, "stages": stage_records(output, list(result.stages))})
    console.print(f"model: {result.model}  (SentenceTransformer('{result.model}'))")


@app.command("gloss")
def gloss(output: Path = OUTPUT, config: Path = CONFIG, set_: list[str] = SET, preset: str = PRESET,
          show_config: bool = SHOW, no_eval: bool = NO_EVAL) -> None:
    """Word-gloss SBERT (Manafi 2025, "Finetuned-SBERT"): dictionary gloss + triplet fine-tuning of an English SBERT."""
    cfg = _config("gloss", config, set_, preset, show_config, output)
    if cfg is None:
        return
    from xlsent.models.gloss import load_gloss
    from xlsent.recipes.gloss import train_gloss

    model = train_gloss(cfg, output, err_console)
    if not no_eval:
        _evaluate(cfg, {f"base {cfg['model']['name']} (glossed input)": cfg["model"]["name"], "gloss": model}, output,
                  "word-gloss SBERT, held-out (low-resource side glossed)", gloss=load_gloss(model))
    console.print(f"model: {model}  (low-resource text: gloss it first — xlsent gloss -m {model})")
