"""Data parallelism on the CPU: two processes (torchrun, gloo) train the model one process trains with the same
global batch (the one loop, :mod:`xlsent.training.loop`)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import numpy as np

from conftest import WORDS, build_tiny_model

TEXTS = ["god is good and the river is wide", "mulungu ndi wabwino madzi", "he said unto them"]


def _run_both(one: list[str], two: list[str], env: dict) -> tuple[subprocess.CompletedProcess, ...]:
    """The one-process run, then the two-process run — in fp32 (``XLSENT_CPU_BF16=0``: on a CPU with AMX ``auto`` would
    train in bf16, whose rounding differs between one process and two beyond the 1e-4 these tests hold them to)."""
    env = {**env, "XLSENT_CPU_BF16": "0"}
    return tuple(subprocess.run(args, capture_output=True, text=True, env=env, timeout=900) for args in (one, two))


def test_two_processes_train_the_one_process_model(tmp_path):
    """Lightweight with a per-example loss (XTR alone, no dropout): each of two processes accumulates two
    micro-batches of 4 of every global batch of 16 and DDP averages the gradients, so the model equals the
    one-process run's without accumulation (cosine ≥ 0.9999), and so do the logged losses."""
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
    one, two = _run_both([sys.executable, "-m", "xlsent", *args, "-o", str(tmp_path / "one")],
                         [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m",
                          "xlsent", *args, "--set", "optim.grad_accum=2", "-o", str(tmp_path / "two")], env)
    assert one.returncode == 0, one.stderr[-3000:]
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


def _pairs(path, n: int, seed: int):
    rng = random.Random(seed)
    path.write_text("".join(json.dumps({"src": " ".join(rng.choice(WORDS[:12]) for _ in range(6)),
                                        "tgt": " ".join(rng.choice(WORDS[13:22]) for _ in range(6)),
                                        "src_lang": "en", "tgt_lang": "ny"}) + "\n" for _ in range(n)))
    return path


def _one_and_two(tmp_path, recipe: str, sets: list[str]) -> tuple[np.ndarray, np.ndarray]:
    args = ["train", recipe, "--no-eval", *[x for s in sets for x in ("--set", s)]]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp_path)}
    one, two = _run_both([sys.executable, "-m", "xlsent", *args, "-o", str(tmp_path / "one")],
                         [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m",
                          "xlsent", *args, "-o", str(tmp_path / "two")], env)
    assert one.returncode == 0, one.stderr[-3000:]
    assert two.returncode == 0, two.stderr[-3000:]
    from sentence_transformers import SentenceTransformer

    return tuple(SentenceTransformer(str(tmp_path / d / "model"), device="cpu").encode(TEXTS) for d in ("one", "two"))


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_siamese_two_processes_train_the_one_process_head(tmp_path):
    """Siamese's per-pair contrastive loss through the one loop: worst negatives mined by every process over the
    whole training set, half of each global batch a process; the head equals one process's."""
    base = build_tiny_model(tmp_path / "base", layers=2, seed=4)
    sets = [f"train.pairs={_pairs(tmp_path / 'p.jsonl', 64, 5)}", f"models.base={base}", "train.min_words=1",
            "head.dropout=0", "optim.batch_size=16", "optim.epochs=3", "optim.lr=1e-2", "models.device=cpu",
            "features.layer=2", "optim.logging_steps=8"]
    a, b = _one_and_two(tmp_path, "siamese", sets)
    log = [json.loads(x) for x in (tmp_path / "one" / "train_log.jsonl").read_text().splitlines()]
    assert json.loads((tmp_path / "two" / "stage.json").read_text())["steps"] == 24
    assert log[-1]["loss"] < log[0]["loss"]  # it trained
    assert _cosines(a, b).min() >= 0.9999
    assert np.abs(a - build_base(base)).max() > 1e-3  # and moved away from the base model


def build_base(path) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(path), device="cpu").encode(TEXTS)


def test_xkd_two_processes_train_the_one_process_model(tmp_path):
    """A recipe on sentence-transformers' trainer (X-KD's per-example MSE, no dropout) under torchrun: each process
    takes its share of the global batch of 16, and the model equals the one-process run's."""
    teacher = build_tiny_model(tmp_path / "teacher", layers=2, seed=1, dropout=0.0)
    student = build_tiny_model(tmp_path / "student", layers=2, seed=2, dropout=0.0)
    sets = [f"train.pairs={_pairs(tmp_path / 'p.jsonl', 64, 6)}", f"models.teacher={teacher}",
            f"models.student={student}", "train.min_words=1", "train.sample=0", "optim.batch_size=16",
            "optim.epochs=2", "optim.lr=1e-3", "models.device=cpu", "models.freeze_word_embeddings=false"]
    a, b = _one_and_two(tmp_path, "xkd", sets)
    rec = [json.loads((tmp_path / d / "stage.json").read_text()) for d in ("one", "two")]
    assert rec[0]["steps"] == rec[1]["steps"] == 8
    assert np.abs(a - build_base(student)).max() > 1e-3  # it trained
    assert _cosines(a, b).min() >= 0.9999


def test_adapt_two_processes_train_the_one_process_model(tmp_path):
    """adapt under torchrun: each process runs its half of the global batch in sorted chunks (loss.mini_batch_size)
    and ranks against the whole global batch (the ranking loss gathers the other process's vectors); the model equals
    the one-process run's."""
    student = build_tiny_model(tmp_path / "student", layers=2, seed=3, dropout=0.0)
    pairs = _pairs(tmp_path / "p.jsonl", 64, 7)
    sets = [f"train.pairs={pairs}", f"models.student={student}", "train.min_words=1", "train.holdout=0",
            f"eval.pairs={pairs}", "optim.batch_size=16", "optim.epochs=2", "optim.lr=1e-3", "optim.min_steps=0",
            "models.device=cpu", "models.freeze_word_embeddings=false", "loss.mini_batch_size=4"]
    a, b = _one_and_two(tmp_path, "adapt", sets)
    rec = [json.loads((tmp_path / d / "stage.json").read_text()) for d in ("one", "two")]
    assert rec[0]["steps"] == rec[1]["steps"] == 8
    assert np.abs(a - build_base(student)).max() > 1e-3  # it trained
    assert _cosines(a, b).min() >= 0.9999


def test_adapt_two_processes_in_bf16_train_the_one_process_model(tmp_path):
    """The same under bf16 autocast (``optim.precision=bf16``: what ``auto`` picks on a GPU that has it and on a CPU
    with AMX), with the trainer's attention rule (plain attention on a CPU): both runs record bf16, and two processes
    train the one-process model within bf16's rounding (each process's half-batch is rounded on its own)."""
    student = build_tiny_model(tmp_path / "student", layers=2, seed=3, dropout=0.0)
    pairs = _pairs(tmp_path / "p.jsonl", 64, 7)
    sets = [f"train.pairs={pairs}", f"models.student={student}", "train.min_words=1", "train.holdout=0",
            f"eval.pairs={pairs}", "optim.batch_size=16", "optim.epochs=2", "optim.lr=1e-3", "optim.min_steps=0",
            "models.device=cpu", "models.freeze_word_embeddings=false", "loss.mini_batch_size=4",
            "optim.precision=bf16"]
    a, b = _one_and_two(tmp_path, "adapt", sets)
    rec = [json.loads((tmp_path / d / "stage.json").read_text()) for d in ("one", "two")]
    assert rec[0]["steps"] == rec[1]["steps"] == 8
    assert rec[0]["precision"] == rec[1]["precision"] == "bf16", rec[0].get("precision")
    assert np.abs(a - build_base(student)).max() > 1e-3  # it trained
    assert _cosines(a, b).min() >= 0.999
