"""Where a mining job's tasks run: here, one after another (``local``), or on a Ray cluster (``ray``).

A job (:class:`xlsent.mining.job.MiningJob`) is a list of independent tasks that read and write its work
folder (:mod:`xlsent.mining.tasks`): encode a shard, fill a sub-index, search a shard (or a shard against one
search group of sub-indexes, then merge its groups), score a shard's candidates. An engine runs a list of them; the job itself trains each IVF index once, in the driver,
before the fan-out, and runs the selection's reduce step (in shard order) after it — so both engines
write the same pairs.

Ray (an optional extra, ``pip install 'xlsent[ray]'``, imported only here): ``ray.init`` joins the cluster
at ``address`` (or ``RAY_ADDRESS``), else starts a local one on this machine. Two actor pools — encoders,
each loading the model once on its own device, and index workers, each reading an index (or a search group of
it) once and holding one at a time — take the tasks; with ``--gpus-per-worker`` both kinds take that many GPUs
(an encoder encodes on its GPU, an index worker searches on it where its faiss can: a GPU build of faiss);
the work folder must be on storage every node sees. A worker that dies is restarted and its task retried
(tasks write their one output atomically, and a retried merge only finishes its clean-up, so a retry is
harmless), and a driver that is stopped resumes from
the finished shards when rerun with the same work folder, on either engine.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from xlsent.utils.errors import XlsentError, named

ENGINES = ("local", "ray")


@dataclass(frozen=True)
class EncoderSettings:
    """How a worker loads the encoder: model, backend, threads, device (resolved on the worker's node), dtype and
    the width its vectors are cut to."""

    model: str
    backend: str = "auto"
    threads: int = 1
    device: str = "auto"
    dtype: str = "auto"  # --dtype: the precision a torch model encodes in (auto: fp16 on a CUDA GPU, bf16 on a CPU timed faster in it, else fp32)
    dimensions: int | None = None  # --dimensions: the first N coordinates, renormalised (None: the full width)
    prompt: str | None = None  # the prompt prefixed to every text (None: the model's default)


class LocalEngine:
    """Every task in this process, one after another (the encoder and each searcher loaded once)."""

    name = "local"

    def __init__(self, encoder=None, search_gpu: int | None = None) -> None:
        self.encoder = encoder
        self.search_gpu = search_gpu  # the GPU faiss searches on while this engine computes (None: the CPU)

    def encode(self, tasks: Sequence, settings: EncoderSettings, advance: Callable[[], None]) -> None:
        if tasks and self.encoder is None:
            from xlsent.exporter.load import load_encoder

            self.encoder = load_encoder(settings.model, backend=settings.backend, threads=settings.threads,
                                        dimensions=settings.dimensions, prompt=settings.prompt)
        for task in tasks:
            task.run(self.encoder, show_progress=False)
            advance()

    def compute(self, tasks: Sequence, advance: Callable[[], None]) -> None:
        from xlsent.mining.index import gpu_search

        cache: dict = {}  # a searcher, loaded once for every shard searched against it
        with gpu_search(self.search_gpu):  # the process's setting as it was afterwards
            for task in tasks:
                task.run(cache)
                advance()


class EncodeWorker:
    """A Ray actor: the model loaded once, on the worker's device, with an explicit thread count."""

    def __init__(self, settings: EncoderSettings) -> None:
        import torch

        from xlsent.exporter.load import load_encoder
        from xlsent.utils.device import use_device, use_encoding_dtype

        threads = max(1, int(settings.threads))
        torch.set_num_threads(threads)  # Ray sets OMP_NUM_THREADS to the actor's CPUs; say it for torch too
        use_device(settings.device, "device")
        use_encoding_dtype(settings.dtype, "dtype")
        self.encoder = load_encoder(settings.model, backend=settings.backend, threads=threads,
                                    dimensions=settings.dimensions, prompt=settings.prompt)

    def run(self, task) -> None:
        task.run(self.encoder, show_progress=False)

    def peak_rss_mib(self) -> float:
        return _peak_rss_mib()


class ComputeWorker:
    """A Ray actor for the index tasks (fill, search, merge, score): what a task keeps (a searcher) stays for the
    next. ``gpu``: it was given a GPU (``--gpus-per-worker``), which faiss searches on where it can
    (:func:`xlsent.mining.index.use_gpu_search`)."""

    def __init__(self, threads: int, gpu: bool = False) -> None:
        import faiss

        from xlsent.mining.index import use_gpu_search

        faiss.omp_set_num_threads(max(1, int(threads)))
        use_gpu_search(0 if gpu else None)  # Ray makes the actor's GPUs the visible ones: the first is its own
        self.cache: dict = {}

    def run(self, task) -> None:
        task.run(self.cache)

    def searches_on_gpu(self) -> bool:
        from xlsent.mining.index import gpu_resources

        return gpu_resources() is not None

    def peak_rss_mib(self) -> float:
        return _peak_rss_mib()


def _peak_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _last_line(e: Exception) -> str:
    """The last line of a Ray error (its cause, e.g. "ModuleNotFoundError: No module named 'xlsent'")."""
    text = str(e).strip()
    return text.splitlines()[-1][:200] if text else type(e).__name__


def _reachable(address: str) -> None:
    """A cluster's HOST:PORT answers, checked in seconds (Ray itself waits minutes for an absent one)."""
    import socket

    if address.startswith("ray://"):
        raise XlsentError(f"{named('address', address)}: Ray Client (ray://) is not supported — give the head's "
                          "HOST:PORT (GCS, default port 6379) or submit with "
                          "`ray job submit --working-dir . -- xlsent …`")
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise XlsentError(f"{named('address', address)}: give auto or HOST:PORT of the cluster's head (e.g. "
                          "10.0.0.5:6379)")
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
    except OSError as e:
        raise XlsentError(f"{named('address', address)}: no Ray cluster answers there ({e.strerror or e}) — "
                          "start one with `ray start --head`, or leave out address= for a local cluster") from None


def _import_ray():
    try:
        import ray
    except ImportError:
        raise XlsentError(f"{named('engine', 'ray')} needs Ray: pip install 'xlsent[ray]' (or pip install ray)"
                          ) from None
    return ray


class RayEngine:
    """Tasks on a Ray cluster, through two actor pools of ``workers`` actors each."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int = 2, cpus_per_worker: float = 1.0,
                 gpus_per_worker: float = 0.0, local_cpus: int | None = None) -> None:
        if workers < 1:
            raise XlsentError(f"{named('workers', workers)}: give at least 1")
        if cpus_per_worker <= 0:
            raise XlsentError(f"cpus_per_worker={cpus_per_worker:g}: must be > 0")
        if gpus_per_worker < 0:
            raise XlsentError(f"gpus_per_worker={gpus_per_worker:g}: must be ≥ 0")
        self.ray = _import_ray()
        self.workers, self.cpus, self.gpus = int(workers), float(cpus_per_worker), float(gpus_per_worker)
        self.worker_peak_mib = 0.0  # the largest peak resident memory of an actor so far
        self.connect(address, local_cpus)
        self.check_gpus()

    def check_gpus(self) -> None:
        """``--gpus-per-worker`` on a cluster with fewer GPUs than one worker takes is one line (Ray would wait for
        them for ever)."""
        self.gpu_slots = None  # how many actors of --gpus-per-worker GPUs the cluster holds at once (None: no GPUs)
        if self.gpus > 0:
            there = float(self.ray.cluster_resources().get("GPU", 0))
            if there < self.gpus:
                raise XlsentError(f"gpus_per_worker={self.gpus:g}: the Ray cluster has {there:g} GPU(s) — leave out "
                                  "gpus_per_worker= to encode and search on CPUs, or join a cluster with GPUs")
            self.gpu_slots = int(there // self.gpus + 1e-9)  # more actors would wait for a GPU and hold their task

    def connect(self, address: str | None, local_cpus: int | None) -> None:
        """Join the cluster at ``address`` (or ``RAY_ADDRESS``); with neither, start a local one here."""
        ray = self.ray
        address = address or os.environ.get("RAY_ADDRESS") or None
        if address and address != "auto":
            _reachable(address)
        if ray.is_initialized():
            return
        try:
            if address:
                ray.init(address=address, logging_level="ERROR", log_to_driver=False)
            else:
                ray.init(num_cpus=local_cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            where = named("address", address) if address else "a local Ray cluster"
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise XlsentError(f"{where}: could not connect ({first}) — start one with `ray start --head`, give "
                              "its address, or leave out address= for a local cluster") from None

    def _run(self, cls, args: tuple, tasks: Sequence, advance: Callable[[], None], cpus: float,
             gpus: float = 0.0) -> None:
        """``tasks`` through a pool of ``workers`` actors of ``cls(*args)``, which are released at the end."""
        ray = self.ray
        from ray.util import ActorPool

        remote = ray.remote(num_cpus=cpus, num_gpus=gpus, max_restarts=3, max_task_retries=3)(cls)
        n = min(self.workers, len(tasks), self.gpu_slots if gpus > 0 else len(tasks))
        actors = [remote.remote(*args) for _ in range(n)]
        try:
            for _ in ActorPool(actors).map_unordered(lambda a, t: a.run.remote(t), list(tasks)):
                advance()
            peaks = ray.get([a.peak_rss_mib.remote() for a in actors])
            self.worker_peak_mib = max([self.worker_peak_mib, *peaks])
            if cls is ComputeWorker and gpus > 0 and not all(ray.get([a.searches_on_gpu.remote() for a in actors])):
                warnings.warn("--gpus-per-worker: an index worker's faiss cannot use its GPU (a CPU build): it "
                              "searched on its CPUs — install a GPU build on the nodes (e.g. pip uninstall faiss-cpu "
                              "&& pip install faiss-gpu-cu12)", stacklevel=2)
        except (ray.exceptions.RayTaskError, ray.exceptions.RayActorError, ray.exceptions.RaySystemError) as e:
            if isinstance(getattr(e, "cause", None), XlsentError):  # a user error in a task: its own one line
                raise XlsentError(str(e.cause)) from None
            why = _last_line(e)
            hint = ("every node needs xlsent installed (or submit with `ray job submit --working-dir . -- xlsent …`) "
                    "and the work folder on storage it sees" if "ModuleNotFoundError" in why or "ImportError" in why
                    or not isinstance(e, ray.exceptions.RayTaskError) else "see the worker's log")
            raise XlsentError(f"a Ray worker could not run its task ({why}) — {hint}; finished shards are kept, "
                              "rerun to resume") from None
        finally:
            for a in actors:
                ray.kill(a)

    def encode(self, tasks: Sequence, settings: EncoderSettings, advance: Callable[[], None]) -> None:
        if tasks:
            threads = max(1, round(self.cpus))
            worker = replace(settings, threads=threads)
            self._run(EncodeWorker, (worker,), tasks, advance, self.cpus, self.gpus)

    def compute(self, tasks: Sequence, advance: Callable[[], None]) -> None:
        if tasks:  # the workers read what the driver and earlier tasks wrote in the work folder
            self._run(ComputeWorker, (max(1, round(self.cpus)), self.gpus > 0), tasks, advance, self.cpus, self.gpus)
