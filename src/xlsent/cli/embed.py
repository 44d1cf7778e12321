"""``xlsent embed``: texts in (one a line, TSV, JSONL, Parquet), a ``.npy`` matrix or a folder of Parquet shards out."""

from __future__ import annotations

from pathlib import Path

import typer

from xlsent.api._common import place
from xlsent.cli.common import console, err_console, make_engine
from xlsent.cli.options import (Address, Backend, ChunkWords, CpusPerWorker, Device, Dimensions, Dtype, Engine,
                                GpusPerWorker, Model, Threads, Workers)
from xlsent.models.registry import DEFAULT_MODEL


def embed_command(
    input: Path = typer.Option(..., "--input", "-i", help="texts: one a line (UTF-8), .tsv, .jsonl or .parquet"),
    output: Path = typer.Option(..., "--output", "-o", help="a .npy file: the (n, dim) matrix | a folder: "
                                "Parquet shards (id, embedding) + _manifest.json, resumable"),
    precision: str = typer.Option("float32", "--precision", help="float32 (4 bytes a dimension) | float16 | int8 "
                                  "(1 byte a dimension + a float32 scale a row: .npy records (scale, q), Parquet a "
                                  "scale column; embedding ≈ q × scale) | ubinary (the sign bits packed into uint8, "
                                  "d/8 bytes a row, as sentence-transformers' quantize_embeddings)"),
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
    backend: Backend = "auto",
    threads: Threads = 0,
    device: Device = "auto",
    dtype: Dtype = "auto",
    engine: Engine = "local",
    address: Address = None,
    workers: Workers = 2,
    cpus_per_worker: CpusPerWorker = 1.0,
    gpus_per_worker: GpusPerWorker = 0.0,
) -> None:
    """Embed every text of a file (a blank text is an error: it would shift the rows)."""
    place(device, dtype)  # a device that is not there: one line, before any model loads
    from xlsent.api.embedding import embed_file

    res = embed_file(input, output, model, lang=lang or None, center=center, precision=precision, normalize=normalize,
                     batch_size=batch_size, chunk_words=chunk_words, text_column=text_column, id_column=id_column,
                     shard_size=shard_size, overwrite=overwrite, backend=backend, threads=threads, device=device,
                     dtype=dtype, dimensions=dimensions,
                     engine=lambda: make_engine(engine, address, workers, cpus_per_worker, gpus_per_worker),
                     on_progress=lambda done, total: err_console.print(f"[dim]shard {done}/{total}[/dim]"),
                     show_progress=True)
    if res.shards:
        console.print(f"wrote {output}: {res.rows} rows × {res.dimension} in {res.shards} Parquet shard(s) + "
                      f"{output / '_manifest.json'}")
        return
    dim = res.dimension
    layout = {"int8": f"records (scale, q[{dim}])", "ubinary": f"{-(-dim // 8)} packed bytes a row"}.get(precision, "")
    console.print(f"wrote {output}: {res.rows} rows × {dim} dimensions, {precision}" + (f", {layout}" if layout else ""))
