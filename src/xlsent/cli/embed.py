"""``xlsent embed``: one text per line in, a ``.npy`` matrix out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import typer

from xlsent.cli.common import BACKEND, DEVICE, DTYPE, THREADS, at_least, check_backend, console, output_file
from xlsent.data.readers import read_lines
from xlsent.models.registry import DEFAULT_MODEL
from xlsent.utils.errors import InputFormatError, XlsentError
from xlsent.utils.io import atomic_path


def embed_command(
    input: Path = typer.Option(..., "--input", "-i", help="text file, one text per line (UTF-8)"),
    output: Path = typer.Option(..., "--output", "-o", help="where to write the (n, dim) float32 .npy"),
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
) -> None:
    """Embed every line of a file (blank lines are an error: they would shift the rows)."""
    from xlsent.encoding.encoder import Encoder

    if output.suffix != ".npy":
        raise XlsentError(f"{output}: the output must end in .npy")
    output_file(output)
    check_backend(backend, threads)
    at_least(batch_size, 1, "--batch-size")
    at_least(chunk_words, 0, "--chunk-words")
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
    texts = read_lines(input)
    for i, t in enumerate(texts, 1):
        if not t.strip():
            raise InputFormatError(input, i, "blank line", "remove it, or put a text on it; rows must match lines")
    encoder = Encoder.load(model, backend=backend, threads=threads, batch_size=batch_size, normalize=normalize, chunk_words=chunk_words,
                           show_progress=True)
    vecs = encoder.encode(texts, lang or None)
    if means is not None:
        vecs = means.apply(vecs, lang)
    with atomic_path(output) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, vecs)
    console.print(f"wrote {output} {vecs.shape}")
