"""Where models run: ``--device`` / ``models.device`` resolved in one place, a missing device one clear line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from test_cli import xlsent

from xlsent.utils.device import resolve_device, training_precision, use_device, current_device
from xlsent.utils.errors import XlsentError

NO_GPU = not torch.cuda.is_available()


def test_cpu_and_auto():
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("CPU ") == "cpu"
    if NO_GPU and not torch.backends.mps.is_available():
        assert resolve_device("auto") == "cpu"
        assert resolve_device(None) == "cpu"


def test_not_a_device():
    with pytest.raises(XlsentError, match=r"device='gpu': not a device — use one of auto \| cpu"):
        resolve_device("gpu")
    with pytest.raises(XlsentError, match=r"models.device='tpu'"):
        resolve_device("tpu", option="models.device")


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU")
def test_cuda_missing_names_what_was_found():
    with pytest.raises(XlsentError, match=r"device='cuda': no CUDA GPU here \(.*\) — use device='cpu' or auto"):
        resolve_device("cuda")
    with pytest.raises(XlsentError, match=r"device='cuda:1': no CUDA GPU"):
        resolve_device("cuda:1")


def test_gpu_index_out_of_range(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    assert resolve_device("cuda") == "cuda:0"
    assert resolve_device("cuda:1") == "cuda:1"
    with pytest.raises(XlsentError, match=r"device='cuda:2': this machine has 2 CUDA GPU\(s\) \(cuda:0 … cuda:1\)"):
        resolve_device("cuda:2")


def test_several_processes_take_their_local_rank(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 4)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("LOCAL_RANK", "2")
    assert resolve_device("auto") == resolve_device("cuda") == resolve_device("cuda:2") == "cuda:2"
    with pytest.raises(XlsentError, match="each takes the GPU of its local rank — use device='cuda'"):
        resolve_device("cuda:0")


def test_use_device_sets_the_process_default():
    try:
        assert use_device("cpu") == "cpu"
        assert current_device() == "cpu"
    finally:
        use_device("auto")


def test_training_precision(monkeypatch):
    from xlsent.utils import device

    from xlsent.utils.cpu_bf16 import Verdict

    # auto: bf16 where the hardware multiplies it faster (a GPU that has it, a CPU timed so), else fp32
    monkeypatch.setattr(device, "cpu_bf16", lambda model=None: Verdict("fp32", "fp32"))
    assert training_precision("auto", "cpu") == "fp32"
    monkeypatch.setattr(device, "cpu_bf16", lambda model=None: Verdict("bf16", "bf16"))
    assert training_precision("auto", "cpu") == "bf16"
    monkeypatch.setattr(device, "supports_bf16", lambda d: True)
    assert training_precision("auto", "cuda") == "bf16"
    monkeypatch.setattr(device, "supports_bf16", lambda d: False)
    assert training_precision("auto", "cuda") == "fp32"
    assert training_precision("bf16", "cpu") == "bf16"
    with pytest.raises(XlsentError, match="optim.precision=fp16: half precision trains on a CUDA GPU only"):
        training_precision("fp16", "cpu")
    with pytest.raises(XlsentError, match="optim.precision=bf16: mps has no bf16"):
        training_precision("bf16", "mps")
    with pytest.raises(XlsentError, match="optim.precision=fp8: use one of auto, fp32, bf16, fp16"):
        training_precision("fp8", "cpu")


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU")
def test_cli_cuda_missing_is_one_line(tmp_path):
    """``--device cuda`` on a machine without one: exit 2, one line naming the option, before any model loads
    (the model named does not exist: loading it first would give another error)."""
    (tmp_path / "t.txt").write_text("one\n")
    r = xlsent("embed", "-i", str(tmp_path / "t.txt"), "-o", str(tmp_path / "o.npy"), "-m", str(tmp_path / "no-model"),
               "--device", "cuda")
    assert r.returncode == 2
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "--device cuda: no CUDA GPU here" in lines[0], r.stderr


def test_encoder_follows_the_device_and_dtype(tiny_model, monkeypatch):
    """``--device cpu`` reaches the model's tensors; ``--dtype bf16`` on the CPU autocasts (the weights stay fp32) and
    keys its own caches (its vectors differ in the last digits); ``auto`` is bf16 on a CPU where it was timed faster,
    else fp32."""
    from xlsent.encoding.encoder import Encoder
    from xlsent.utils import device
    from xlsent.utils.cpu_bf16 import Verdict
    from xlsent.utils.device import encoding_dtype, use_encoding_dtype

    use_device("cpu")
    try:
        use_encoding_dtype("fp32")
        fp32 = Encoder.load(str(tiny_model))
        assert all(p.device.type == "cpu" and p.dtype == torch.float32 for p in fp32.backend.handle.model.parameters())
        assert not fp32.backend.autocast
        use_encoding_dtype("bf16")
        bf16 = Encoder.load(str(tiny_model))
        assert all(p.dtype == torch.float32 for p in bf16.backend.handle.model.parameters())
        assert bf16.backend.autocast and bf16.backend.dtype == "bf16"
        assert bf16.fingerprint != fp32.fingerprint and bf16.fingerprint.endswith("|dtype=bf16")
        texts = ["mulungu ndi wabwino", "the river is long", "madzi"]
        a, b = fp32.encode(texts), bf16.encode(texts)
        assert b.dtype == np.float32 and np.abs(a - b).max() > 0  # computed in bf16, not fp32
        cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        assert cos.min() > 0.99
        # a loaded handle (a model being trained) keeps its weights; on the CPU bf16 is autocast all the same
        assert Encoder.load(bf16.backend.handle).backend.autocast
        use_encoding_dtype("auto")
        monkeypatch.setattr(device, "cpu_bf16", lambda model=None: Verdict("bf16", "bf16"))
        assert encoding_dtype("cpu") == "bf16" and encoding_dtype("cuda") == "fp16"
        monkeypatch.setattr(device, "cpu_bf16", lambda model=None: Verdict("fp32", "fp32"))
        assert encoding_dtype("cpu") == "fp32"
    finally:
        use_encoding_dtype("auto")
        use_device("auto")


def test_cpu_bf16_can_be_turned_off(monkeypatch):
    """``XLSENT_CPU_BF16=0``: fp32 training and encoding under ``auto`` on any CPU, whatever its timing says."""
    monkeypatch.setenv("XLSENT_CPU_BF16", "0")
    assert training_precision("auto", "cpu") == "fp32"
    from xlsent.utils.device import encoding_dtype

    assert encoding_dtype("cpu") == "fp32"


def test_bf16_training_on_the_cpu_uses_plain_attention(tiny_model, monkeypatch):
    """In bf16 on a CPU whose probe timed the plain kernel faster, a step's attention is plain matrix products (on a
    CPU with AMX torch's fused kernel's bf16 backward is slow); where the fused kernel was faster, and anything else,
    torch's choice — and the gradients agree with the fused kernel's."""
    import contextlib

    from xlsent.models.handle import load_model
    from xlsent.utils import device
    from xlsent.utils.cpu_bf16 import Verdict
    from xlsent.utils.device import training_attention

    def backends():  # torch's switches (named for CUDA, read by its CPU kernels too)
        return torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.math_sdp_enabled()

    before = backends()
    monkeypatch.setattr(device, "cpu_bf16", lambda model=None: Verdict("bf16", "bf16", "fused"))
    with training_attention("bf16", "cpu"):
        assert backends() == before
    monkeypatch.setattr(device, "cpu_bf16", lambda model=None: Verdict("bf16", "bf16", "plain"))
    with training_attention("bf16", "cpu"):
        assert backends() == (False, True)
    assert backends() == before
    with training_attention("fp32", "cpu"), training_attention("bf16", "cuda"):
        assert backends() == before
    model = load_model(str(tiny_model)).model
    model.train()
    feats = model.tokenize(["mulungu ndi wabwino kwambiri", "the river is long", "madzi"])

    direction = torch.randn(model.get_embedding_dimension(), generator=torch.Generator().manual_seed(0))

    def grads(ctx, bf16=True):
        model.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16), ctx:
            out = model(dict(feats))["sentence_embedding"]
        (out.float() @ direction).sum().backward()
        return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])

    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    fp32 = grads(contextlib.nullcontext(), bf16=False)
    fused, plain = grads(contextlib.nullcontext()), grads(training_attention("bf16", "cpu"))
    cos = torch.nn.functional.cosine_similarity
    assert cos(fused, plain, dim=0) > 0.99 and cos(plain, fp32, dim=0) > 0.99


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU")
def test_train_cuda_missing_is_one_line(tmp_path):
    """``xlsent train … --device cuda`` here: one line naming the option, before any model loads."""
    r = xlsent("train", "xkd", "-o", str(tmp_path / "r"), "--device", "cuda")
    assert r.returncode == 2
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "models.device='cuda': no CUDA GPU here" in lines[0], r.stderr
    assert not (tmp_path / "r" / "checkpoints").exists()


def test_bf16_autocast_on_the_cpu_trains(tmp_path):
    """``optim.precision=bf16`` on the CPU: the one loop runs the steps under bf16 autocast and the loss falls."""
    import json
    import random

    from conftest import WORDS
    from xlsent.recipes.config import load_config
    from xlsent.recipes.registry import REGISTRY

    rng = random.Random(0)
    pairs = tmp_path / "p.jsonl"
    pairs.write_text("".join(json.dumps({"src": " ".join(rng.choice(WORDS[:12]) for _ in range(6)),
                                         "tgt": " ".join(rng.choice(WORDS[13:22]) for _ in range(6)),
                                         "src_lang": "en", "tgt_lang": "ny"}) + "\n" for _ in range(64)))
    cfg = load_config("lightweight", preset="small", overrides=[
        f"train.pairs={pairs}", "encoder.hidden=32", "encoder.heads=2", "encoder.ffn=64", "tokenizer.vocab_size=100",
        "models.reference=''", "optim.precision=bf16", "optim.batch_size=16", "optim.epochs=12", "optim.logging_steps=4",
        "optim.lr=3e-3", "models.device=cpu"])
    REGISTRY["lightweight"].train_fn()(cfg, tmp_path / "run", None, False)
    rec = json.loads((tmp_path / "run" / "stage.json").read_text())
    assert rec["precision"] == "bf16" and rec["device"] == "cpu"
    log = [json.loads(x) for x in (tmp_path / "run" / "train_log.jsonl").read_text().splitlines()]
    assert log[-1]["loss"] < 0.8 * log[0]["loss"], log
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(tmp_path / "run" / "model"), device="cpu")
    assert all(p.device.type == "cpu" and p.dtype == torch.float32 for p in st.parameters())
