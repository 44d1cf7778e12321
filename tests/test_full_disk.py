"""A full disk during every writing command: one line (the file, what was written, the space free, what the job
needs), nothing under the final name, and the resumable jobs go on once space is freed.

The disk is a small tmpfs where the test can mount one (root on Linux). Elsewhere it is a folder whose writes are
counted against the same budget and fail with an injected ``ENOSPC`` when it is spent: at the atomic rename every
xlsent writer ends with, and after each checkpoint of the trainer (which writes its own files).
``XLSENT_TEST_NO_TMPFS=1`` runs the second kind where the first could run."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlsent
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import WriteFailed, size_of

from test_cli import xlsent as run_cli

MiB = 1 << 20


class SmallDisk:
    """``path``: a folder on a disk of ``size`` bytes. :meth:`fill` leaves ``leave`` bytes free; :meth:`grow` frees
    the space again (as a user who deletes something)."""

    def __init__(self, path: Path, size: int, monkeypatch) -> None:
        self.path, self.size = path, size
        path.mkdir(parents=True)
        self.real = (not os.environ.get("XLSENT_TEST_NO_TMPFS") and sys.platform == "linux" and os.geteuid() == 0
                     and shutil.which("mount") is not None
                     and subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                                        capture_output=True).returncode == 0)
        self.budget: int | None = None
        if not self.real:
            self._inject(monkeypatch)

    def _inject(self, monkeypatch) -> None:
        import xlsent.utils.io as io
        from transformers import Trainer

        real_replace, real_checkpoint = io._replace, Trainer._save_checkpoint

        def spend(nbytes: int, where: str) -> None:
            if self.budget is not None:
                if nbytes > self.budget:
                    raise OSError(errno.ENOSPC, "No space left on device", where)
                self.budget -= nbytes

        def replace(src, dst):
            if Path(dst).absolute().is_relative_to(self.path.absolute()):
                spend(size_of(src), str(dst))
            return real_replace(src, dst)

        def checkpoint(trainer, *a, **k):
            out = Path(trainer.args.output_dir)
            if not out.absolute().is_relative_to(self.path.absolute()):
                return real_checkpoint(trainer, *a, **k)
            last = sorted(out.glob("checkpoint-*"), key=lambda c: c.stat().st_mtime_ns)
            if last and self.budget is not None and size_of(last[-1]) > self.budget:  # it would fill the disk
                new = out / f"checkpoint-{trainer.state.global_step}"
                new.mkdir()
                (new / "model.safetensors").write_bytes(b"\0" * self.budget)
                raise OSError(errno.ENOSPC, "No space left on device", str(new / "optimizer.pt"))
            before = size_of(out)
            real_checkpoint(trainer, *a, **k)
            spend(max(0, size_of(out) - before), str(out))

        monkeypatch.setattr(io, "_replace", replace)
        monkeypatch.setattr(Trainer, "_save_checkpoint", checkpoint)
        monkeypatch.setattr(io, "free_space", lambda path: self.free())

    def free(self) -> int:
        if self.real:
            return shutil.disk_usage(self.path).free
        return self.size if self.budget is None else self.budget

    def fill(self, leave: int) -> None:
        if self.real:
            filler = self.path / ".filler"
            filler.unlink(missing_ok=True)
            with open(filler, "wb") as f:
                f.write(b"\0" * max(0, shutil.disk_usage(self.path).free - leave))
        else:
            self.budget = leave

    def grow(self) -> None:
        if self.real:
            (self.path / ".filler").unlink(missing_ok=True)
        else:
            self.budget = None

    def unmount(self) -> None:
        if self.real:
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True)


@pytest.fixture
def disk(tmp_path, monkeypatch):
    d = SmallDisk(tmp_path / "disk", 16 * MiB, monkeypatch)
    yield d
    d.unmount()


def _no_precheck(monkeypatch) -> None:
    """The free space checked before a job starts is taken by another process while it runs."""
    import xlsent.exporter.folder
    import xlsent.mining.embed_job
    import xlsent.mining.job
    import xlsent.training.run_folder

    for module in (xlsent.mining.embed_job, xlsent.mining.job, xlsent.exporter.folder, xlsent.training.run_folder):
        monkeypatch.setattr(module, "check_space", lambda *a, **k: None)
    import xlsent.api.embedding  # noqa: F401 (its check is imported inside the function)
    import xlsent.utils.io as io

    monkeypatch.setattr(io, "check_space", lambda *a, **k: None)


def _pages(path: Path) -> int:
    """Bytes ``path`` takes on a tmpfs: whole pages."""
    return sum(-(-f.stat().st_size // 4096) * 4096 for f in path.rglob("*") if f.is_file())


def _left(disk: SmallDisk) -> list[str]:
    return sorted(p.name for p in disk.path.iterdir() if p.name != ".filler")


def _one_line(r) -> str:
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    return lines[0]


def _texts(path: Path, n: int) -> Path:
    from conftest import WORDS

    rng = np.random.default_rng(0)
    path.write_text("".join(" ".join(rng.choice(WORDS, 6)) + f" {i}\n" for i in range(n)), encoding="utf-8")
    return path


def test_embed_on_a_full_disk_is_one_line_and_leaves_nothing(disk, tiny_model, tmp_path):
    texts = _texts(tmp_path / "t.txt", 300)
    disk.fill(leave=8 * 1024)
    r = run_cli("embed", "-m", str(tiny_model), "-i", str(texts), "-o", str(disk.path / "v.npy"))
    line = _one_line(r)
    # refused before encoding: 300 × 32 float32 = 37.5 KiB
    assert "v.npy: not enough space for the vectors — it needs about 37.5 KiB" in line and "free there" in line
    assert not (disk.path / "v.npy").exists()


def test_embed_when_the_disk_fills_while_it_writes(disk, tiny_model, tmp_path, monkeypatch):
    _no_precheck(monkeypatch)
    texts = _texts(tmp_path / "t.txt", 300)
    disk.fill(leave=8 * 1024)
    with pytest.raises(WriteFailed, match=r"v\.npy: no space left on the device while writing the vectors — .* free, "
                                          r"it needs about 37\.6 KiB; free some space"):
        xlsent.embed_file(texts, disk.path / "v.npy", model=str(tiny_model))
    assert [x for x in _left(disk) if not x.startswith(".v.npy.lock")] == []  # no temporary, no output
    disk.grow()
    xlsent.embed_file(texts, disk.path / "v.npy", model=str(tiny_model))
    assert np.load(disk.path / "v.npy").shape == (300, 32)


def test_embed_shards_resume_once_space_is_freed(disk, tiny_model, tmp_path, monkeypatch):
    _no_precheck(monkeypatch)
    texts = _texts(tmp_path / "t.txt", 400)
    whole = xlsent.embed_file(texts, tmp_path / "whole", model=str(tiny_model), shard_size=50)
    shard = size_of(tmp_path / "whole" / "part-00000.parquet")
    disk.fill(leave=int(3.5 * max(shard, 4096)) + 8192)  # room for about three shards and the job's record
    out = disk.path / "vecs"
    with pytest.raises(WriteFailed, match=r"vecs/part-0000\d\.parquet: no space left on the device while writing "
                                          r"shard \d of the embeddings .* run the same command again: it goes on "
                                          r"from what was finished"):
        xlsent.embed_file(texts, out, model=str(tiny_model), shard_size=50)
    kept = {p.name: p.stat().st_mtime_ns for p in out.glob("part-*.parquet")}
    assert 0 < len(kept) < whole.shards and not (out / "_manifest.json").exists()
    disk.grow()
    res = xlsent.embed_file(texts, out, model=str(tiny_model), shard_size=50)
    assert res.rows == 400 and res.shards == whole.shards
    assert all((out / name).stat().st_mtime_ns == t for name, t in kept.items())  # finished shards not redone


def test_mine_resumes_once_space_is_freed(disk, tiny_model, tmp_path, monkeypatch):
    _no_precheck(monkeypatch)
    src = _texts(tmp_path / "s.txt", 300).read_text().splitlines()
    tgt = _texts(tmp_path / "t.txt", 300).read_text().splitlines()[::-1]
    kw = dict(model=str(tiny_model), shard_size=50, threshold=None, filters="none", show_progress_bar=False)
    xlsent.mine(src, tgt, workdir=tmp_path / "whole", **kw)
    # room for the inputs and the stored vectors, not for the neighbours
    room = sum(_pages(tmp_path / "whole" / x) for x in ("inputs", "src", "tgt"))
    assert _pages(tmp_path / "whole" / "knn") > 64 * 1024
    disk.fill(leave=room + 32 * 1024)
    with pytest.raises(WriteFailed, match="no space left on the device while writing .* it goes on from what was "
                                          "finished"):
        xlsent.mine(src, tgt, workdir=disk.path / "job", output=disk.path / "pairs.tsv", **kw)
    kept = {p: p.stat().st_mtime_ns for side in ("src", "tgt") for p in (disk.path / "job" / side).glob("*.npy")}
    assert kept and not (disk.path / "pairs.tsv").exists()
    disk.grow()
    res = xlsent.mine(src, tgt, workdir=disk.path / "job", output=disk.path / "pairs.tsv", **kw)
    assert (disk.path / "pairs.tsv").exists() and len(res.pairs) > 0
    assert all(p.stat().st_mtime_ns == t for p, t in kept.items())


def test_filter_pairs_and_align_on_a_full_disk(disk, tiny_model, pairs_tsv, tmp_path):
    disk.fill(leave=0)
    r = run_cli("data", "filter-pairs", str(pairs_tsv), "-o", str(disk.path / "clean.tsv"), "-m", str(tiny_model))
    assert "clean.tsv: no space left on the device while writing the kept pairs" in _one_line(r)
    src = tmp_path / "a.txt"
    tgt = tmp_path / "b.txt"
    lines = pairs_tsv.read_text(encoding="utf-8").splitlines()[1:9]
    src.write_text("".join(x.split("\t")[0] + "\n" for x in lines), encoding="utf-8")
    tgt.write_text("".join(x.split("\t")[1] + "\n" for x in lines), encoding="utf-8")
    r = run_cli("align", str(src), str(tgt), "-o", str(disk.path / "al.txt"), "-m", str(tiny_model))
    assert "al.txt: no space left on the device while writing" in _one_line(r)
    assert not [x for x in _left(disk) if not x.endswith(".lock")]  # no output, no temporary


def test_export_on_a_full_disk(disk, tiny_model):
    disk.fill(leave=16 * 1024)
    r = run_cli("export", str(tiny_model), "-o", str(disk.path / "onnx"))
    line = _one_line(r)
    assert "onnx: not enough space for the exported model" in line
    assert not (disk.path / "onnx").exists()


def test_export_when_the_disk_fills_while_it_writes(disk, tiny_model, monkeypatch):
    _no_precheck(monkeypatch)
    disk.fill(leave=16 * 1024)
    with pytest.raises(WriteFailed) as failed:
        xlsent.export(str(tiny_model), disk.path / "onnx")
    # the output named, not the file inside its temporary copy that filled the disk; what it needs
    assert str(failed.value).startswith(f"{disk.path / 'onnx'}: no space left on the device while writing the "
                                        "exported model — "), failed.value
    assert "it needs about " in str(failed.value)
    assert not [x for x in _left(disk) if not x.endswith(".lock")]


def test_mine_and_adapt_refuse_before_they_start_when_their_output_cannot_fit(disk, tiny_model, pairs_tsv, tmp_path):
    src = _texts(tmp_path / "s.txt", 3000).read_text().splitlines()
    kw = dict(model=str(tiny_model), threshold=None, filters="none", show_progress_bar=False, precision="float32")
    xlsent.mine(src, src[::-1], workdir=tmp_path / "whole", **kw)
    inputs = _pages(tmp_path / "whole" / "inputs")
    assert _pages(tmp_path / "whole") - inputs > 2 * inputs
    disk.fill(leave=2 * inputs)  # room for the inputs' records (and their digests while repeats are found), not more
    with pytest.raises(XlsentError, match="job: not enough space for the mining job's vectors and neighbours — it "
                                          "needs about .*, .* is free there"):
        xlsent.mine(src, src[::-1], workdir=disk.path / "job", **kw)
    assert not list((disk.path / "job").glob("src/*.npy"))
    disk.grow()
    disk.fill(leave=48 * 1024)
    settings = {"optim.max_steps": 2, "optim.batch_size": 8, "train.holdout_min": 4, "eval.udhr": False,
                "train.sample": 0}
    with pytest.raises(XlsentError, match="run: not enough space for the checkpoints and the trained model — it "
                                          "needs about "):
        xlsent.adapt(pairs_tsv, disk.path / "run", model=str(tiny_model), device="cpu", settings=settings)
    assert not (disk.path / "run" / "model").exists()


def test_a_loop_recipe_refuses_before_it_starts_when_its_output_cannot_fit(disk, tiny_model, pairs_tsv):
    """The training engine's other path (siamese: a head over the frozen model, on the loop) checks the disk as
    the trainer's path does: one line before the first step, no model written. The space left would hold the head's
    checkpoints, not the model it is saved in (the tiny base model's 120 KB of weights under the head)."""
    disk.fill(leave=128 * 1024)
    with pytest.raises(XlsentError, match="run: not enough space for the checkpoints and the trained model — it "
                                          "needs about "):
        xlsent.train("siamese", pairs_tsv, output=disk.path / "run", device="cpu", evaluate=False,
                     settings={"models.base": str(tiny_model), "optim.max_steps": 2})
    assert not (disk.path / "run" / "model").exists()


def test_adapt_resumes_from_its_checkpoint_once_space_is_freed(disk, tiny_model, pairs_tsv, tmp_path, monkeypatch):
    _no_precheck(monkeypatch)
    settings = {"optim.max_steps": 6, "optim.batch_size": 8, "train.holdout_min": 4, "eval.udhr": False,
                "train.sample": 0, "optim.checkpoint_every": 2}
    notes: list[str] = []
    sizes = []
    import xlsent.training.run_folder as rf

    finish = rf.StageFolder.finish

    def measure(self, *a, **k):
        sizes.extend(size_of(c) for c in self.checkpoints.iterdir())
        return finish(self, *a, **k)

    monkeypatch.setattr(rf.StageFolder, "finish", measure)
    xlsent.adapt(pairs_tsv, tmp_path / "whole", model=str(tiny_model), device="cpu", settings=settings)
    monkeypatch.setattr(rf.StageFolder, "finish", finish)
    checkpoint = max(sizes)
    disk.fill(leave=int(1.6 * checkpoint) + sum(sizes) - checkpoint + 64 * 1024)  # one checkpoint fits, not two
    with pytest.raises(WriteFailed, match="checkpoints: no space left on the device while writing a training "
                                          "checkpoint — .* free, it needs about .* it goes on from what was finished"):
        xlsent.adapt(pairs_tsv, disk.path / "run", model=str(tiny_model), device="cpu", settings=settings)
    assert not (disk.path / "run" / "model").exists()
    cks = sorted(p.name for p in (disk.path / "run" / "checkpoints").glob("checkpoint-*"))
    assert cks == ["checkpoint-2"]  # the one that did not fit is removed
    disk.grow()
    run = xlsent.adapt(pairs_tsv, disk.path / "run", model=str(tiny_model), device="cpu", settings=settings,
                       on_note=notes.append)
    assert run.model_path.exists() and any("checkpoint-2" in n for n in notes), notes


def test_a_write_that_fails_for_another_reason_is_one_line_too(tmp_path):
    from xlsent.utils.io import atomic_path

    with pytest.raises(XlsentError, match=r"x\.bin: writing the vectors failed — Permission denied; make the folder "
                                          r"writable, then run the same command again"):
        with atomic_path(tmp_path / "x.bin", "the vectors"):
            raise PermissionError(errno.EACCES, "Permission denied")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    with pytest.raises(ValueError):  # not a write: as it was
        with atomic_path(tmp_path / "x.bin"):
            raise ValueError("a bug")
