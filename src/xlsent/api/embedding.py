"""Texts → vectors: a list in Python (:func:`embed`), or a file to a ``.npy`` matrix or Parquet shards
(:func:`embed_file`, what ``xlsent embed`` runs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from xlsent.api._common import check_backend, check_options, check_unicode, old_names, place, writes
from xlsent.encoding.loading import language_means, open_encoder
from xlsent.encoding.readable import SAMPLE
from xlsent.encoding.width import check_dimensions
from xlsent.evaluation.tasks.options import CHUNK_WORDS
from xlsent.utils.errors import XlsentError
from xlsent.utils.options import Option, at_least, one_of

PRECISIONS = ("float32", "float16", "int8", "ubinary")

#: :func:`embed` / :func:`embed_file`'s options, each declared once: checked here, ``xlsent embed``'s options built
#: from them (their help is the command's)
EMBED: dict[str, Option] = {
    "output": Option(..., help="a .npy file: the (n, dim) matrix | a folder: Parquet shards (id, embedding) + "
                               "_manifest.json, resumable"),
    "precision": one_of(PRECISIONS, "float32", "float32: 4 bytes a dimension; int8: 1 byte a dimension + a float32 "
                        "scale a row (.npy records (scale, q), Parquet a scale column; embedding ≈ q × scale); "
                        "ubinary: the sign bits packed into uint8, d/8 bytes a row, as sentence-transformers' "
                        "quantize_embeddings"),
    "batch_size": at_least(1, 64, "texts per batch (batches are sorted by token length)"),
    "chunk_words": CHUNK_WORDS,
    "shard_size": at_least(1, 50_000, "rows per Parquet shard (the unit of resume and of a Ray task)"),
    "text_column": Option("", help="the texts' column: .jsonl/.parquet a name (default text), .tsv a number (default "
                                   "1)"),
    "id_column": Option("", help="an id column carried into the Parquet shards (default: row numbers)"),
    "overwrite": Option(False, help="replace an output folder that holds other embeddings"),
    "normalize_embeddings": Option(False, help="L2-normalise the embeddings"),
    "lang": Option("", help="language of the texts (e.g. ny, en): a word-gloss model glosses any language but "
                            "English; unknown = glossed"),
    "center": Option(False, help="subtract the language's mean vector stored in the model folder (xlsent models "
                                 "calibrate) and re-normalise; needs --lang"),
    "prompt_name": Option(None, help="one of the model's prompts prefixed to every text (e5: query | passage; "
                                     "default: the model's default prompt, e5's passage)"),
    "prompt": Option(None, help="a prompt's text instead (\"\": none)"),
}


def embed(texts: str | Sequence[str], model: Any = "e5-small", *, lang: str | None = None, center: bool = False,
          precision: str = "float32", normalize_embeddings: bool = False, batch_size: int = 64, chunk_words: int = 0,
          prompt_name: str | None = None, prompt: str | None = None, backend: str = "auto", threads: int = 0,
          device: str = "auto", dtype: str = "auto", truncate_dim: int | None = None,
          show_progress_bar: bool | None = None, **old: Any) -> np.ndarray:
    """Embed texts.

    Args:
        texts: one text or a list of texts (a blank text is an error: it would shift the rows).
        model: a registered name (``e5-small``, ``minilm-en``), a model folder (a trained run's ``model/``, an
            exported ONNX folder), or a ``SentenceTransformer`` from :func:`xlsent.load` (it runs where it is, in
            its own dtype: ``device`` and ``dtype`` apply to a model given by name). A model given by name or
            folder is loaded once per process and options (reloaded when its folder changes).
        lang: the texts' language (``ny``, ``nya``, ``en`` …): a word-gloss model glosses any language but English;
            ``center`` needs it.
        center: subtract the language's mean vector stored in the model folder (:func:`xlsent.calibrate`) and
            re-normalise.
        precision: ``float32`` | ``float16`` | ``int8`` (records of a float32 ``scale`` and int8 ``q``, the vector
            ≈ ``q × scale``) | ``ubinary`` (the sign bits packed into uint8, d/8 bytes a row).
        normalize_embeddings: unit-length rows.
        batch_size: texts per forward pass (batches are sorted by length).
        chunk_words: chunked pooling: texts longer than N words are embedded in ≤ N-word chunks and averaged
            (0 = off).
        prompt_name: one of the model's prompts, prefixed to every text: e5's ``"query"`` (``query: ``, for a
            search query) or ``"passage"`` (``passage: ``, its default — what xlsent uses everywhere unless told).
        prompt: a prompt's text instead (``""``: none).
        backend: ``auto`` (an exported folder runs on onnxruntime, any other model on torch) | ``torch`` |
            ``onnx`` (a torch model is exported once, fp32, into the cache).
        threads: threads of the backend (0 = its default).
        device: ``auto`` | ``cpu`` | ``cuda`` | ``cuda:N`` | ``mps``.
        dtype: the precision a torch model encodes in: ``auto`` (fp16 on a CUDA GPU, bf16 autocast on a CPU where
            it was timed faster, :mod:`xlsent.utils.cpu_bf16`; fp32 elsewhere) | ``fp32`` | ``fp16`` | ``bf16``.
        truncate_dim: the first N coordinates of each vector, renormalised to unit length (``None`` = the model's
            full width; 1 to the model's width, checked before the model loads). Centering comes before the cut
            (the stored means are full width), quantisation after it.
        show_progress_bar: a progress bar with an ETA (``None``: off in Python, on in the CLI).
        **old: the names of the last release (``normalize``, ``dimensions``, ``show_progress``), with a
            ``DeprecationWarning``.

    Returns:
        An ``(n, d)`` array (a single text: ``(1, d)``; ``d`` = ``truncate_dim`` when given) at ``precision``:
        float32 or float16 rows, int8 records, or ``(n, d/8)`` uint8 for ubinary.

    Example:
        >>> import xlsent
        >>> vecs = xlsent.embed(["Moni, muli bwanji?", "Hello, how are you?"], model="e5-small",
        ...                     normalize_embeddings=True)
        >>> vecs.shape
        (2, 384)
        >>> round(float(vecs[0] @ vecs[1]), 1) > 0.5
        True
    """
    normalize, dimensions, show_progress = old_names("embed", old, normalize_embeddings=normalize_embeddings,
                                                     truncate_dim=truncate_dim, show_progress_bar=show_progress_bar)
    items = [texts] if isinstance(texts, str) else list(texts)
    for i, t in enumerate(items):
        if not isinstance(t, str) or not t.strip():
            raise XlsentError(f"texts[{i}]: {'blank' if isinstance(t, str) else type(t).__name__} — every text must "
                              "be non-empty (a row per text)")
    check_unicode(items, "texts")
    check_options(EMBED, locals(), ("precision",))
    check_backend(backend, threads)
    check_options(EMBED, locals(), ("batch_size", "chunk_words"))
    means = language_means(model, lang) if center else None  # what its folder says: before it loads
    dimensions = None if dimensions is None else check_dimensions(model, dimensions, "truncate_dim")
    place(device, dtype)
    encoder = open_encoder(model, backend=backend, threads=threads, export=_export(backend), normalize=normalize,
                           batch_size=batch_size, chunk_words=chunk_words, show_progress=show_progress,
                           dimensions=None if center else dimensions, prompt_name=prompt_name, prompt=prompt)
    vecs = encoder.encode(items, lang or None, source="texts")
    return _finish(vecs, means, lang, precision, dimensions if center else None)


def _export(backend: str):
    """How a torch model is exported for ``backend="onnx"`` (:func:`xlsent.exporter.load.cached_export`: once, fp32,
    into the cache); None for any other backend — loading a model never exports it otherwise."""
    if backend != "onnx":
        return None
    from xlsent.exporter.load import cached_export

    return cached_export


def _finish(vecs: np.ndarray, means, lang: str | None, precision: str, dimensions: int | None = None) -> np.ndarray:
    """Center with the stored mean (full width), then cut to ``dimensions`` (centered vectors only: the encoder
    cuts the others), then quantise."""
    from xlsent.encoding.width import cut
    from xlsent.mining.store import quantize

    if means is not None:
        vecs = cut(means.apply(vecs, lang), dimensions)
    return quantize(vecs, precision)


@dataclass
class EmbedFileResult:
    """What :func:`embed_file` wrote."""

    output: Path
    rows: int
    dimension: int
    precision: str
    shards: int = 0  # Parquet shards (a folder output); 0 for a .npy file

    def to_dict(self) -> dict:
        return {"output": str(self.output), "rows": self.rows, "dimension": self.dimension,
                "precision": self.precision, "shards": self.shards}


@writes("output")
def embed_file(input: str | Path, output: str | Path, model: Any = "e5-small", *, lang: str | None = None,
               center: bool = False, precision: str = "float32", normalize_embeddings: bool = False,
               batch_size: int = 64, chunk_words: int = 0, prompt_name: str | None = None, prompt: str | None = None,
               text_column: str = "", id_column: str = "", shard_size: int = 50_000, overwrite: bool = False,
               backend: str = "auto", threads: int = 0, device: str = "auto", dtype: str = "auto",
               truncate_dim: int | None = None, engine: Any = None,
               on_progress: Callable[[int, int], None] | None = None, show_progress_bar: bool | None = None,
               **old: Any) -> EmbedFileResult:
    """Embed every text of a file into a ``.npy`` matrix or a folder of Parquet shards (``xlsent embed``).

    Args:
        input: one text a line (UTF-8), ``.tsv``, ``.jsonl`` or ``.parquet``.
        output: a ``.npy`` file (the matrix at ``precision``), or a folder: Parquet shards of ``shard_size`` rows
            (``id``, ``embedding``) and ``_manifest.json``; a stopped run resumes from the finished shards.
        text_column: the texts' column: ``.jsonl``/``.parquet`` a name (default ``text``), ``.tsv`` a number
            (default 1).
        id_column: an id column carried into the Parquet shards (default: row numbers).
        overwrite: replace an output folder that holds other embeddings.
        engine: where the shards run: ``None`` here, a :class:`xlsent.mining.engine.RayEngine`, or a function that
            makes one (called after every option is checked).
        on_progress: called with (shards done, shards in all).
        The other arguments are :func:`embed`'s.

    Returns:
        The output, its rows, dimension, precision and shard count.

    Example:
        >>> import pathlib, tempfile, xlsent
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "texts.txt").write_text("Moni, muli bwanji?\\nZikomo kwambiri.\\n")
        >>> xlsent.embed_file(d / "texts.txt", d / "vecs.npy").rows
        2
    """
    from xlsent.data.formats.text_source import open_source
    from xlsent.mining.engine import EncoderSettings
    from xlsent.utils.io import atomic_path, check_space

    normalize, dimensions, show_progress = old_names("embed_file", old, normalize_embeddings=normalize_embeddings,
                                                     truncate_dim=truncate_dim, show_progress_bar=show_progress_bar)
    output = Path(output)
    to_npy = output.suffix == ".npy"
    if to_npy:
        from xlsent.api._common import output_file

        output_file(output)
    elif output.exists() and not output.is_dir():
        raise XlsentError(f"{output}: exists and is a file — a .npy output ends in .npy; a folder gets Parquet shards")
    check_backend(backend, threads)
    check_options(EMBED, locals(), ("precision", "batch_size", "chunk_words", "shard_size"))
    if center and not to_npy:
        raise XlsentError("center= goes with a .npy output")
    means = language_means(model, lang) if center else None  # what its folder says: before it loads
    dimensions = None if dimensions is None else check_dimensions(model, dimensions, "truncate_dim")
    place(device, dtype)
    source = open_source(Path(input), text_column, id_column)  # a missing file or column: one line, before the model
    if callable(engine):
        engine = engine()
    # one process, one matrix: every text read (a blank one is an error) before the model loads; shards read their
    # own rows when they run
    texts = source.read(0, source.rows)[1] if to_npy and engine is None else None
    encoder = open_encoder(model, backend=backend, threads=threads, export=_export(backend),
                           normalize=normalize, batch_size=batch_size, chunk_words=chunk_words,
                           show_progress=show_progress and engine is None and to_npy,
                           dimensions=None if center else dimensions, prompt_name=prompt_name, prompt=prompt)
    head = texts if texts is not None else source.read(0, min(source.rows, SAMPLE))[1]
    encoder.check_readable((str(input), head, lang or None))
    if to_npy:  # the matrix needs its room before the texts are encoded
        from xlsent.mining.embed_job import output_bytes

        check_space(output, source.rows * output_bytes(precision, dimensions or encoder.dimension), "the vectors")
    if texts is not None:  # one process (a matrix, no engine): every text at once, as always
        vecs = encoder.encode(texts, lang or None)
    else:
        from xlsent.mining.embed_job import embed_corpus, read_shards

        folder = output.with_name(output.name + ".work") if to_npy else output
        settings = EncoderSettings(str(model), backend, threads, device, dtype, None if center else dimensions,
                                   encoder.prompt)
        manifest = embed_corpus(source, folder, encoder, settings,
                                engine, shard_size, normalize, chunk_words, lang or "", overwrite,
                                on_progress or (lambda done, total: None),
                                precision if not to_npy else "float32")  # .npy: quantized once, at the end
        if not to_npy:
            return EmbedFileResult(output, int(manifest["rows"]), int(manifest["dimension"]), precision,
                                   len(manifest["shards"]))
        vecs = read_shards(folder)[1]
    vecs = _finish(vecs, means, lang, precision, dimensions if center else None)
    with atomic_path(output, "the vectors", need=vecs.nbytes + 128) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, vecs)
    if engine is not None:
        import shutil

        shutil.rmtree(output.with_name(output.name + ".work"), ignore_errors=True)
    return EmbedFileResult(output, len(vecs), dimensions or encoder.dimension, precision)
