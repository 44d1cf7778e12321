"""One run per output: a second process writing into an output in use is refused in one line naming the first; a
lock left by a killed run is taken over, said in one line; a finished output file is replaced, said in one line."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import xlsent
from xlsent.utils.io import OutputInUse, TakenOver, claim

from test_cli import xlsent as run_cli


def _holder(output: Path, *args: str) -> subprocess.Popen:
    """A second process that holds ``output`` as the command ``args`` would, until it is killed."""
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        sys.argv = ["xlsent", *{list(args)!r}]
        from xlsent.utils.io import claim
        with claim({str(output)!r}):
            print("held", flush=True)
            time.sleep(120)
    """)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def _stop(p: subprocess.Popen) -> None:
    p.kill()
    p.wait()


def _one_line(r) -> str:
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    return lines[0]


@pytest.fixture
def texts(tmp_path) -> Path:
    p = tmp_path / "t.txt"
    p.write_text("god is good\nthe house is big\n", encoding="utf-8")
    return p


def test_every_writing_command_refuses_an_output_in_use(tiny_model, pairs_tsv, texts, tmp_path):
    out = tmp_path / "out"
    holder = _holder(out, "train", "adapt", "pairs.tsv", "-o", "out")
    try:
        m = str(tiny_model)
        for args in (["embed", "-m", m, "-i", str(texts), "-o", str(out)],
                     ["mine", str(texts), str(texts), "-m", m, "-o", str(out)],
                     ["data", "filter-pairs", str(pairs_tsv), "-o", str(out), "-m", m],
                     ["align", str(texts), str(texts), "-o", str(out), "-m", m],
                     ["export", m, "-o", str(out)],
                     ["train", "adapt", str(pairs_tsv), "-o", str(out), "--set", f"models.student={m}"]):
            line = _one_line(run_cli(*args))
            assert (f"{out}: this output is being written by process {holder.pid} (xlsent train adapt pairs.tsv -o "
                    "out, since ") in line and "wait for it to finish, or write elsewhere" in line, (args, line)
        assert not out.exists()
    finally:
        _stop(holder)


def test_two_adapt_runs_into_one_folder(tiny_model, pairs_tsv, tmp_path):
    """The second ``xlsent train adapt`` into a folder the first is training into is refused before it holds out its
    pairs or prices itself; once the first is killed, the next run takes the folder over and says so."""
    out = tmp_path / "run"
    first = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time, xlsent
        import xlsent.recipes.adapt as adapt
        def slow(*a, **k):  # the first run, training
            print("training", flush=True)
            time.sleep(120)
        adapt.train_stage = slow
        xlsent.adapt({str(pairs_tsv)!r}, {str(out)!r}, model={str(tiny_model)!r}, device="cpu",
                     settings={{"optim.max_steps": 2, "train.holdout_min": 4, "eval.udhr": False}})
    """)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert first.stdout.readline().strip() == "training"
        before = sorted(p.name for p in out.iterdir())
        r = run_cli("train", "adapt", str(pairs_tsv), "-o", str(out), "--set", f"models.student={tiny_model}",
                    "--set", "optim.max_steps=2", "--set", "train.holdout_min=4", "--set", "eval.udhr=false")
        assert f"is being written by process {first.pid} " in _one_line(r)
        assert sorted(p.name for p in out.iterdir()) == before  # nothing of the second run's
    finally:
        _stop(first)
    r = run_cli("train", "adapt", str(pairs_tsv), "-o", str(out), "--set", f"models.student={tiny_model}",
                "--set", "optim.max_steps=2", "--set", "train.holdout_min=4", "--set", "eval.udhr=false",
                "--set", "train.sample=0")
    assert r.returncode == 0, r.stderr
    said = " ".join(r.stderr.split())
    assert f"taking over from process {first.pid} " in said and "which stopped without finishing" in said
    assert (out / "model").is_dir()


def test_a_finished_file_is_replaced_with_a_line(tiny_model, texts, tmp_path):
    out = tmp_path / "v.npy"
    assert run_cli("embed", "-m", str(tiny_model), "-i", str(texts), "-o", str(out)).returncode == 0
    r = run_cli("embed", "-m", str(tiny_model), "-i", str(texts), "-o", str(out))
    assert r.returncode == 0 and f"{out}: exists — replaced by this run's" in " ".join(r.stderr.split())
    for _ in range(2):  # the same in Python, every time (not once a place in the code, as warnings are by default)
        with pytest.warns(UserWarning, match="exists — replaced by this run's"):
            xlsent.embed_file(texts, out, model=str(tiny_model))
    r = run_cli("embed", "-m", str(tiny_model), "-i", str(texts), "-o", str(out), "--batch-size", "0")
    assert "replaced" not in r.stderr and r.returncode == 2  # refused: nothing replaced, nothing said of it


def test_claims_nest_in_one_process_and_are_free_after(tmp_path):
    out = tmp_path / "x"
    with claim(out):
        with claim(out):  # a function that calls another on the same output
            pass
        assert (tmp_path / ".x.owner").exists()
    assert not (tmp_path / ".x.owner").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error", TakenOver)  # a clean release leaves nothing to take over
        with claim(out):
            pass


def test_under_torchrun_only_the_main_process_holds_the_output(tmp_path, monkeypatch):
    out = tmp_path / "x"
    holder = _holder(out)
    try:
        with pytest.raises(OutputInUse):
            with claim(out):
                pass
        monkeypatch.setenv("RANK", "1")
        with pytest.raises(OutputInUse):  # RANK alone is not a run of several processes
            with claim(out):
                pass
        monkeypatch.setenv("WORLD_SIZE", "2")
        with claim(out):  # rank 1 of 2 writes under rank 0's hold
            pass
    finally:
        _stop(holder)
