"""A resumable bitext-mining job in a work folder.

Layout of ``workdir``::

    job.json              settings and fingerprints (a rerun checks them)
    inputs/               each side's input, de-duplicated without reading it into one process
                          (:mod:`xlsent.mining.inputs`): its line offsets, the line numbers of its unique
                          sentences (row i = embedding i); ``src.txt``/``tgt.txt`` for sentences given as lists
    src/, tgt/            embedding stores (:mod:`xlsent.mining.store`), one file per shard
    index-src/, index-tgt/   IVF indexes, when one is used: trained.faiss, then part-00000.faiss … (sub-indexes)
    knn/fwd-00000.npz …   per query shard: k nearest targets of the sources (fwd), sources of the targets (bwd)
                          (with search groups, first a shortlist per shard and group, fwd-00000-g000.npz …, and
                          the shard's cells, fwd-00000-cells.npz)
    knn/score-ratio/fwd-00000.npz …   per query shard and margin: each row's best candidate, score, runner-up

Steps, each a list of independent tasks (:mod:`xlsent.mining.tasks`) that an engine runs here or on a
cluster: encode every shard of both sides; train each IVF index once, here, then fill its sub-indexes;
search every shard in both directions (with search groups, every shard against every group, then each shard's
groups merged); score every shard's candidates (the selection's map step). Then,
here, the reduce step (:func:`xlsent.mining.margin.select_from_candidates`): concatenated in shard
order, thresholded and made one-to-one — the same pairs as :func:`~xlsent.mining.margin.select_pairs`
on the whole lists. Every file appears atomically; a killed job resumes from its last finished shard. A
change of model, sentences, shard size or dtype makes the folder unusable (error, or ``overwrite``); a
change of search settings reruns the search — and rebuilds the indexes only if a setting they are built with
changed (not for k, ``nprobe``, ``rescore`` or ``groups``); selection settings are free.
"""

from __future__ import annotations

import hashlib
import json
import resource
import shutil
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from xlsent.mining.index import IndexConfig, choose_kind, group_parts, index_parts, sub_index_paths, train_index
from xlsent.mining.margin import select_from_candidates
from xlsent.mining.store import EmbeddingStore, StoreSpec, bytes_per_sentence
from xlsent.mining.inputs import SideInput, deduplicate
from xlsent.mining.tasks import EncodeTask, FillTask, MergeTask, ScoreTask, SearchTask, load_candidates
from xlsent.similarity import SAME_TEXT, margin
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import check_space, write_json_atomic, write_text_atomic, writing


#: known pairs scored against the stores at a time (:meth:`MiningJob.known_margins`)
KNOWN_BLOCK = 1024


@dataclass
class MineConfig:
    k: int = 4
    mode: str = "max"
    margin: str = "ratio"
    threshold: float | str | None = "auto"  # "auto" (estimated from the scores), a number, or None (all)
    dedupe: bool = True
    index: IndexConfig = field(default_factory=IndexConfig)
    shard_size: int = 50_000
    dtype: str = "float16"  # the store's precision: float32 | float16 | int8 | ubinary (xlsent.mining.store)
    batch_size: int = 64
    memory_gib: float = 4.0
    center: bool = False  # per-language centering: each side's mean subtracted before search and margins


def open_input(workdir: str | Path, side: str, path: str | Path, cfg: MineConfig, engine=None,
               advance=lambda: None) -> SideInput:
    """One side's input file (one sentence per line), de-duplicated into ``workdir/inputs`` by blocks of
    ``cfg.shard_size`` lines on ``engine`` (:func:`xlsent.mining.inputs.deduplicate`)."""
    return deduplicate(path, Path(workdir) / "inputs", side, cfg.shard_size, engine, advance)


def _list_input(workdir: str | Path, side: str, lines: list[str], block: int) -> SideInput:
    """Sentences given as a list, written one per line into the work folder, then read as a file is."""
    if not lines:
        raise XlsentError("mining needs at least one sentence on each side")
    bad = next((t for t in lines if "\n" in t or "\r" in t), None)
    if bad is not None:
        raise XlsentError(f"a sentence contains a line break ({bad[:40]!r}…): one sentence per line is the job's "
                          "storage format — normalise whitespace first")
    path = Path(workdir) / "inputs" / f"{side}.txt"
    text = "".join(t + "\n" for t in lines)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
    return deduplicate(path, path.parent, side, block)


def _digest_array(a: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


SEARCH_ONLY = ("k", "nprobe", "rescore", "groups", "exact_max_pairs", "ties")  # read when searching, not when the
# indexes are built (exact_max_pairs acts through the kinds, which are kept): a change keeps the built indexes


def _index_shape(search_key: dict) -> dict:
    """What of a job's search settings its built indexes depend on."""
    return {**{k: v for k, v in search_key.items() if k not in SEARCH_ONLY and k != "index"},
            "index": {k: v for k, v in search_key.get("index", {}).items() if k not in SEARCH_ONLY}}


def peak_rss_gib() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


class MiningJob:
    """Encode → search → select, over the unique sentences of two inputs, in ``workdir``.

    ``src``/``tgt``: a de-duplicated input file (:func:`open_input`) or a list of sentences (written to the
    work folder and read from there the same way)."""

    def __init__(self, workdir: str | Path, src: list[str] | SideInput, tgt: list[str] | SideInput, model_name: str,
                 cfg: MineConfig, encoder=None, overwrite: bool = False, src_lang: str = "", tgt_lang: str = "") -> None:
        from xlsent.encoding.encoder import Encoder

        self.inputs = {name: side if isinstance(side, SideInput) else _list_input(workdir, name, side, cfg.shard_size)
                       for name, side in (("src", src), ("tgt", tgt))}
        self.model_name = model_name
        self.encoder = encoder if encoder is not None else Encoder.load(model_name)
        self.langs = {"src": src_lang, "tgt": tgt_lang}
        s, t = self.inputs["src"], self.inputs["tgt"]
        self._setup(workdir, cfg, self.encoder.dimension, len(s), len(t),
                    {"model": self.encoder.fingerprint, "src": s.sentences, "tgt": t.sentences}, overwrite)

    def texts(self, side: str, rows) -> list[str]:
        """The sentences at embedding rows ``rows`` of ``side`` (``src`` or ``tgt``)."""
        return self.inputs[side].texts(rows)

    @classmethod
    def from_embeddings(cls, workdir: str | Path, src: np.ndarray, tgt: np.ndarray, cfg: MineConfig,
                        overwrite: bool = False) -> "MiningJob":
        """A job over embeddings computed elsewhere (L2-normalised rows): its stores are filled, nothing to encode."""
        job = cls.__new__(cls)
        job.model_name, job.encoder, job.langs, job.inputs = "", None, {"src": "", "tgt": ""}, {}
        key = {"model": "precomputed", "src": _digest_array(src), "tgt": _digest_array(tgt)}
        job._setup(workdir, cfg, src.shape[1], len(src), len(tgt), key, overwrite)
        for store, vecs in ((job.src, src), (job.tgt, tgt)):
            for i in store.missing():
                a, b = store.bounds(i)
                store.write(i, vecs[a:b])
        return job

    def _setup(self, workdir, cfg: MineConfig, dim: int, n_src: int, n_tgt: int, key: dict, overwrite: bool) -> None:
        if cfg.k < 1:
            raise XlsentError(f"k = {cfg.k}: must be ≥ 1")
        self.dir, self.cfg = Path(workdir).resolve(), cfg  # absolute: a worker may start elsewhere
        # a target shard at float32 plus a query shard must fit an eighth of the budget
        shard = min(cfg.shard_size, max(1000, int(cfg.memory_gib * 2**30 / 8 / (2 * dim * 4))))
        encode_key = {**key, "dim": dim, "shard_size": shard, "dtype": cfg.dtype}
        self.kinds = {"fwd": choose_kind(n_src, n_tgt, dim, cfg.index, cfg.memory_gib, cfg.dtype),
                      "bwd": choose_kind(n_tgt, n_src, dim, cfg.index, cfg.memory_gib, cfg.dtype)}
        binary_only = ("rescore", "bits", "center_codes")  # left out where they change nothing: older folders stay
        all_exact = set(self.kinds.values()) == {"exact"}
        index_key = {k: v for k, v in asdict(cfg.index).items()
                     if not (k == "bits" and not v) and not (k == "groups" and (v == 1 or all_exact))
                     and not (k in binary_only and cfg.dtype != "ubinary")}
        binary_ivf = cfg.dtype == "ubinary" and not all_exact  # since the merged sub-indexes: ties at the shortlist's
        search_key = {"k": cfg.k, "index": index_key, "kinds": [self.kinds["fwd"], self.kinds["bwd"]],  # edge differ
                      "layout": 2, **({"center": True} if cfg.center else {}),  # 2: sub-indexes, k-NN means kept
                      **({"ties": 2} if binary_ivf else {})}
        record = self.dir / "job.json"
        if record.exists():
            old = json.loads(record.read_text())
            if old.get("encode") != encode_key:
                if not overwrite:
                    raise XlsentError(f"{self.dir}: holds a mining job for other sentences, another model or "
                                      "other shard settings — use a new --workdir or pass --overwrite")
                warnings.warn(f"{self.dir}: holds another mining job — replaced (overwrite)", stacklevel=2)
                for p in self.dir.iterdir():  # everything but this job's inputs
                    if p.name != "inputs":
                        shutil.rmtree(p) if p.is_dir() else p.unlink()
            elif old.get("search") != search_key:  # same embeddings, new search settings: new search results, and
                stale = [self.dir / "knn"]  # new indexes only if a setting they are built with changed
                if _index_shape(old.get("search", {})) != _index_shape(search_key):
                    stale += [self.dir / "index-src", self.dir / "index-tgt", self.dir / "index-src.faiss",
                              self.dir / "index-tgt.faiss"]
                for p in stale:
                    shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.src = EmbeddingStore(self.dir / "src", StoreSpec(n_src, dim, shard, cfg.dtype))
        self.tgt = EmbeddingStore(self.dir / "tgt", StoreSpec(n_tgt, dim, shard, cfg.dtype))
        write_json_atomic(record, {"encode": encode_key, "search": search_key, "config": asdict(cfg)})

    # -- units of work -------------------------------------------------------------------------------------
    def encode_tasks(self) -> list[EncodeTask]:
        return [EncodeTask(self.inputs[side], store.folder, i, self.model_name, self.cfg.batch_size, self.langs[side])
                for side, store in (("src", self.src), ("tgt", self.tgt)) for i in store.missing()]

    def _view(self, store: EmbeddingStore) -> EmbeddingStore:
        return store.centered() if self.cfg.center else store

    def _directions(self):
        """(direction, query store, target store, target side's name)."""
        return (("fwd", self.src, self.tgt, "tgt"), ("bwd", self.tgt, self.src, "src"))

    def train_indexes(self) -> None:
        """Each IVF index trained once, here, before its sub-indexes are filled in parallel."""
        for d, _, targets, name in self._directions():
            if self.kinds[d] != "exact":
                trained = sub_index_paths(self.dir / f"index-{name}", 0)[0]
                if not trained.exists():
                    train_index(self._view(targets), self.kinds[d], self.cfg.index, trained)

    def fill_tasks(self) -> list[FillTask]:
        out = []
        for d, _, targets, name in self._directions():
            if self.kinds[d] != "exact":
                parts = index_parts(targets, self.kinds[d], self.cfg.index)
                trained, paths = sub_index_paths(self.dir / f"index-{name}", len(parts))
                out += [FillTask(targets.folder, shards, trained, path, self.cfg.center, self.cfg.index)
                        for shards, path in zip(parts, paths) if not path.exists()]
        return out

    def search_groups(self, direction: str, targets: EmbeddingStore) -> int:
        """How many search groups a direction's sub-indexes form (1: no grouping; exact search already holds one
        target shard at a time)."""
        kind = self.kinds[direction]
        if kind == "exact" or self.cfg.index.groups <= 1:
            return 1
        return len(group_parts(len(index_parts(self._view(targets), kind, self.cfg.index)), self.cfg.index.groups))

    def search_tasks(self) -> list[SearchTask]:
        """Every unfinished search, group by group (a worker takes its tasks in this order, so it loads each group
        once and holds one at a time); a grouped search writes ``knn/fwd-00000-g000.npz`` …, merged by
        :meth:`merge_tasks`."""
        out = []
        for d, queries, targets, name in self._directions():
            kind = self.kinds[d]
            index_dir = None if kind == "exact" else self.dir / f"index-{name}"
            groups = self.search_groups(d, targets)
            for g in range(groups):
                for i in range(queries.n_shards):
                    final = self.dir / "knn" / f"{d}-{i:05d}.npz"
                    task = SearchTask(queries.folder, i, targets.folder, kind, self.cfg.index, index_dir, self.cfg.k,
                                      final if groups == 1 else final.with_name(f"{final.stem}-g{g:03d}.npz"),
                                      self.cfg.center, None if groups == 1 else g,
                                      None if groups == 1 else final.with_name(f"{final.stem}-cells.npz"))
                    if not final.exists() and not task.done():
                        out.append(task)
        return out

    def merge_tasks(self) -> list[MergeTask]:
        """Each query shard's grouped results merged into its k nearest (nothing when the search is not grouped)."""
        out = []
        for d, queries, targets, _ in self._directions():
            groups = self.search_groups(d, targets)
            if groups > 1:
                for i, final in enumerate(self.knn_paths(d)):
                    if not final.exists():
                        parts = tuple(final.with_name(f"{final.stem}-g{g:03d}.npz") for g in range(groups))
                        out.append(MergeTask(parts, self.cfg.k, final, queries.folder, i, targets.folder,
                                             self.cfg.center, final.with_name(f"{final.stem}-cells.npz")))
        return out

    def knn_paths(self, direction: str) -> list[Path]:
        n = (self.src if direction == "fwd" else self.tgt).n_shards
        return [self.dir / "knn" / f"{direction}-{i:05d}.npz" for i in range(n)]

    def score_paths(self, direction: str) -> list[Path]:
        return [p.parent / f"score-{self.cfg.margin}" / p.name for p in self.knn_paths(direction)]

    def score_tasks(self) -> list[ScoreTask]:
        out = []
        for d, other in (("fwd", "bwd"), ("bwd", "fwd")):
            others = tuple(self.knn_paths(other))
            for knn, score in zip(self.knn_paths(d), self.score_paths(d)):
                if not score.exists():
                    out.append(ScoreTask(knn, others, self.cfg.margin, score))
        return out

    # -- running: an engine runs the tasks; the driver trains the indexes and runs the reduce step -----------
    def disk_needed(self) -> int:
        """Bytes the unfinished part of the job writes under its folder, at least: the stored vectors of the shards
        not yet encoded, and each sentence's k neighbours (ids and scores) in both directions."""
        rows = 0
        for store in (self.src, self.tgt):
            for i in store.missing():
                start, stop = store.bounds(i)
                rows += stop - start
        stored = bytes_per_sentence(self.src.spec.dtype, self.src.spec.dim)["stored"]
        return rows * stored + (self.src.spec.rows + self.tgt.spec.rows) * int(self.cfg.k) * 12

    def run(self, console=None, show_progress: bool = True, engine=None, encoder_settings=None) -> dict:
        """Run every unfinished task on ``engine`` (default: here, one after another); returns timings (seconds).
        ``encoder_settings`` (:class:`xlsent.mining.engine.EncoderSettings`) say how a remote worker loads the model."""
        from xlsent.mining.engine import EncoderSettings, LocalEngine

        engine = engine if engine is not None else LocalEngine(self.encoder)
        settings = encoder_settings or EncoderSettings(self.model_name)
        need = self.disk_needed()
        check_space(self.dir, need, "the mining job's vectors and neighbours")
        with writing(self.dir, "the mining job", need=need, resumes=True):  # a task's failure, with the need
            return self._run(engine, settings, console, show_progress)

    def _run(self, engine, settings, console, show_progress: bool) -> dict:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
            TimeRemainingColumn

        timings = {"encode_s": 0.0, "index_s": 0.0, "search_s": 0.0, "score_s": 0.0}
        enc = self.encode_tasks() if self.model_name else []
        todo_enc = self.src.n_shards + self.tgt.n_shards
        cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                TextColumn("ETA"), TimeRemainingColumn())
        with Progress(*cols, console=console, disable=not show_progress, transient=False) as bar:
            t = bar.add_task("encode shards", total=todo_enc, completed=todo_enc - len(enc))
            t0 = time.perf_counter()
            engine.encode(enc, settings, lambda: bar.advance(t))
            timings["encode_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            self.train_indexes()
            fill = self.fill_tasks()
            if fill:
                t = bar.add_task("fill sub-indexes", total=len(fill))
                engine.compute(fill, lambda: bar.advance(t))
            timings["index_s"] = time.perf_counter() - t0
            groups = {d: self.search_groups(d, targets) for d, _, targets, _ in self._directions()}
            shards = self.src.n_shards + self.tgt.n_shards
            searches = sum(q.n_shards * groups[d] for d, q, _, _ in self._directions())  # a shard and group each
            merges = sum(q.n_shards for d, q, _, _ in self._directions() if groups[d] > 1)
            for step, label, make, total in (
                    ("search_s", f"search shards ({self.kinds['fwd']}/{self.kinds['bwd']})", self.search_tasks,
                     searches),
                    ("search_s", "merge search groups", self.merge_tasks, merges),
                    ("score_s", "score candidates", self.score_tasks, shards)):
                tasks = make()  # each step reads what the one before wrote: listed once it is done
                if step == "search_s" and tasks:  # any new search result changes the k-NN means every score uses
                    for folder in (self.dir / "knn").glob("score-*"):
                        shutil.rmtree(folder)
                if not total:
                    continue
                t = bar.add_task(label, total=total, completed=total - len(tasks))
                t0 = time.perf_counter()
                engine.compute(tasks, lambda: bar.advance(t))
                timings[step] += time.perf_counter() - t0
        return timings

    def select(self, counts: dict | None = None, threshold: float | str | None = "config",
               known: np.ndarray | None = None, known_given: int | None = None):
        """Score the search results and select pairs (``counts`` receives what each step removed);
        ``threshold`` replaces the config's (``None`` = every one-to-one candidate); ``known``: margin scores
        of known translations (:meth:`known_margins`: those the model retrieves, of ``known_given``) that anchor
        an ``"auto"`` cut."""
        from xlsent.mining.engine import LocalEngine

        LocalEngine().compute(self.score_tasks(), lambda: None)  # any map step not run yet (e.g. a new margin)
        c = self.cfg
        cut = c.threshold if threshold == "config" else threshold
        return select_from_candidates(load_candidates(self.score_paths("fwd")), load_candidates(self.score_paths("bwd")),
                                      c.mode, cut, c.dedupe, counts, known, known_given)

    def known_margins(self, src: np.ndarray, tgt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The margin score of each known translation pair ``(src[i], tgt[i])`` (L2-normalised rows of this job's model)
        as if both sentences were lines of this job's sides, and whether the model *retrieves* it: whether the partner
        is at least as near (cosine) as every other line, in one direction or the other — a proxy for the pair being a
        candidate, which the mining picks by margin among the nearest lines. Each sentence's ``k`` nearest neighbours
        are taken over the other side's stored lines and its own partner — once, where the partner's text is a stored
        line too (a stored row within :data:`xlsent.similarity.SAME_TEXT` of it) — with the config's margin and
        centering. Exact search, one stored shard and :data:`KNOWN_BLOCK` pairs at a time: where the job searched an
        approximate index (IVF, sign bits), its own candidates' neighbourhoods can miss a neighbour, and their margins
        come out a little higher than these."""
        stores = {"src": self._view(self.src), "tgt": self._view(self.tgt)}
        src, tgt = stores["src"].view(src), stores["tgt"].view(tgt)  # centered as the stores are read
        own = np.einsum("ij,ij->i", src, tgt)

        def top_k(queries: np.ndarray, partners: np.ndarray, own: np.ndarray,
                  store: EmbeddingStore) -> tuple[np.ndarray, np.ndarray]:
            best, nearest = own[:, None], np.full(len(own), -np.inf)
            for i in range(store.n_shards):
                shard = np.asarray(store.shard(i), dtype=np.float32).T
                sims = queries @ shard
                sims[(partners @ shard) >= SAME_TEXT] = -np.inf  # the partner's own text: counted once, as own
                if sims.shape[1]:
                    nearest = np.fmax(nearest, np.nanmax(np.where(np.isnan(sims), -np.inf, sims), axis=1))
                both = np.concatenate([best, sims], axis=1)
                k = min(self.cfg.k, both.shape[1])
                best = -np.partition(-both, k - 1, axis=1)[:, :k]
            # a masked row is no neighbour; the partner retrieved: no other line nearer
            return np.nanmean(np.where(np.isfinite(best), best, np.nan), axis=1), own >= nearest

        out = np.empty(len(own), dtype=np.float64)
        found = np.zeros(len(own), dtype=bool)
        for a in range(0, len(own), KNOWN_BLOCK):
            b = slice(a, a + KNOWN_BLOCK)
            (fwd, f_found), (bwd, b_found) = (top_k(src[b], tgt[b], own[b], stores["tgt"]),
                                              top_k(tgt[b], src[b], own[b], stores["src"]))
            out[b] = margin(own[b], (fwd + bwd) / 2, self.cfg.margin)
            found[b] = f_found | b_found
        return out, found


