"""Every recipe, at its shipped checkpoint settings, resumes from a SIGKILL mid-stage to the model an uninterrupted
run trains (:mod:`xlsent.training.run_folder`; docs/guides/recipes.md says so: ``test_every_recipe_is_killed_here``).

A child process runs the recipe's training function as ``xlsent train`` would and kills itself with
SIGKILL at a chosen training step (counted by wrapping the loss call, so the kill lands mid-epoch and
between checkpoints); a second child reruns it into the same folder. Models are tiny and random, the
data 200 toy pairs in JSONL with document sections; everything else is the recipe's default config or CPU preset, so checkpoints come
from ``optim.checkpoint_every`` as shipped (no ``save_steps=1``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from conftest import WORDS, build_tiny_model

TEXTS = ["god is good and the river is wide", "mulungu ndi wabwino madzi", "he said unto them"]

CHILD = r"""
import json, os, signal, sys

from xlsent.recipes.config import load_config
from xlsent.recipes.registry import REGISTRY

recipe, preset, output, kill_at, overrides = sys.argv[1], sys.argv[2] or None, sys.argv[3], int(sys.argv[4]), json.loads(sys.argv[5])
calls = {"n": 0}


def counting(fn):
    def wrapped(*a, **k):
        calls["n"] += 1
        if calls["n"] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return fn(*a, **k)
    return wrapped


if recipe == "siamese":
    import xlsent.recipes.siamese as m
    m.contrastive_loss = counting(m.contrastive_loss)
elif recipe == "lightweight":
    import xlsent.losses.lightweight_losses as m
    m.LightweightLoss.forward = counting(m.LightweightLoss.forward)
elif recipe in ("tagger", "scp", "titles"):  # the one loop's step function, counted
    import xlsent.training.loop as L
    _run = L.run_loop
    L.run_loop = lambda folder, optim, module, opt, sched, n, step, **kw: _run(folder, optim, module, opt, sched, n,
                                                                               counting(step), **kw)
else:
    from sentence_transformers import SentenceTransformerTrainer as T
    T.compute_loss = counting(T.compute_loss)
cfg = load_config(recipe, None, overrides, preset)
if recipe == "tagger":
    from pathlib import Path
    from xlsent.recipes.tagger import train_tagger
    train_tagger(cfg, Path(output), print, False)
else:
    REGISTRY[recipe].train_fn()(cfg, output, print, False)
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("resume")
    rng = random.Random(1)
    en, ny = WORDS[:12], WORDS[13:22]
    rows = {" ".join(rng.choice(en) for _ in range(6)): " ".join(rng.choice(ny) for _ in range(6)) for _ in range(260)}
    pairs = root / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"src": a, "tgt": b, "src_lang": "en", "tgt_lang": "ny", "doc": f"d{i % 4}",
                                         "section": str(i // 4 % 10)}) + "\n"
                             for i, (a, b) in enumerate(list(rows.items())[:200])), encoding="utf-8")
    from test_tagger import build_wordpiece_model, toy_corpus
    from test_scp import _spans_file
    from test_titles import make_file

    from xlsent.data.conll import write_conll

    write_conll(root / "tags.conll", *toy_corpus(120, 0))
    teacher = build_tiny_model(root / "teacher", layers=2, seed=1)
    return {"pairs": pairs, "teacher": teacher, "spans": _spans_file(root, teacher),
            "student": build_tiny_model(root / "student", layers=4, seed=2, prompt="passage: "),
            "wp": build_wordpiece_model(root / "wp"), "tags": root / "tags.conll",
            "titles": make_file(root / "titles.tsv", 48, 0)}


def _overrides(recipe: str, s: dict) -> list[str]:
    """Each recipe's settings on the tiny models (tests/test_recipes_learn.py trains every recipe with them)."""
    common = [f"train.pairs={s['pairs']}"]
    return {
        "siamese": [f"models.base={s['student']}", *common],
        "xkd": [f"models.teacher={s['teacher']}", f"models.student={s['student']}", *common],
        "adapt": [f"models.student={s['student']}", "optim.min_steps=0", *common],  # one epoch: the kill points below
        "triplet-kd": [f"models.teacher={s['teacher']}", f"models.student={s['student']}", *common],
        "gloss": [f"models.student={s['teacher']}", *common],
        "lightweight": ["encoder.hidden=32", "encoder.heads=2", "encoder.ffn=64", "tokenizer.vocab_size=100",
                        "models.reference=''", *common],
        "multistage": [f"models.teacher={s['teacher']}", f"models.assistant={s['student']}", "models.student.bottleneck=8",
                       "models.student.ru_layers=2", "models.student.repeats=2", *common],
        "tagger": [f"models.base={s['wp']}", f"train.data={s['tags']}", "optim.epochs=2", "optim.batch_size=16",
                   "optim.checkpoint_every=3"],
        "titles": [f"models.base={s['wp']}", f"train.data={s['titles']}", "optim.epochs=2", "optim.batch_size=16",
                   "optim.checkpoint_every=3", "models.max_seq_length=24"],
        "scp": [f"models.base={s['teacher']}", f"train.spans={s['spans']}", "train.sample=0", "models.max_seq_length=32",
                "scp.queue_size=16", "scp.train_layers=1", "mlm.enabled=true", "optim.batch_size=4", "optim.epochs=2",
                "optim.checkpoint_every=3"],
    }[recipe]


def _start(recipe, preset, out, kill_at, overrides) -> subprocess.Popen:
    # one thread each: every run computes alike, and two children share the two cores; output to files (a
    # child waited for second must not block on a full pipe)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    logs = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    p = subprocess.Popen([sys.executable, "-c", CHILD, recipe, preset or "", str(out), str(kill_at),
                          json.dumps(overrides)], stdout=logs[0], stderr=logs[1], text=True, env=env)
    p.logs = logs
    return p


def _wait(p: subprocess.Popen) -> subprocess.CompletedProcess:
    p.wait()
    out, err = (f.seek(0) or f.read() for f in p.logs)
    for f in p.logs:
        f.close()
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def _encode(path) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(path), device="cpu").encode(TEXTS)


# (recipe, preset, loss call at which the run is killed, the stage folder that must resume): every recipe — its own
# loop (siamese), sentence-transformers' trainer (adapt, with held-out selection; xkd and triplet-kd, distilling;
# gloss, with its dictionary; lightweight, its own loss; multistage, a later stage), and the one loop of the task
# heads (tagger, titles) and of the pretraining with queues (scp); tests/test_distill_recipes.py resumes multistage's
# other stages.
CASES = [
    ("siamese", None, 301, ""),  # 7 steps × 2 loss calls an epoch, 490 steps, checkpoints every 49: killed at step 151
    # a sentence-transformers stage first prices itself on 2 of its batches (2 loss calls before its first step)
    ("adapt", None, 2 + 3, ""),  # 100 pairs held out, 100 trained: 4 steps, checkpoints every step: killed after checkpoint-2
    ("gloss", "small", 50, ""),
    ("lightweight", "small", 10, ""),  # 4 steps × 4 epochs, checkpoints every 4: killed after step 8  # max_steps 190, checkpoints every 38: killed after checkpoint-38
    ("multistage", "small", 2 + 13 + 2 + 4 + 2 + 8, "stage3-recurrence"),  # stages 1 (13 steps), 2 (4) done, killed in 3
    ("xkd", "small", 2 + 8, ""),  # 13 steps, checkpoints every fifth: killed in step 8
    ("triplet-kd", "small", 2 + 8, ""),
    ("tagger", None, 11, ""),  # 8 steps × 2 epochs, checkpoints every 3 steps: killed after step 9
    ("titles", None, 5, ""),  # 3 steps × 2 epochs, checkpoints every 3 steps: killed in step 5
    ("scp", None, 8, ""),  # 6 steps × 2 epochs, checkpoints every 3 steps: killed after step 6 (queues, slow encoder)
]


@pytest.mark.parametrize("recipe,preset,kill_at,stage", CASES, ids=[c[0] for c in CASES])
def test_sigkill_mid_stage_resumes_to_the_uninterrupted_model(setup, tmp_path, recipe, preset, kill_at, stage):
    overrides = _overrides(recipe, setup)
    out = tmp_path / "killed"
    killed = _wait(_start(recipe, preset, out, kill_at, overrides))
    assert killed.returncode == -9, killed.stderr[-3000:]
    folder = out / stage
    assert not (folder / "stage.json").exists() and not (out / "model").exists()
    saved = list((folder / "checkpoints").glob("checkpoint-*")) + list((folder / "checkpoints").glob("state.pt"))
    assert saved, "the run was killed before its first checkpoint: nothing to resume from"

    if recipe == "gloss":  # eflomal cannot be seeded: the uninterrupted run gets the killed run's dictionary
        seeded = tmp_path / "straight" / "checkpoints"
        seeded.mkdir(parents=True)
        for name in ("dictionary.json", "config_hash.txt"):
            shutil.copy(folder / "checkpoints" / name, seeded / name)
        induced = json.loads((folder / "checkpoints" / "dictionary.json").read_text())["entries"]
    # the uninterrupted run and the resumed one, side by side
    straight, resumed = map(_wait, [_start(recipe, preset, tmp_path / "straight", 0, overrides),
                                    _start(recipe, preset, out, 0, overrides)])
    assert straight.returncode == 0, straight.stderr[-3000:]
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    rec = json.loads((folder / "stage.json").read_text())
    if recipe == "siamese":
        assert rec["resumed_from_step"] == 147 and rec["steps"] == 490
    elif recipe == "lightweight":
        assert rec["resumed_from_step"] == 8 and rec["steps"] == 16
    elif recipe in ("tagger", "scp", "titles"):
        assert rec["resumed_from_step"] == {"tagger": 9, "scp": 6, "titles": 3}[recipe]
        assert rec["steps"] == {"tagger": 16, "scp": 12, "titles": 6}[recipe]
    else:
        assert rec["resumed_from"] and "checkpoint-" in rec["resumed_from"]
        assert rec["steps"] == json.loads((tmp_path / "straight" / stage / "stage.json").read_text())["steps"]
    if recipe == "titles":  # a multiple-choice model, not sentence vectors: its weights
        from safetensors.numpy import load_file

        ours, theirs = (load_file(str(p / "model" / "model.safetensors")) for p in (out, tmp_path / "straight"))
        assert ours.keys() == theirs.keys()
        for k in ours:
            np.testing.assert_allclose(ours[k], theirs[k], atol=1e-5, err_msg=k)
    else:
        np.testing.assert_allclose(_encode(out / "model"), _encode(tmp_path / "straight" / "model"), atol=1e-5)
    if recipe == "adapt":  # the held-out selection saw the same scores and chose the same step
        straight_rec = json.loads((tmp_path / "straight" / "stage.json").read_text())
        assert rec["selection"]["chosen_step"] == straight_rec["selection"]["chosen_step"]
        assert [h["step"] for h in rec["selection"]["history"]] == [h["step"] for h in straight_rec["selection"]["history"]]
    if recipe == "gloss":  # written inside the model folder before the done marker: the dictionary it trained with
        from xlsent.models.gloss import GLOSS_FILE

        assert (out / "model" / GLOSS_FILE).read_text() == (tmp_path / "straight" / "model" / GLOSS_FILE).read_text()
        assert (out / "model" / GLOSS_FILE).read_text() == "".join(f"{k}\t{v}\n" for k, v in sorted(induced.items()))
        assert "dictionary reused" in resumed.stderr + resumed.stdout


def test_every_recipe_is_killed_here():
    """docs/guides/recipes.md: resuming is "tested with SIGKILL for every recipe" — every registered recipe is a case
    above (a new recipe without one fails here)."""
    from pathlib import Path

    from xlsent.recipes.registry import REGISTRY

    assert sorted(REGISTRY) == sorted(c[0] for c in CASES)
    guide = (Path(__file__).resolve().parents[1] / "docs" / "guides" / "recipes.md").read_text(encoding="utf-8")
    assert "tested with SIGKILL for every recipe" in " ".join(guide.split())  # the claim these cases make true
