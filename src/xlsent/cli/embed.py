"""``xlsent embed``: texts in (one a line, TSV, JSONL, Parquet), a ``.npy`` matrix or a folder of Parquet shards out."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from xlsent.api.embedding import EMBED, PRECISIONS
from xlsent.cli.common import console, err_console
from xlsent.cli.options import RAY, RUNTIME, ChunkWords, Dimensions, Model, declared, takes
from xlsent.models.registry import DEFAULT_MODEL


@takes(*RUNTIME, *RAY)
def embed_command(
    input: Path = typer.Option(..., "--input", "-i", help="texts: one a line (UTF-8), .tsv, .jsonl or .parquet"),
    output: Path = declared(EMBED["output"], "--output", "-o"),
    precision: Literal[PRECISIONS] = declared(EMBED["precision"], "--precision"),
    text_column: str = declared(EMBED["text_column"]),
    id_column: str = declared(EMBED["id_column"]),
    shard_size: int = declared(EMBED["shard_size"]),
    overwrite: bool = declared(EMBED["overwrite"]),
    model: Model = DEFAULT_MODEL,
    batch_size: int = declared(EMBED["batch_size"]),
    normalize: bool = declared(EMBED["normalize_embeddings"]),
    chunk_words: ChunkWords = 0,
    lang: str = declared(EMBED["lang"]),
    center: bool = declared(EMBED["center"]),
    dimensions: Dimensions = None,
    prompt_name: str = declared(EMBED["prompt_name"], "--prompt-name"),
    prompt: str = declared(EMBED["prompt"], "--prompt"),
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
