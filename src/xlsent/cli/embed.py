"""``xlsent embed``: texts in (one a line, TSV, JSONL, Parquet), a ``.npy`` matrix or a folder of Parquet shards out."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from xlsent.api.embedding import PRECISIONS
from xlsent.cli.common import console, err_console
from xlsent.cli.options import RAY, RUNTIME, ChunkWords, Dimensions, Model, takes
from xlsent.models.registry import DEFAULT_MODEL


@takes(*RUNTIME, *RAY)
def embed_command(
    input: Path = typer.Option(..., "--input", "-i", help="texts: one a line (UTF-8), .tsv, .jsonl or .parquet"),
    output: Path = typer.Option(..., "--output", "-o", help="a .npy file: the (n, dim) matrix | a folder: "
                                "Parquet shards (id, embedding) + _manifest.json, resumable"),
    precision: Literal[PRECISIONS] = typer.Option("float32", "--precision", help="float32: 4 bytes a dimension; int8: "
                                                  "1 byte a dimension + a float32 scale a row (.npy records (scale, "
                                                  "q), Parquet a scale column; embedding ≈ q × scale); ubinary: the "
                                                  "sign bits packed into uint8, d/8 bytes a row, as "
                                                  "sentence-transformers' quantize_embeddings"),
    text_column: str = typer.Option("", help="the texts' column: .jsonl/.parquet a name (default text), .tsv a "
                                    "number (default 1)"),
    id_column: str = typer.Option("", help="an id column carried into the Parquet shards (default: row numbers)"),
    shard_size: int = typer.Option(50_000, help="rows per Parquet shard (the unit of resume and of a Ray task)"),
    overwrite: bool = typer.Option(False, help="replace an output folder that holds other embeddings"),
    model: Model = DEFAULT_MODEL,
    batch_size: int = typer.Option(64, help="texts per batch (batches are sorted by token length)"),
    normalize: bool = typer.Option(False, help="L2-normalise the embeddings"),
    chunk_words: ChunkWords = 0,
    lang: str = typer.Option("", help="language of the texts (e.g. ny, en): a word-gloss model glosses any "
                             "language but English; unknown = glossed"),
    center: bool = typer.Option(False, help="subtract the language's mean vector stored in the model folder "
                                "(xlsent models calibrate) and re-normalise; needs --lang"),
    dimensions: Dimensions = None,
    prompt_name: str = typer.Option(None, "--prompt-name", help="one of the model's prompts prefixed to every text "
                                    "(e5: query | passage; default: the model's default prompt, e5's passage)"),
    prompt: str = typer.Option(None, "--prompt", help="a prompt's text instead (\"\": none)"),
    run: dict = None,
) -> None:
    """Embed every text of a file (a blank text is an error: it would shift the rows)."""
    from xlsent.api.embedding import embed_file

    res = embed_file(input, output, model, lang=lang or None, center=center, precision=precision,
                     normalize_embeddings=normalize, batch_size=batch_size, chunk_words=chunk_words,
                     prompt_name=prompt_name, prompt=prompt, text_column=text_column, id_column=id_column,
                     shard_size=shard_size, overwrite=overwrite, truncate_dim=dimensions, **run,
                     on_progress=lambda done, total: err_console.print(f"[dim]shard {done}/{total}[/dim]"),
                     show_progress_bar=True)
    if res.shards:
        console.print(f"wrote {output}: {res.rows} rows × {res.dimension} in {res.shards} Parquet shard(s) + "
                      f"{output / '_manifest.json'}")
        return
    dim = res.dimension
    layout = {"int8": f"records (scale, q[{dim}])", "ubinary": f"{-(-dim // 8)} packed bytes a row"}.get(precision, "")
    console.print(f"wrote {output}: {res.rows} rows × {dim} dimensions, {precision}" + (f", {layout}" if layout else ""))
