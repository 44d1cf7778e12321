"""``xlsent embed``: texts in (one a line, TSV, JSONL, Parquet), a ``.npy`` matrix or a folder of Parquet shards out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer

from xlsent.cli.common import (ADDRESS, BACKEND, CPUS_PER_WORKER, DEVICE, DTYPE, ENGINE, GPUS_PER_WORKER, THREADS,
                               WORKERS, at_least, check_backend, choice, console, err_console, make_engine, output_file)
from xlsent.models.registry import DEFAULT_MODEL
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import atomic_path


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
    model: str = typer.Option(DEFAULT_MODEL, "--model", "-m", help="registered name or local model folder"),
    batch_size: int = typer.Option(64, help="texts per batch (batches are sorted by token length)"),
    normalize: bool = typer.Option(False, help="L2-normalise the embeddings"),
    chunk_words: int = typer.Option(0, help="chunked pooling: average over ≤ N-word chunks (0 = off)"),
    lang: str = typer.Option("", help="language of the texts (e.g. ny, en): a word-gloss model glosses any "
                             "language but English; unknown = glossed"),
    center: bool = typer.Option(False, help="subtract the language's mean vector stored in the model folder "
                                "(xlsent models calibrate) and re-normalise; needs --lang"),
    backend: str = BACKEND,
    threads: int = THREADS,
    device: str = DEVICE,
    dtype: str = DTYPE,
    engine: str = ENGINE,
    address: str = ADDRESS,
    workers: int = WORKERS,
    cpus_per_worker: float = CPUS_PER_WORKER,
    gpus_per_worker: float = GPUS_PER_WORKER,
) -> None:
    """Embed every text of a file (a blank text is an error: it would shift the rows)."""
    from xlsent.data.text_source import open_source
    from xlsent.export.load import load_encoder
    from xlsent.mining.engine import EncoderSettings
    from xlsent.mining.store import DTYPES, quantize

    to_npy = output.suffix == ".npy"
    if to_npy:
        output_file(output)
    elif output.exists() and not output.is_dir():
        raise XlsentError(f"{output}: exists and is a file — a .npy output ends in .npy; a folder gets Parquet shards")
    check_backend(backend, threads)
    choice(precision, DTYPES, "--precision")
    at_least(batch_size, 1, "--batch-size")
    at_least(chunk_words, 0, "--chunk-words")
    at_least(shard_size, 1, "--shard-size")
    if center and not to_npy:
        raise XlsentError("--center goes with a .npy output")
    means = None
    if center:
        from xlsent.encoding.encoder import source_folder
        from xlsent.models.language_means import read_language_means

        if not lang:
            raise XlsentError("--center needs --lang CODE (whose mean vector to subtract)")
        means = read_language_means(source_folder(model))
        if means is None:
            raise XlsentError(f"--center: {model} carries no language means — run xlsent models calibrate {model} "
                              f"--lang {lang}=FILE first")
        means.mean(lang)  # an uncalibrated language is one line, before the model loads
    source = open_source(input, text_column, id_column)  # a missing file or column: one line, before the model
    runner = make_engine(engine, address, workers, cpus_per_worker, gpus_per_worker)
    # one process, one matrix: every text read (a blank one is an error) before the model loads; shards read their
    # own rows when they run
    texts = source.read(0, source.rows)[1] if to_npy and runner is None else None
    encoder = load_encoder(model, backend=backend, threads=threads, batch_size=batch_size, normalize=normalize,
                           chunk_words=chunk_words, show_progress=runner is None and to_npy)
    if to_npy and runner is None:  # one process: every text at once, as always
        vecs = encoder.encode(texts, lang or None)
    else:
        from xlsent.mining.embed_job import embed_corpus, read_shards

        folder = output.with_name(output.name + ".work") if to_npy else output
        manifest = embed_corpus(source, folder, encoder, EncoderSettings(model, backend, threads, device, dtype), runner,
                                shard_size, normalize, chunk_words, lang, overwrite,
                                lambda done, total: err_console.print(f"[dim]shard {done}/{total}[/dim]"),
                                precision if not to_npy else "float32")  # .npy: quantized once, at the end
        if not to_npy:
            console.print(f"wrote {output}: {manifest['rows']} rows × {manifest['dimension']} in "
                          f"{len(manifest['shards'])} Parquet shard(s) + {output / '_manifest.json'}")
            return
        vecs = read_shards(folder)[1]
    if means is not None:
        vecs = means.apply(vecs, lang)
    vecs = quantize(vecs, precision)
    with atomic_path(output) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, vecs)
    if runner is not None:
        import shutil

        shutil.rmtree(output.with_name(output.name + ".work"), ignore_errors=True)
    rows = len(vecs)
    dim = encoder.dimension
    layout = {"int8": f"records (scale, q[{dim}])", "ubinary": f"{dim // 8} packed bytes a row"}.get(precision, "")
    console.print(f"wrote {output}: {rows} rows × {dim} dimensions, {precision}" + (f", {layout}" if layout else ""))
