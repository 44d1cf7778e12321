"""The independent units of work of a mining job: encode one shard, search one shard.

Each task is a small picklable record of paths and settings whose ``run`` reads its inputs
from the work folder and writes exactly one output file atomically. A task whose output
exists is finished; the order in which tasks of one kind run does not matter. The local
runner (:meth:`xlsent.mining.job.MiningJob.run`) loops over them; a distributed engine only
has to ship the records to workers that see the same folder, and run ``select`` at the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlsent.data.text_source import read_lines_range
from xlsent.mining.index import IndexConfig, Searcher
from xlsent.mining.store import EmbeddingStore
from xlsent.utils.io import atomic_path


@dataclass(frozen=True)
class EncodeTask:
    """Embed lines [start, stop) of ``texts`` (one sentence per line) into shard ``shard`` of ``store``."""

    texts: Path
    store: Path
    shard: int
    model: str
    batch_size: int = 64
    lang: str = ""  # the texts' language (a word-gloss model glosses non-English text)

    def done(self) -> bool:
        return EmbeddingStore.open(self.store).done(self.shard)

    def run(self, encoder=None, show_progress: bool = False) -> None:
        """Encode the shard with ``encoder`` (default: the model loaded by name), L2-normalised."""
        from xlsent.encoding.encoder import Encoder

        store = EmbeddingStore.open(self.store)
        start, stop = store.bounds(self.shard)
        if encoder is None:
            encoder = Encoder.load(self.model)
        encoder = encoder.replace(normalize=True, batch_size=self.batch_size, show_progress=show_progress, memo=False)
        texts = read_lines_range(self.texts, start, stop)
        store.write(self.shard, encoder.encode(texts, self.lang or None))


@dataclass(frozen=True)
class SearchTask:
    """The ``k`` nearest ``targets`` of every vector in shard ``shard`` of ``queries`` → ``out`` (.npz)."""

    queries: Path
    shard: int
    targets: Path
    kind: str
    index: IndexConfig
    index_path: Path | None
    k: int
    out: Path
    center: bool = False  # search each side's vectors with that side's mean subtracted (per-language centering)

    def done(self) -> bool:
        return self.out.exists()

    def _store(self, folder: Path) -> EmbeddingStore:
        store = EmbeddingStore.open(folder)
        return store.centered() if self.center else store

    def searcher(self) -> Searcher:
        return Searcher(self._store(self.targets), self.kind, self.index, self.index_path)

    def run(self, searcher: Searcher | None = None) -> None:
        searcher = searcher if searcher is not None else self.searcher()
        sims, idx = searcher.search(self._store(self.queries).shard(self.shard), self.k)
        with atomic_path(self.out) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, sims=sims, idx=idx)


def load_knn(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    """The search results of all shards of one direction, in query order."""
    parts = [np.load(p) for p in paths]
    return np.concatenate([p["sims"] for p in parts]), np.concatenate([p["idx"] for p in parts])
