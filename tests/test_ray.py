"""Mining on a Ray cluster (``--engine ray``): the same pairs as one process, a killed worker, a stopped driver.

One local cluster of two CPUs serves the whole module; actors take half a CPU each (whole-CPU actors on two
CPUs can hang, ray#44687). Skipped, with the reason, where Ray is not installed — under CI (`.ci/run` installs
it) a missing Ray fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import need
from test_mining import _corpus
from xlsent.mining.index import IndexConfig
from xlsent.mining.job import MineConfig, MiningJob
from xlsent.mining.margin import select_pairs
from xlsent.mining.tasks import load_knn


@pytest.fixture(scope="module", autouse=True)
def ray():
    """Ray, for every test here: skipped where it is not installed; under CI, which installs it, a failure."""
    return need("ray")


@pytest.fixture(scope="module")
def engine(ray):
    from xlsent.mining.engine import RayEngine

    ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, object_store_memory=256 * 2**20, logging_level="ERROR",
             log_to_driver=False)  # one GPU Ray counts (none is here): --gpus-per-worker's actors are scheduled
    try:
        yield RayEngine(workers=2, cpus_per_worker=0.5)
    finally:
        ray.shutdown()


def _vectors(n: int, dim: int, seed: int, base: np.ndarray | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, dim)).astype(np.float32)
    if base is not None:  # the first rows are noisy copies of base's: something to find
        x[: len(base)] = base + 0.3 * rng.standard_normal(base.shape).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("kind,precision,bits,groups", [
    ("exact", "float32", 0, 1), ("ivf", "float32", 0, 1), ("ivfpq", "float32", 0, 1), ("ivf", "int8", 0, 1),
    ("exact", "ubinary", 0, 1), ("ivf", "ubinary", 0, 1), ("ivf", "ubinary", 16, 1), ("ivf", "ubinary", -16, 1),
    ("ivf", "float32", 0, 3), ("ivf", "ubinary", 16, 2)])
def test_ray_search_equals_local_search_pair_for_pair(engine, tmp_path, kind, precision, bits, groups):
    """Every index kind and precision, a binary IVF over a 16-bit prefix (``--search-dimensions 16``; −16: the
    same with raw sign bits, ``center_codes="none"``, instead of against the searched side's mean), and sub-indexes
    searched in groups (``--index-groups``: a task a shard and group, then the groups' top k merged)."""
    src = _vectors(900, 32, 0)
    tgt = _vectors(1100, 32, 1, base=src[:500])
    cfg = MineConfig(k=4, shard_size=256, dtype=precision,
                     index=IndexConfig(kind=kind, nlist=16, nprobe=4, pq_m=8, bits=abs(bits), groups=groups,
                                       center_codes="target" if bits >= 0 else "none"))
    local = MiningJob.from_embeddings(tmp_path / "local", src, tgt, cfg)
    remote = MiningJob.from_embeddings(tmp_path / "ray", src, tgt, cfg)
    local.run(show_progress=False)
    timings = remote.run(show_progress=False, engine=engine)
    assert timings["search_s"] > 0
    if groups > 1:  # a grouped search left no group files behind: each was merged into its shard's k nearest
        assert all(remote.search_groups(d, side) == groups for d, _, side, _ in remote._directions())
        assert not list((tmp_path / "ray" / "knn").glob("*-g*.npz"))
    for d in ("fwd", "bwd"):
        a, b = load_knn(local.knn_paths(d)), load_knn(remote.knn_paths(d))
        np.testing.assert_array_equal(a[1], b[1])
        np.testing.assert_array_equal(a[0], b[0])
    fs, fi = load_knn(remote.knn_paths("fwd"))
    bs, bi = load_knn(remote.knn_paths("bwd"))
    for mode in ("forward", "backward", "intersect", "max"):
        for cut in ("auto", None, 1.05):
            x = local.select(threshold=cut) if mode == cfg.mode else select_pairs(
                *load_knn(local.knn_paths("fwd")), *load_knn(local.knn_paths("bwd")), 4, mode, "ratio", cut)
            y = remote.select(threshold=cut) if mode == cfg.mode else select_pairs(fs, fi, bs, bi, 4, mode, "ratio", cut)
            assert len(x.src) > 0 or cut == 1.05
            np.testing.assert_array_equal(x.src, y.src)
            np.testing.assert_array_equal(x.tgt, y.tgt)
            np.testing.assert_array_equal(x.score, y.score)


def test_workers_given_gpus_search_the_same_pairs_and_too_many_gpus_is_one_line(engine, tmp_path):
    """``--gpus-per-worker``: encoders and search workers each take that many GPUs (searching there where their
    faiss can; this one is a CPU build, so on the CPU, and the driver says so) and find the same neighbours; a pool
    has no more actors than the cluster has GPUs for, and asking for more GPUs a worker than the cluster has is one
    line, before any work (Ray would wait for ever in both cases)."""
    from xlsent.mining.engine import RayEngine
    from xlsent.utils.errors import XlsentError

    with pytest.raises(XlsentError, match=re.escape("gpus_per_worker=2: the Ray cluster has 1 GPU(s)")):
        RayEngine(workers=2, cpus_per_worker=0.5, gpus_per_worker=2)
    src = _vectors(500, 32, 0)
    tgt = _vectors(600, 32, 1, base=src[:300])
    cfg = MineConfig(k=4, shard_size=256, index=IndexConfig(kind="ivf", nlist=16, nprobe=4))
    local = MiningJob.from_embeddings(tmp_path / "local", src, tgt, cfg)
    remote = MiningJob.from_embeddings(tmp_path / "ray", src, tgt, cfg)
    local.run(show_progress=False)
    gpu_engine = RayEngine(workers=2, cpus_per_worker=0.5, gpus_per_worker=1)
    assert gpu_engine.gpu_slots == 1  # one actor a pool: a second would wait for the GPU for ever, holding its task
    with pytest.warns(UserWarning, match="searched on its CPUs"):  # this faiss is a CPU build: said, not silent
        remote.run(show_progress=False, engine=gpu_engine)
    for d in ("fwd", "bwd"):
        a, b = load_knn(local.knn_paths(d)), load_knn(remote.knn_paths(d))
        np.testing.assert_array_equal(a[1], b[1])
        np.testing.assert_array_equal(a[0], b[0])


def test_ray_mining_of_texts_equals_local_mining(engine, tiny_model, tmp_path):
    from xlsent.encoding.encoder import Encoder
    from xlsent.mining.engine import EncoderSettings
    from xlsent.mining.mine import mine

    src, tgt, gold = _corpus(seed=3)
    cfg = MineConfig(shard_size=48, mode="intersect", threshold=1.0)
    local = mine(src, tgt, str(tiny_model), tmp_path / "local", cfg, encoder=Encoder.load(str(tiny_model), threads=1),
                 show_progress=False)
    remote = mine(src, tgt, str(tiny_model), tmp_path / "ray", cfg, show_progress=False, engine=engine,
                  encoder_settings=EncoderSettings(str(tiny_model), threads=1, device="cpu"))
    assert remote.summary["engine"] == "ray" and local.summary["engine"] == "local"
    assert remote.pairs == local.pairs and {s for _, s, t in remote.pairs if s == t} == gold
    for side in ("src", "tgt"):  # the workers' embeddings are the driver's
        for a, b in zip(sorted((tmp_path / "local" / side).glob("shard-*.npy")),
                        sorted((tmp_path / "ray" / side).glob("shard-*.npy"))):
            np.testing.assert_allclose(np.load(a).astype(np.float32), np.load(b).astype(np.float32), atol=1e-3)


def test_a_killed_worker_is_replaced_and_the_pairs_do_not_change(engine, tmp_path):
    """A search worker dies (os._exit) in its first task; Ray restarts it and retries the task."""
    from dataclasses import dataclass

    from xlsent.mining.tasks import SearchTask

    marker = tmp_path / "killed-once"

    @dataclass(frozen=True)
    class DiesOnce(SearchTask):
        def run(self, cache=None):
            if not marker.exists():
                marker.write_text("x")
                os._exit(1)
            super().run(cache)

    src, tgt = _vectors(600, 16, 4), _vectors(700, 16, 5)
    cfg = MineConfig(k=4, shard_size=200, dtype="float32", index=IndexConfig(kind="exact"))
    local = MiningJob.from_embeddings(tmp_path / "local", src, tgt, cfg)
    local.run(show_progress=False)
    remote = MiningJob.from_embeddings(tmp_path / "ray", src, tgt, cfg)
    tasks = [DiesOnce(**{f: getattr(t, f) for f in t.__dataclass_fields__}) for t in remote.search_tasks()]
    engine.compute(tasks, lambda: None)
    assert marker.exists()  # a worker did die
    x, y = local.select(), remote.select()
    np.testing.assert_array_equal(x.src, y.src)
    np.testing.assert_array_equal(x.tgt, y.tgt)


def test_a_stopped_driver_resumes_from_finished_shards_on_either_engine(engine, tmp_path):
    src, tgt = _vectors(500, 16, 6), _vectors(500, 16, 7)
    cfg = MineConfig(k=4, shard_size=100, dtype="float32", index=IndexConfig(kind="exact"))
    job = MiningJob.from_embeddings(tmp_path / "w", src, tgt, cfg)
    first = job.search_tasks()
    engine.compute(first[:4], lambda: None)  # the driver stopped after four shards
    again = MiningJob.from_embeddings(tmp_path / "w", src, tgt, cfg)
    assert len(again.search_tasks()) == len(first) - 4
    done = {p: p.stat().st_mtime_ns for p in (tmp_path / "w" / "knn").glob("*.npz")}
    again.run(show_progress=False)  # resumed here, on the local engine
    assert all(p.stat().st_mtime_ns == t for p, t in done.items())
    ref = MiningJob.from_embeddings(tmp_path / "ref", src, tgt, cfg)
    ref.run(show_progress=False, engine=engine)
    np.testing.assert_array_equal(again.select().src, ref.select().src)


def test_bad_ray_input_is_one_line(tmp_path):
    from xlsent.cli.common import make_engine
    from xlsent.utils.errors import XlsentError

    for args, message in ((("spark", None, 2, 1.0, 0.0), "--engine"),
                          (("local", "127.0.0.1:1", 2, 1.0, 0.0), "go with --engine ray"),
                          (("ray", "ray://h:10001", 2, 1.0, 0.0), "Ray Client (ray://) is not supported"),
                          (("ray", "nohost", 2, 1.0, 0.0), "give auto or HOST:PORT"),
                          (("ray", None, 0, 1.0, 0.0), "--workers")):
        with pytest.raises(XlsentError, match=re.escape(message)):
            make_engine(*args)
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("one\n")
    b.write_text("two\n")
    p = subprocess.run([sys.executable, "-m", "xlsent", "mine", str(a), str(b), "-o", str(tmp_path / "o.tsv"),
                        "--engine", "ray", "--address", "127.0.0.1:1"], capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "no Ray cluster answers there" in p.stderr, p.stderr[-500:]
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_ray_embedding_equals_local_embedding(engine, tiny_model, tmp_path):
    from xlsent.data.text_source import open_source
    from xlsent.encoding.encoder import Encoder
    from xlsent.mining.embed_job import embed_corpus, read_shards
    from xlsent.mining.engine import EncoderSettings

    src, _, _ = _corpus(seed=4)
    (tmp_path / "in.txt").write_text("".join(t + "\n" for t in src), encoding="utf-8")
    # a prompt that is not the model's default (it has none) travels to the workers in the settings
    encoder = Encoder.load(str(tiny_model), threads=1).replace(prompt="god ")
    settings = EncoderSettings(str(tiny_model), threads=1, device="cpu", prompt="god ")
    source = open_source(tmp_path / "in.txt")
    local = embed_corpus(source, tmp_path / "local", encoder, settings, shard_size=40, normalize=True)
    remote = embed_corpus(source, tmp_path / "ray", encoder, settings, engine=engine, shard_size=40, normalize=True)
    assert remote["engine"] == "ray" and remote["shards"] == local["shards"] and len(local["shards"]) > 2
    a, b = read_shards(tmp_path / "local"), read_shards(tmp_path / "ray")
    assert a[0] == b[0] == list(range(len(src)))
    np.testing.assert_allclose(a[1], b[1], atol=1e-6)
    unprompted = Encoder.load(str(tiny_model), threads=1, normalize=True).encode(src[:5])
    assert not np.allclose(unprompted, b[1][:5], atol=1e-3)  # the workers used the prompt


def test_a_worker_that_cannot_import_the_task_is_one_line(engine, tmp_path, monkeypatch):
    """The task's module exists only on the driver (as xlsent would on a node where it is not installed)."""
    from xlsent.utils.errors import XlsentError

    (tmp_path / "driver_only_module.py").write_text(
        "from dataclasses import dataclass\n\n@dataclass(frozen=True)\nclass Task:\n    n: int\n\n"
        "    def run(self, cache=None):\n        return self.n\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from driver_only_module import Task

    with pytest.raises(XlsentError) as e:
        engine.compute([Task(1), Task(2)], lambda: None)
    msg = str(e.value)
    assert "No module named 'driver_only_module'" in msg and "every node needs xlsent installed" in msg
    assert "\n" not in msg


def test_the_dtype_reaches_the_workers(engine, tiny_model, tmp_path):
    """``--dtype bf16`` on Ray: the workers encode in bf16, as this process does when asked."""
    from xlsent.data.text_source import open_source
    from xlsent.encoding.encoder import Encoder
    from xlsent.mining.embed_job import embed_corpus, read_shards
    from xlsent.mining.engine import EncoderSettings
    from xlsent.utils.device import use_encoding_dtype

    src = _corpus(seed=5)[0][:60]
    (tmp_path / "in.txt").write_text("".join(t + "\n" for t in src), encoding="utf-8")
    source = open_source(tmp_path / "in.txt")
    settings = EncoderSettings(str(tiny_model), threads=1, device="cpu", dtype="bf16")
    use_encoding_dtype("fp32")
    try:
        driver = Encoder.load(str(tiny_model), threads=1, normalize=True)
        embed_corpus(source, tmp_path / "ray", driver, settings, engine=engine, shard_size=30, normalize=True)
        fp32 = driver.encode(src)
        use_encoding_dtype("bf16")
        bf16 = Encoder.load(str(tiny_model), threads=1, normalize=True).encode(src)
    finally:
        use_encoding_dtype("auto")
    got = read_shards(tmp_path / "ray")[1]
    np.testing.assert_allclose(got, bf16, atol=1e-6)
    assert np.abs(got - fp32).max() > 1e-5  # not the fp32 vectors (fp32 runs agree to about 1e-7)


def test_an_input_file_is_deduplicated_on_the_workers_as_here(engine, tmp_path):
    from xlsent.mining.job import open_input

    src, _, _ = _corpus(seed=6)
    path = tmp_path / "in.txt"
    path.write_text("".join(t + "\n" for t in src + src[::3] + ["", " "]), encoding="utf-8")
    here = open_input(tmp_path / "local", "src", path, MineConfig(shard_size=25))
    there = open_input(tmp_path / "ray", "src", path, MineConfig(shard_size=25), engine)
    assert len(there) == len(here) == len(src) and there.repeats == len(src[::3]) and there.blank == 2
    np.testing.assert_array_equal(there.line_numbers(), here.line_numbers())
    assert there.sentences == here.sentences and there.texts(range(len(src))) == src


def test_bootstrap_mines_the_same_pairs_on_a_cluster(engine, tiny_model, tmp_path):
    """``xlsent train bootstrap --engine ray``: a round's encoding and mining on the cluster give the pairs (and the
    held-out score) of the same round run here."""
    import xlsent
    from test_train_bootstrap import FAST, _copies, _pairs

    data = _copies(tmp_path / "data", seed=4)
    got = {}
    for name, where in (("local", None), ("ray", engine)):
        res = xlsent.bootstrap(data["folder"] / "seed.tsv", data["folder"] / "src.txt", data["folder"] / "tgt.txt",
                               tmp_path / name, model=str(tiny_model), rounds=0, filters="none", settings=FAST,
                               engine=where)
        got[name] = (_pairs(tmp_path / name / "round-0" / "pairs.tsv"), res.rounds[0]["held_out"]["p_at_1"])
    local, remote = got["local"][0], got["ray"][0]
    assert {(s, t) for _, s, t in local} == {(s, t) for _, s, t in remote} and len(local) >= 60
    assert np.allclose(sorted(x[0] for x in local), sorted(x[0] for x in remote), atol=1e-4)
    assert got["local"][1] == got["ray"][1]
    assert json.loads((tmp_path / "ray" / "round-0" / "mine.json").read_text())["engine"] == "ray"
