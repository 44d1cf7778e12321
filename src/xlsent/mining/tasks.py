"""The independent units of work of a mining job: encode a shard, fill a sub-index, search a shard (against one
search group of sub-indexes, then merge the groups' results), score a shard's candidates (the selection's map step).

Each task is a small picklable record of paths and settings whose ``run`` reads its inputs
from the work folder and writes exactly one output file atomically (a merge then removes the group files it
read). A task whose output exists is finished; the order in which tasks of one kind run does not matter. An engine
(:mod:`xlsent.mining.engine`) runs them here or on workers that see the same folder; ``run(cache)``
may keep what is worth loading once per worker (a searcher) in ``cache``. The driver trains the
indexes before the fan-out and runs the selection's reduce step after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlsent.mining.index import IndexConfig, Searcher, code_offset, exact_top, fill_part, gather, merge_top
from xlsent.mining.inputs import SideInput
from xlsent.mining.margin import Candidates, best_candidates
from xlsent.mining.store import EmbeddingStore
from xlsent.similarity import knn_mean
from xlsent.utils.io import atomic_path


def save_npz(path: Path, **arrays) -> None:
    """``arrays`` in one ``.npz`` at ``path``, written atomically (a task's one output)."""
    with atomic_path(path, f"the mining job's {Path(path).parent.name}/{Path(path).name}", resumes=True) as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)


@dataclass(frozen=True)
class EncodeTask:
    """Embed the unique sentences of rows [start, stop) of ``texts`` into shard ``shard`` of ``store``."""

    texts: SideInput
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
        store.write(self.shard, encoder.encode(self.texts.texts(np.arange(start, stop)), self.lang or None))


def open_store(folder: Path, center: bool) -> EmbeddingStore:
    """The store at ``folder``, its vectors centered (each side's mean subtracted) when ``center``."""
    store = EmbeddingStore.open(folder)
    return store.centered() if center else store


@dataclass(frozen=True)
class FillTask:
    """Target shards ``shards`` of ``store`` added to a copy of the ``trained`` index → sub-index ``out``."""

    store: Path
    shards: range
    trained: Path
    out: Path
    center: bool = False
    index: IndexConfig | None = None  # its center_codes: what a ubinary store's bits are taken against

    def done(self) -> bool:
        return self.out.exists()

    def run(self, cache: dict | None = None) -> None:
        store = open_store(self.store, self.center)
        fill_part(store, self.shards, self.trained, self.out, code_offset(store, self.index or IndexConfig()))


@dataclass(frozen=True)
class SearchTask:
    """The ``k`` nearest ``targets`` of every vector in shard ``shard`` of ``queries`` → ``out`` (.npz: cosines,
    target rows, and each query's mean cosine to its ``k`` neighbours, the margin's neighbourhood term)."""

    queries: Path
    shard: int
    targets: Path
    kind: str
    index: IndexConfig
    index_dir: Path | None
    k: int
    out: Path
    center: bool = False  # search each side's vectors with that side's mean subtracted (per-language centering)
    group: int | None = None  # the search group of sub-indexes searched (None: every one; IndexConfig.groups)
    cells: Path | None = None  # a grouped search: the shard's cells, found by the first of its groups, kept here

    def done(self) -> bool:
        return self.out.exists()

    def _store(self, folder: Path) -> EmbeddingStore:
        return open_store(folder, self.center)

    def searcher(self) -> Searcher:
        return Searcher(self._store(self.targets), self.kind, self.index, self.index_dir, self.group)

    def run(self, cache: dict | None = None) -> None:
        """Search; ``cache`` keeps the searcher for the next task (one load per worker and index), one at a time:
        a worker holds one side's index, or one group of it, whatever it ran before."""
        cache = cache if cache is not None else {}
        key = ("searcher", self.targets, self.kind, self.index_dir, self.group)
        if key not in cache:
            for old in [k for k in cache if k[0] == "searcher"]:
                del cache[old]
            cache[key] = self.searcher()
        queries = self._store(self.queries)
        own = code_offset(queries, self.index) if self.index.center_codes == "own" else None  # else the targets'
        searcher, x = cache[key], queries.shard(self.shard)
        if self.group is None:
            sims, idx = searcher.search(x, self.k, own)
            save_npz(self.out, sims=sims, idx=idx, mean=knn_mean(sims, idx, self.k))
            return
        # one group: its shortlist, re-scored once all groups' are merged (MergeTask); the cells found once a shard
        if self.cells is not None and self.cells.exists():
            with np.load(self.cells) as c:
                cells = (c["sims"], c["cells"])
        else:
            cells = searcher.cells(x, own)
            if self.cells is not None:
                save_npz(self.cells, sims=cells[0], cells=cells[1])
        scores, idx = searcher.shortlist(x, self.k, own, cells)
        save_npz(self.out, scores=scores, idx=idx)


@dataclass(frozen=True)
class MergeTask:
    """Shard ``shard`` of ``queries``: the shortlists of every search group (``parts``) merged into the one the whole
    index gives (:func:`xlsent.mining.index.merge_top`: by Hamming distance for a ubinary store, else by the index's
    scores; then row), re-scored once by the stored vectors' cosines → its ``k`` nearest ``targets`` and their
    mean cosine, in ``out`` as an ungrouped search writes them. The groups' files and the shard's cells are removed
    once it is written."""

    parts: tuple[Path, ...]
    k: int
    out: Path
    queries: Path
    shard: int
    targets: Path
    center: bool = False
    cells: Path | None = None

    def done(self) -> bool:
        return self.out.exists()

    def _store(self, folder: Path) -> EmbeddingStore:
        return open_store(folder, self.center)

    def run(self, cache: dict | None = None) -> None:
        if not self.out.exists():  # else a retry of a merge that wrote its result: only the clean-up is left
            results = []
            for p in self.parts:
                with np.load(p) as x:
                    results.append((x["scores"], x["idx"]))
            targets = self._store(self.targets)
            rows = merge_top(results, results[0][1].shape[1], smaller_first=targets.spec.dtype == "ubinary")[1]
            x = np.ascontiguousarray(self._store(self.queries).shard(self.shard), dtype=np.float32)
            sims, idx = exact_top(x, rows, min(self.k, len(targets)), lambda ids: gather(targets, ids))
            save_npz(self.out, sims=sims, idx=idx, mean=knn_mean(sims, idx, self.k))
        for p in (*self.parts, *([self.cells] if self.cells else [])):
            p.unlink(missing_ok=True)


@dataclass(frozen=True)
class ScoreTask:
    """The selection's map step for one query shard: its candidates scored with the margin ``margin`` (its own
    k-NN means and every row's of the other direction) → each row's best candidate, score and runner-up."""

    knn: Path
    other: tuple[Path, ...]  # the other direction's search results, every shard in order
    margin: str
    out: Path

    def done(self) -> bool:
        return self.out.exists()

    def run(self, cache: dict | None = None) -> None:
        cache = cache if cache is not None else {}
        key = ("means", self.other)
        if key not in cache:
            for old in [k for k in cache if k[0] == "means"]:  # one direction's means held at a time
                del cache[old]
            cache[key] = np.concatenate([np.load(p)["mean"] for p in self.other])
        own = np.load(self.knn)
        c = best_candidates(own["sims"], own["idx"], own["mean"], cache[key], self.margin)
        save_npz(self.out, best=c.best, score=c.score, second=c.second)


def load_candidates(paths: list[Path]) -> Candidates:
    """The map step's results of one direction, in query order."""
    parts = [np.load(p) for p in paths]
    return Candidates.concat([Candidates(p["best"], p["score"], p["second"]) for p in parts])


def load_knn(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    """The search results of all shards of one direction, in query order."""
    parts = [np.load(p) for p in paths]
    return np.concatenate([p["sims"] for p in parts]), np.concatenate([p["idx"] for p in parts])
