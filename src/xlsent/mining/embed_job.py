"""Embedding a corpus in shards, on either engine: Parquet shards with a manifest, resumable.

Layout of the output folder::

    _job.json               what is embedded (model fingerprint, source, settings): a rerun checks it
    part-00000.parquet …    one per shard of ``shard_size`` rows: ``id`` (the id column's values, or the row
                            number) and ``embedding``, a fixed-size list at the chosen precision (float32,
                            float16; int8 with a ``scale`` column: embedding ≈ int8 × scale; ubinary: the sign
                            bits packed into d/8 uint8, sentence-transformers' ``ubinary``), written atomically
    _manifest.json          written last: model, fingerprint, dimension, dtype, rows, rows per shard, the shards

Hugging Face datasets (``load_dataset("parquet", data_files="OUT/*.parquet")``), pandas, DuckDB and Spark read
the shards as they are. A shard whose file exists is finished, so a stopped run resumes with the missing ones;
a folder that holds another model's or another source's shards is refused (or replaced with ``overwrite``).
"""

from __future__ import annotations

import json
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from xlsent.data.formats.text_source import TextSource
from xlsent.mining.store import quantize
from xlsent.utils.errors import XlsentError, named
from xlsent.utils.io import atomic_path, check_space, size_of, write_json_atomic, writing

MANIFEST = "_manifest.json"  # "_": Parquet readers given the folder skip it
COLUMNS = {"float32": "fixed-size list of float32", "float16": "fixed-size list of float16",
           "int8": "fixed-size list of int8 (see scale)", "ubinary": "fixed-size list of uint8: the sign bits, packed"}


def output_bytes(precision: str, dim: int) -> int:
    """Bytes of one embedding in the output (ubinary: the bits alone; a mining store keeps int8 beside them)."""
    return {"float32": 4 * dim, "float16": 2 * dim, "int8": dim + 4, "ubinary": -(-dim // 8)}[precision]


@dataclass(frozen=True)
class EmbedTask:
    """Embed rows [start, stop) of ``source`` into the Parquet file ``out``."""

    source: TextSource
    shard: int
    start: int
    stop: int
    out: Path
    normalize: bool = False
    chunk_words: int = 0
    batch_size: int = 64
    lang: str = ""
    precision: str = "float32"

    def done(self) -> bool:
        return self.out.exists()

    def run(self, encoder, show_progress: bool = False) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        ids, texts = self.source.read(self.start, self.stop)
        enc = encoder.replace(normalize=self.normalize, chunk_words=self.chunk_words, batch_size=self.batch_size,
                              show_progress=show_progress, memo=False)
        vecs = quantize(enc.encode(texts, self.lang or None), self.precision)
        columns = {"id": ids}
        if vecs.dtype.names:  # int8 records
            columns["scale"], vecs = vecs["scale"], vecs["q"]
        columns["embedding"] = pa.FixedSizeListArray.from_arrays(pa.array(np.ascontiguousarray(vecs).reshape(-1)),
                                                                 vecs.shape[1])
        with atomic_path(self.out, f"shard {self.shard} of the embeddings", resumes=True) as tmp:
            pq.write_table(pa.table(columns), tmp)


def read_shards(folder: str | Path) -> tuple[list, np.ndarray]:
    """(ids, embeddings) of a finished output folder, in row order: float32 (int8 shards scaled back), or the
    packed sign bits of ubinary shards as uint8."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    manifest = json.loads((folder / MANIFEST).read_text())
    precision = manifest.get("dtype", "float32")
    width = -(-manifest["dimension"] // 8) if precision == "ubinary" else manifest["dimension"]
    out = np.uint8 if precision == "ubinary" else np.float32
    ids, parts = [], []
    for name in manifest["shards"]:
        t = pq.read_table(folder / name)
        ids += t.column("id").to_pylist()
        v = t.column("embedding").combine_chunks().flatten().to_numpy().reshape(t.num_rows, width).astype(out)
        parts.append(v * t.column("scale").to_numpy()[:, None] if precision == "int8" else v)
    return ids, np.concatenate(parts)


def embed_corpus(source: TextSource, folder: str | Path, encoder, settings, engine=None, shard_size: int = 50_000,
                 normalize: bool = False, chunk_words: int = 0, lang: str = "", overwrite: bool = False,
                 advance: Callable[[int, int], None] | None = None, precision: str = "float32") -> dict:
    """Embed every row of ``source`` into Parquet shards under ``folder``; the manifest. ``encoder`` is the driver's
    (its fingerprint and dimension name the output; the local engine embeds with it), ``settings`` how a remote
    worker loads it (:class:`xlsent.mining.engine.EncoderSettings`); ``advance(done, total)`` reports shards."""
    from xlsent.mining.engine import LocalEngine

    if shard_size < 1:
        raise XlsentError(f"{named('shard_size', shard_size)}: give at least 1")
    folder = Path(folder)
    stat = source.path.stat()
    key = {"model": encoder.fingerprint, "source": str(source.path.resolve()), "size": stat.st_size,
           "mtime_ns": stat.st_mtime_ns, "rows": source.rows, "text_column": source.text_column,
           "id_column": source.id_column, "shard_size": shard_size, "normalize": normalize,
           "chunk_words": chunk_words, "lang": lang, "encode_dtype": getattr(settings, "dtype", "auto"),
           "precision": precision}
    record = folder / "_job.json"
    per_row = output_bytes(precision, int(encoder.dimension))
    if folder.exists() and any(folder.iterdir()):
        old = json.loads(record.read_text()) if record.exists() else None
        if old != key:
            if not overwrite:
                raise XlsentError(f"{folder}: holds other embeddings (another model, source or settings) or other "
                                  "files — choose a new output folder or pass --overwrite")
            # checked before anything is removed: what the old folder holds is freed for the new one
            check_space(folder, source.rows * per_row - size_of(folder), f"the embeddings of {source.rows:,} rows")
            warnings.warn(f"{folder}: holds other embeddings or other files — replaced (overwrite)", stacklevel=2)
            shutil.rmtree(folder)
    n_shards = -(-source.rows // shard_size)
    names = [f"part-{i:05d}.parquet" for i in range(n_shards)]
    tasks = [EmbedTask(source, i, i * shard_size, min(source.rows, (i + 1) * shard_size), folder / names[i],
                       normalize, chunk_words, int(getattr(encoder, "batch_size", 64)), lang, precision)
             for i in range(n_shards)]
    todo = [t for t in tasks if not t.done()]
    done = [n_shards - len(todo)]
    rows = sum(t.stop - t.start for t in todo)
    check_space(folder, rows * per_row, f"the embeddings of {rows:,} rows")
    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(record, key)

    def step() -> None:
        done[0] += 1
        if advance is not None:
            advance(done[0], n_shards)

    with writing(folder, "the embeddings", need=rows * per_row, resumes=True):  # a shard's failure, with the need
        (engine if engine is not None else LocalEngine(encoder)).encode(todo, settings, step)
    manifest = {"model": settings.model, "fingerprint": encoder.fingerprint, "dimension": int(encoder.dimension),
                "dtype": precision, "bytes_per_sentence": output_bytes(precision, int(encoder.dimension)),
                "rows": source.rows, "rows_per_shard": shard_size, "shards": names,
                "columns": {"id": source.id_column or "row number", "embedding": COLUMNS[precision],
                            **({"scale": "float32: embedding ≈ int8 × scale"} if precision == "int8" else {})},
                "normalized": normalize, "source": key["source"], "engine": getattr(engine, "name", "local")}
    write_json_atomic(folder / MANIFEST, manifest)
    return manifest
