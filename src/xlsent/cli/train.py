"""``xlsent train <recipe>``: config file + ``--set`` overrides → a sentence-transformers model folder."""

from __future__ import annotations

from pathlib import Path

import typer

from xlsent.cli.common import console, err_console, retrieval_table
from xlsent.utils.config import dump_config, load_config
from xlsent.utils.io import write_json_atomic

app = typer.Typer(help="Train a model with one of the recipes.", no_args_is_help=True)


@app.command("siamese")
def siamese(
    output: Path = typer.Option(..., "--output", "-o", help="run folder (model/, config.yaml, metrics.json, logs)"),
    config: Path = typer.Option(None, "--config", "-c", help="YAML file overriding configs/siamese.yaml"),
    set_: list[str] = typer.Option([], "--set", help="key=value override, repeatable (e.g. --set optim.epochs=10)"),
    show_config: bool = typer.Option(False, help="print the merged config and exit"),
) -> None:
    """Siamese fine-tuning over a frozen encoder (Huang et al. 2023, "mBERT-SF")."""
    from xlsent.recipes.siamese import evaluate_run, train_siamese

    cfg = load_config("siamese", config, set_)
    if show_config:
        console.print(dump_config(cfg), markup=False)
        return
    result = train_siamese(cfg, output, console=err_console)
    metrics = evaluate_run(result, err_console)
    write_json_atomic(output / "metrics.json", metrics)
    rows = [{**metrics[k], "pool": f"{k} ({metrics['eval_pool']['pairs']})"} for k in ("base", "trained")]
    console.print(retrieval_table(rows, f"held-out retrieval ({metrics['eval_pool']['n']} pairs)"))
    console.print(f"metrics: {output / 'metrics.json'}")
    console.print(f"model: {output / 'model'}  (SentenceTransformer('{output / 'model'}'))")
