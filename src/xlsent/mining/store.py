"""Sentence embeddings of one side of a mining job, in fixed-size shards on disk.

A store is a folder: ``store.json`` (rows, dimension, shard size, dtype) and one
``shard-00000.npy`` per shard, each written atomically, so a killed job leaves only
whole shards and resumes with the first missing one. Shards are read memory-mapped:
a corpus larger than RAM is never loaded whole.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from xlsent.utils.errors import XlsentError
from xlsent.utils.io import atomic_path, write_json_atomic

DTYPES = ("float16", "float32")


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
        with atomic_path(self.path(i)) as tmp:
            with open(tmp, "wb") as f:
                np.save(f, vectors.astype(self.spec.dtype, copy=False))

    def shard(self, i: int) -> np.ndarray:
        """Shard ``i`` as float32 (read through a memory map)."""
        if not self.done(i):
            raise XlsentError(f"{self.path(i)}: shard not encoded yet — rerun the job to resume")
        return np.asarray(np.load(self.path(i), mmap_mode="r"), dtype=np.float32)

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
                out.append(np.asarray(np.load(self.path(i), mmap_mode="r")[sel], dtype=np.float32))
        return np.concatenate(out)
