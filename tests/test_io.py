"""Atomic writes (:mod:`xlsent.utils.io`): a file or folder appears whole, also when processes race."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest

from xlsent.utils.io import atomic_path


def _fill(args) -> int:
    root, i = args
    for _ in range(25):
        with atomic_path(Path(root) / "cache") as tmp:
            tmp.mkdir()
            (tmp / "a").write_text(str(i))
            (tmp / "b").write_text(str(i))
    return i


def test_processes_filling_one_folder_never_fail_and_leave_it_whole(tmp_path):
    """Two training processes (or a torchrun and a plain run) filling the same cache folder: with the folder moved
    aside and replaced in two steps, the old code failed when another process moved it first or put its own in."""
    with mp.get_context("fork").Pool(4) as pool:
        assert pool.map(_fill, [(str(tmp_path), i) for i in range(4)]) == [0, 1, 2, 3]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]
    assert (tmp_path / "cache" / "a").read_text() == (tmp_path / "cache" / "b").read_text()


def test_a_failed_write_leaves_the_old_folder(tmp_path):
    with atomic_path(tmp_path / "f") as tmp:
        tmp.mkdir()
        (tmp / "x").write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(tmp_path / "f") as tmp:
            tmp.mkdir()
            (tmp / "x").write_text("new")
            raise RuntimeError
    assert (tmp_path / "f" / "x").read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["f"]
