"""Data parallelism on the CPU: two processes (torchrun, gloo) train the model one process trains with the same
global batch (the one loop, :mod:`xlsent.recipes.loop`)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import numpy as np

from conftest import WORDS

TEXTS = ["god is good and the river is wide", "mulungu ndi wabwino madzi", "he said unto them"]


def _run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=900)


def test_two_processes_train_the_one_process_model(tmp_path):
    """Lightweight with a per-example loss (XTR alone, no dropout): each process takes half of every global
    batch of 16 and DDP averages the gradients, so the model equals the one-process run's (cosine ≥ 0.9999)."""
    rng = random.Random(3)
    pairs = tmp_path / "p.jsonl"
    pairs.write_text("".join(json.dumps({"src": " ".join(rng.choice(WORDS[:12]) for _ in range(6)),
                                         "tgt": " ".join(rng.choice(WORDS[13:22]) for _ in range(6)),
                                         "src_lang": "en", "tgt_lang": "ny"}) + "\n" for _ in range(64)))
    sets = [f"train.pairs={pairs}", "encoder.hidden=32", "encoder.heads=2", "encoder.ffn=64", "encoder.dropout=0",
            "tokenizer.vocab_size=100", "loss.task=xtr", "loss.align_weight=0", "loss.sim_weight=0",
            "optim.batch_size=16", "optim.epochs=3", "optim.lr=3e-3", "models.reference=''", "models.device=cpu"]
    args = ["train", "lightweight", "--preset", "small", "--no-eval", *[x for s in sets for x in ("--set", s)]]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp_path)}
    one = _run([sys.executable, "-m", "xlsent", *args, "-o", str(tmp_path / "one")], env)
    assert one.returncode == 0, one.stderr[-3000:]
    two = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "xlsent",
                *args, "-o", str(tmp_path / "two")], env)
    assert two.returncode == 0, two.stderr[-3000:]
    rec1 = json.loads((tmp_path / "one" / "stage.json").read_text())
    rec2 = json.loads((tmp_path / "two" / "stage.json").read_text())
    assert rec1["steps"] == rec2["steps"] == 12
    from sentence_transformers import SentenceTransformer

    a = SentenceTransformer(str(tmp_path / "one" / "model"), device="cpu").encode(TEXTS)
    b = SentenceTransformer(str(tmp_path / "two" / "model"), device="cpu").encode(TEXTS)
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert cos.min() >= 0.9999, cos
    log1 = [json.loads(x) for x in (tmp_path / "one" / "train_log.jsonl").read_text().splitlines()]
    log2 = [json.loads(x) for x in (tmp_path / "two" / "train_log.jsonl").read_text().splitlines()]
    assert log1[-1]["loss"] < log1[0]["loss"]  # it trained
    assert [e["step"] for e in log1] == [e["step"] for e in log2]
    np.testing.assert_allclose([e["loss"] for e in log2], [e["loss"] for e in log1], rtol=1e-4)  # the global batch's
    assert two.stdout.count("model: ") == 1  # one process reports
