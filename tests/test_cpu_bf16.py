"""bf16 on the CPU by what the CPU does: the probe's verdict, its cache per machine, its overrides, and where it acts
(every encoder, every training step, ``xlsent models info``). The timings are faked here; one slow test times this
CPU for real."""

from __future__ import annotations

import json

import pytest

from xlsent.utils import cpu_bf16, device
from xlsent.utils.cpu_bf16 import CLEARLY, Shape, decide

# a CPU where bf16 is plainly faster (as AVX512-BF16 or AMX), its fused attention's backward slow in bf16
FAST = {"encode_fp32": 40.0, "encode_bf16": 12.0, "train_fp32": 50.0, "train_bf16_plain": 20.0,
        "train_bf16_fused": 26.0}
# a CPU without bf16 instructions: emulated, slower than fp32
SLOW = {"encode_fp32": 40.0, "encode_bf16": 130.0, "train_fp32": 50.0, "train_bf16_plain": 170.0,
        "train_bf16_fused": 150.0}


@pytest.fixture
def probe(monkeypatch, tmp_path):
    """The probe with fake timings (``probe.times`` is what the next timing returns; ``probe.calls`` the shapes
    timed), its cache in a fresh folder, no override set."""

    class Probe:
        times = dict(FAST)
        calls: list = []

    def fake(shape, rounds=3):
        Probe.calls.append(shape)
        return dict(Probe.times)

    monkeypatch.delenv("XLSENT_CPU_BF16", raising=False)
    monkeypatch.setenv("XLSENT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cpu_bf16, "time_block", fake)
    monkeypatch.setattr(cpu_bf16, "_MEMO", {})
    device.use_encoding_dtype("auto")
    yield Probe
    device.use_encoding_dtype("auto")


def test_bf16_where_it_is_clearly_faster():
    v = decide(FAST)
    assert (v.encode, v.train, v.attention) == ("bf16", "bf16", "plain")
    assert v.ratio("encode") == pytest.approx(0.3) and v.ratio("train") == pytest.approx(0.4)
    v = decide(SLOW)
    assert (v.encode, v.train) == ("fp32", "fp32")
    # the rule's edge: at most CLEARLY × fp32's time; a little faster is not enough
    edge = {"encode_fp32": 100.0, "encode_bf16": 100.0 * CLEARLY, "train_fp32": 100.0,
            "train_bf16_plain": 100.0 * CLEARLY + 1, "train_bf16_fused": 95.0}
    v = decide(edge)
    assert (v.encode, v.train, v.attention) == ("bf16", "fp32", "plain")
    # the attention of a bf16 step is the faster kernel, whichever it is
    assert decide({**FAST, "train_bf16_fused": 15.0}).attention == "fused"


def test_the_verdict_is_timed_once_a_machine_and_cached(probe, monkeypatch, tmp_path):
    shape = Shape(32, 64, 2)
    first = cpu_bf16.verdict(shape, say=lambda line: None)
    assert first.source == "probe" and first.encode == "bf16" and probe.calls == [shape]
    cached = json.loads((tmp_path / "cache" / cpu_bf16.CACHE_FILE).read_text())
    machine = cpu_bf16.machine_key()
    assert cached[machine][shape.key]["times_ms"] == FAST
    assert "torch" in machine and "cores" in machine and "threads" in machine
    # a new process (no memo) reads the cache: nothing timed again
    monkeypatch.setattr(cpu_bf16, "_MEMO", {})
    again = cpu_bf16.verdict(shape)
    assert again.source == "cache" and again.encode == "bf16" and len(probe.calls) == 1
    # another shape, or another machine (a new torch, another CPU, other cores), is timed again
    cpu_bf16.verdict(Shape(64, 128, 4), say=lambda line: None)
    assert len(probe.calls) == 2
    monkeypatch.setattr(cpu_bf16, "_MEMO", {})
    monkeypatch.setattr(cpu_bf16, "machine_key", lambda: "another CPU | 2 cores | 2 threads | torch 9")
    probe.times = dict(SLOW)
    other = cpu_bf16.verdict(shape, say=lambda line: None)
    assert other.source == "probe" and other.encode == "fp32" and len(probe.calls) == 3
    assert set(json.loads((tmp_path / "cache" / cpu_bf16.CACHE_FILE).read_text())) == {machine, "another CPU | 2 "
                                                                                      "cores | 2 threads | torch 9"}
    # refresh: timed again whatever the cache holds
    cpu_bf16.verdict(shape, refresh=True, say=lambda line: None)
    assert len(probe.calls) == 4


def test_an_unreadable_cache_is_timed_again(probe, tmp_path):
    path = tmp_path / "cache" / cpu_bf16.CACHE_FILE
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    said: list[str] = []
    v = cpu_bf16.verdict(Shape(32, 64, 2), say=said.append)
    assert v.source == "probe" and len(probe.calls) == 1
    assert len(said) == 1 and "timing bf16 against fp32 on this CPU once" in said[0] and str(path) in said[0]
    assert json.loads(path.read_text())  # written whole again


@pytest.mark.parametrize("value, expected", [("0", "fp32"), ("1", "bf16")])
def test_the_environment_overrides_the_probe(probe, monkeypatch, value, expected):
    monkeypatch.setenv("XLSENT_CPU_BF16", value)
    v = cpu_bf16.verdict(Shape(32, 64, 2))
    assert (v.encode, v.train, v.source) == (expected, expected, f"XLSENT_CPU_BF16={value}")
    assert v.attention == "plain"  # forced on: the kernel whose bf16 backward is not slow on any CPU timed
    assert probe.calls == []  # nothing timed
    assert device.encoding_dtype("cpu") == expected
    assert device.training_precision("auto", "cpu") == expected
    assert v.reason("encode") == f"{expected} (XLSENT_CPU_BF16={value})"


def test_encoders_and_training_follow_the_verdict(probe, tiny_model):
    """Under ``auto`` the encoder and the training step take the verdict for the model's own shapes; ``--dtype`` and
    ``optim.precision`` override it; a bf16 step runs the attention kernel timed fastest."""
    from torch.nn.attention import sdpa_kernel

    from xlsent.encoding.encoder import Encoder

    device.use_device("cpu")
    try:
        enc = Encoder.load(str(tiny_model))
        assert enc.backend.dtype == "bf16" and enc.backend.autocast
        assert probe.calls == [Shape(32, 64, 2)]  # the tiny model's shapes (conftest's BERT), not the default's
        model = enc.backend.handle.model
        assert device.training_precision("auto", "cpu", model=model) == "bf16"
        assert device.training_precision("fp32", "cpu", model=model) == "fp32"
        assert isinstance(device.training_attention("bf16", "cpu", model), type(sdpa_kernel([])))
        device.use_encoding_dtype("fp32")
        assert Encoder.load(str(tiny_model)).backend.dtype == "fp32"
        device.use_encoding_dtype("auto")
        probe.times = dict(SLOW)
        cpu_bf16.verdict(Shape(32, 64, 2), refresh=True, say=lambda line: None)
        assert Encoder.load(str(tiny_model)).backend.dtype == "fp32"
        assert device.training_precision("auto", "cpu", model=model) == "fp32"
        # fused attention fastest: torch's own choice, no context
        probe.times = {**FAST, "train_bf16_fused": 15.0}
        cpu_bf16.verdict(Shape(32, 64, 2), refresh=True, say=lambda line: None)
        assert not isinstance(device.training_attention("bf16", "cpu", model), type(sdpa_kernel([])))
    finally:
        device.use_device("auto")


def test_models_info_says_what_this_machine_gets_and_why(probe, tiny_model):
    from test_cli import xlsent

    r = xlsent("models", "info", str(tiny_model), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)["precision"]
    assert data["device"] == "cpu"
    assert data["CPU encoding"].startswith("bf16 (bf16 took 0.30× fp32's time on this CPU; bf16 where ≤ 0.8×")
    assert data["CPU training"].startswith("bf16, plain attention (bf16 took 0.40× fp32's time")
    assert "XLSENT_CPU_BF16" in data["CPU override"]
    r = xlsent("models", "info", str(tiny_model))
    assert r.returncode == 0 and "precision: CPU encoding" in r.stdout and "precision: CPU training" in r.stdout


@pytest.mark.slow
def test_the_real_probe_times_this_cpu(monkeypatch, tmp_path):
    """The probe on this CPU, e5-small's shapes: every setting timed, a verdict by the rule, cached."""
    monkeypatch.delenv("XLSENT_CPU_BF16", raising=False)
    monkeypatch.setenv("XLSENT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cpu_bf16, "_MEMO", {})
    v = cpu_bf16.verdict(refresh=True, say=lambda line: None)
    assert v.source == "probe"
    assert set(v.times_ms) == {"encode_fp32", "encode_bf16", "train_fp32", "train_bf16_plain", "train_bf16_fused"}
    assert all(t > 0 for t in v.times_ms.values())
    assert v == decide(v.times_ms, v.machine, cpu_bf16.DEFAULT_SHAPE)
    monkeypatch.setattr(cpu_bf16, "_MEMO", {})
    assert cpu_bf16.verdict().source == "cache"


def test_a_cache_that_cannot_be_written_still_gives_a_verdict(probe, monkeypatch, tmp_path):
    """A read-only or full cache folder: the CPU is timed and the verdict used; nothing fails."""
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("")
    monkeypatch.setenv("XLSENT_CACHE_DIR", str(blocked / "cache"))  # a folder cannot be made under a file
    said: list[str] = []
    v = cpu_bf16.verdict(Shape(32, 64, 2), say=said.append)
    assert v.encode == "bf16" and len(probe.calls) == 1
    assert "cannot be written: not kept" in said[0]


def test_a_cache_entry_of_another_version_is_timed_again(probe, tmp_path):
    path = tmp_path / "cache" / cpu_bf16.CACHE_FILE
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({cpu_bf16.machine_key(): {Shape(32, 64, 2).key: {"encode": "bf16", "new": 1}}}))
    v = cpu_bf16.verdict(Shape(32, 64, 2), say=lambda line: None)
    assert v.source == "probe" and len(probe.calls) == 1


def test_an_unknown_override_is_one_line(probe, monkeypatch):
    from xlsent.utils.errors import XlsentError

    monkeypatch.setenv("XLSENT_CPU_BF16", "yes")
    with pytest.raises(XlsentError, match=r"XLSENT_CPU_BF16=yes: use 0 \(fp32 on the CPU\), 1"):
        cpu_bf16.verdict(Shape(32, 64, 2))
    with pytest.raises(XlsentError, match=r"XLSENT_CPU_BF16=yes"):  # every command, before any model loads
        device.use_device("cpu")
    assert probe.calls == []
    monkeypatch.delenv("XLSENT_CPU_BF16")
    device.use_device("auto")


def test_a_failing_timing_gives_fp32_not_kept(probe, monkeypatch, tmp_path):
    def broken(shape, rounds=3):
        raise RuntimeError("no bf16 kernel in this build")

    monkeypatch.setattr(cpu_bf16, "time_block", broken)
    said: list[str] = []
    v = cpu_bf16.verdict(Shape(32, 64, 2), say=said.append)
    assert (v.encode, v.train) == ("fp32", "fp32") and "failed" in v.source
    assert any("fp32 is used" in line for line in said)
    assert not (tmp_path / "cache" / cpu_bf16.CACHE_FILE).exists() or Shape(32, 64, 2).key not in \
        (tmp_path / "cache" / cpu_bf16.CACHE_FILE).read_text()


@pytest.mark.slow
def test_the_real_probe_runs_inside_any_callers_context(monkeypatch, tmp_path):
    """First use may come from inside an autocast (a bf16 training step) or no_grad (an encoder): the probe still
    times fp32 against bf16, with gradients where it trains."""
    import torch

    monkeypatch.delenv("XLSENT_CPU_BF16", raising=False)
    monkeypatch.setenv("XLSENT_CACHE_DIR", str(tmp_path))
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        times = cpu_bf16.time_block(Shape(64, 128, 4), rounds=1)
    with torch.inference_mode():
        again = cpu_bf16.time_block(Shape(64, 128, 4), rounds=1)
    assert set(times) == set(again) and all(t > 0 for t in times.values())
