"""Sentence embeddings of one side of a mining job, in fixed-size shards on disk.

A store is a folder: ``store.json`` (rows, dimension, shard size, dtype) and one
``shard-00000.npy`` per shard, each written atomically, so a killed job leaves only
whole shards and resumes with the first missing one. Shards are read memory-mapped:
a corpus larger than RAM is never loaded whole.

A centered view (:meth:`EmbeddingStore.centered`) reads every row as ``unit(x − mean)``, the mean
over the whole store computed once, one shard at a time, and kept as ``mean.npy`` (per-language
centering, :func:`xlsent.similarity.center`).

Precisions (``dtype``), bytes a sentence at dimension d:

* ``float32`` (4d), ``float16`` (2d, the default);
* ``int8`` (d + 4): each row scaled by its own largest |value| to −127…127, the scale kept beside it
  (one NumPy record per row). A sharded store cannot use sentence-transformers' int8 scheme, whose
  per-dimension ranges come from a calibration set that must be known before the first shard is written;
  a row's own scale needs nothing global and its error is ≤ 0.5/127 of that row's largest value;
* ``ubinary``: stored as ``int8``; searched by the sign bits (d/8 bytes a sentence in the index,
  :func:`binary_codes`, sentence-transformers' ``ubinary``) and the candidates re-scored with the int8
  vectors, as in sentence-transformers' binary-retrieval example.

Every precision reads back as float32 (:meth:`EmbeddingStore.view`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from xlsent.similarity import unit
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import atomic_path, write_json_atomic

DTYPES = ("float32", "float16", "int8", "ubinary")


def record_dtype(dtype: str, dim: int) -> np.dtype:
    """The on-disk row type of a precision."""
    if dtype in ("int8", "ubinary"):
        return np.dtype([("scale", "<f4"), ("q", "i1", (dim,))])
    return np.dtype(dtype)


def bytes_per_sentence(dtype: str, dim: int) -> dict:
    """Stored bytes a sentence, and bytes a sentence in an exact search index built from the store."""
    rec = record_dtype(dtype, dim)
    stored = rec.itemsize if rec.names else rec.itemsize * dim
    return {"stored": stored, "index": -(-dim // 8) if dtype == "ubinary" else 4 * dim}


def quantize_int8(vectors: np.ndarray, dim: int) -> np.ndarray:
    """Rows as int8 records: ``q = round(127 · x / max|x|)``, ``scale = max|x| / 127`` (a zero row stays zero)."""
    x = np.asarray(vectors, dtype=np.float32)
    top = np.abs(x).max(axis=1) if len(x) else np.zeros(0, np.float32)
    scale = np.where(top > 0, top / 127, 1).astype(np.float32)
    out = np.empty(len(x), dtype=record_dtype("int8", dim))
    out["scale"], out["q"] = scale, np.rint(x / scale[:, None]).clip(-127, 127).astype(np.int8)
    return out


def quantize(vectors: np.ndarray, precision: str) -> np.ndarray:
    """Vectors at ``precision`` as an array: float32 / float16 rows, int8 records (``scale``, ``q``), or ubinary
    packed sign bits (uint8, d/8 a row)."""
    if precision not in DTYPES:
        raise XlsentError(f"unknown precision '{precision}': use one of {', '.join(DTYPES)}")
    x = np.asarray(vectors, dtype=np.float32)
    if precision == "int8":
        return quantize_int8(x, x.shape[1])
    if precision == "ubinary":
        return binary_codes(x)
    return x.astype(precision)


def binary_codes(vectors: np.ndarray) -> np.ndarray:
    """Sign bits packed 8 to a byte: sentence-transformers' ``ubinary`` (``quantize_embeddings`` is this one line,
    ``np.packbits(x > 0, axis=-1)``; tests/test_cli.py compares the two). Written here, not imported: importing
    sentence-transformers loads torch and transformers, seconds of CPU in every search worker for one numpy call."""
    return np.packbits(np.asarray(vectors, dtype=np.float32) > 0, axis=-1)


@dataclass(frozen=True)
class StoreSpec:
    rows: int
    dim: int
    shard_size: int
    dtype: str = "float16"

    @property
    def n_shards(self) -> int:
        return -(-self.rows // self.shard_size)


class EmbeddingStore:
    """Shards of L2-normalised embeddings under ``folder``."""

    def __init__(self, folder: str | Path, spec: StoreSpec) -> None:
        if spec.dtype not in DTYPES:
            raise XlsentError(f"unknown embedding dtype '{spec.dtype}': use one of {', '.join(DTYPES)}")
        if spec.shard_size < 1:
            raise XlsentError(f"shard size {spec.shard_size}: must be ≥ 1")
        self.folder = Path(folder)
        self.spec = spec
        self.offset: np.ndarray | None = None  # set on a centered view
        record = self.folder / "store.json"
        if record.exists():
            old = StoreSpec(**json.loads(record.read_text()))
            if old != spec:
                raise XlsentError(f"{self.folder}: holds a store with {asdict(old)}, not {asdict(spec)} — "
                                  "use a new work folder or pass --overwrite")
        else:
            write_json_atomic(record, asdict(spec))

    @classmethod
    def open(cls, folder: str | Path) -> "EmbeddingStore":
        record = Path(folder) / "store.json"
        if not record.exists():
            raise XlsentError(f"{folder}: no embedding store here (store.json missing)")
        return cls(folder, StoreSpec(**json.loads(record.read_text())))

    def __len__(self) -> int:
        return self.spec.rows

    @property
    def n_shards(self) -> int:
        return self.spec.n_shards

    def bounds(self, i: int) -> tuple[int, int]:
        start = i * self.spec.shard_size
        return start, min(start + self.spec.shard_size, self.spec.rows)

    def path(self, i: int) -> Path:
        return self.folder / f"shard-{i:05d}.npy"

    def done(self, i: int) -> bool:
        return self.path(i).exists()

    def missing(self) -> list[int]:
        return [i for i in range(self.n_shards) if not self.done(i)]

    def write(self, i: int, vectors: np.ndarray) -> None:
        start, stop = self.bounds(i)
        if vectors.shape != (stop - start, self.spec.dim):
            raise ValueError(f"shard {i} needs shape {(stop - start, self.spec.dim)}, got {vectors.shape}")
        if self.spec.dtype in ("int8", "ubinary"):
            rows = quantize_int8(vectors, self.spec.dim)
        else:
            rows = vectors.astype(self.spec.dtype, copy=False)
        with atomic_path(self.path(i), f"shard {i} of the stored vectors", resumes=True) as tmp:
            with open(tmp, "wb") as f:
                np.save(f, rows)

    def view(self, rows: np.ndarray) -> np.ndarray:
        """Stored rows as this store reads them: float32, centered and re-normalised on a centered view."""
        if rows.dtype.names:  # int8 records
            rows = rows["q"].astype(np.float32) * rows["scale"][:, None]
        rows = np.asarray(rows, dtype=np.float32)
        return rows if self.offset is None else unit(rows - self.offset)

    def shard(self, i: int) -> np.ndarray:
        """Shard ``i`` as float32 (read through a memory map)."""
        if not self.done(i):
            raise XlsentError(f"{self.path(i)}: shard not encoded yet — rerun the job to resume")
        return self.view(np.load(self.path(i), mmap_mode="r"))

    def mean(self) -> np.ndarray:
        """The mean stored row (float64 sums, one shard at a time), computed once and kept in ``mean.npy``."""
        path = self.folder / "mean.npy"
        if path.exists():
            return np.load(path)
        total = np.zeros(self.spec.dim, dtype=np.float64)
        for i in range(self.n_shards):
            if not self.done(i):
                raise XlsentError(f"{self.path(i)}: shard not encoded yet — rerun the job to resume")
            total += self.view(np.load(self.path(i), mmap_mode="r")).astype(np.float64).sum(0)
        mean = (total / max(1, self.spec.rows)).astype(np.float32)
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as f:
                np.save(f, mean)
        return mean

    def centered(self) -> "EmbeddingStore":
        """The same store read with its mean subtracted (rows re-normalised)."""
        view = EmbeddingStore.__new__(EmbeddingStore)
        view.folder, view.spec, view.offset = self.folder, self.spec, self.mean()
        return view

    def sample(self, n: int, seed: int = 0) -> np.ndarray:
        """``n`` rows drawn at random (all rows when ``n`` ≥ rows), as float32, reading one shard at a time."""
        if n >= self.spec.rows:
            return np.concatenate([self.shard(i) for i in range(self.n_shards)])
        rows = np.sort(np.random.default_rng(seed).choice(self.spec.rows, n, replace=False))
        out = []
        for i in range(self.n_shards):
            start, stop = self.bounds(i)
            sel = rows[(rows >= start) & (rows < stop)] - start
            if len(sel):
                out.append(self.view(np.load(self.path(i), mmap_mode="r")[sel]))
        return np.concatenate(out)
