"""Whether this CPU runs bf16 clearly faster than fp32 — timed once on the model's own shapes, and remembered.

A list of instruction-set flags cannot say it: Intel's AMX, AMD's AVX512-BF16 (Zen 4 and 5), Apple's and
recent ARM servers' BF16 instructions all make bf16 matrix products faster, by different amounts, and torch's
kernels for each change with its version. So the first time xlsent decides a CPU precision under ``auto``, it
builds one transformer block of the model's shapes (width, feed-forward width, heads; random weights) and times:

* **encoding** — the block's forward pass on a batch of 32 texts of 64 pieces, in fp32 and under bf16 autocast
  (the weights stay fp32, as every encoder runs them);
* **training** — a forward and backward pass on 16 texts of 64 pieces, in fp32 and under bf16 autocast with each
  of the two attention kernels a CPU has (torch's plain matrix-product attention, and its fused one).

bf16 is used where it takes at most :data:`CLEARLY` of fp32's time (the best of three runs each, the settings
interleaved); for training, with the attention kernel that was fastest. The whole probe takes a second or two
(less where bf16 is plainly slower: it stops after one round). The verdict is cached in the user's cache
(``~/.cache/xlsent/cpu-bf16.json``, :func:`xlsent.utils.io.cache_dir`) per machine — the CPU's model name, the
cores this process may use, torch's thread count and version — and per shape; a new torch or another CPU is
timed again.

Overrides: ``XLSENT_CPU_BF16=0`` (fp32 everywhere on the CPU) or ``=1`` (bf16 everywhere on the CPU), and per
command ``--dtype`` (encoding) and ``optim.precision`` (training). ``xlsent models info MODEL`` prints what this
machine gets and why (:func:`describe`).
"""

from __future__ import annotations

import functools
import json
import os
import platform
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

CACHE_FILE = "cpu-bf16.json"
CLEARLY = 0.8  # bf16 is used where it takes at most this share of fp32's time
ENV = "XLSENT_CPU_BF16"
ENCODE_BATCH = (32, 64)  # texts × pieces of the timed forward pass
TRAIN_BATCH = (16, 64)  # texts × pieces of the timed forward and backward pass
ROUNDS = 3


@dataclass(frozen=True)
class Shape:
    """The transformer shapes a verdict was timed on."""

    hidden: int = 384
    intermediate: int = 1536
    heads: int = 12

    @property
    def key(self) -> str:
        return f"{self.hidden}x{self.intermediate}/{self.heads}"


DEFAULT_SHAPE = Shape()  # multilingual-e5-small's (and MiniLM's)


@dataclass
class Verdict:
    """What this CPU gets: bf16 or fp32 for encoding and for training, the training attention, and why."""

    encode: str = "fp32"
    train: str = "fp32"
    attention: str = "fused"  # the attention kernel of a bf16 training step: "plain" (math) or "fused"
    times_ms: dict = field(default_factory=dict)  # what was timed (empty where an override decided)
    source: str = "probe"  # "probe" (timed now), "cache" (timed before), or the override that decided
    machine: str = ""
    shape: str = DEFAULT_SHAPE.key

    def ratio(self, kind: str) -> float | None:
        """bf16's time over fp32's for ``encode`` or ``train`` (its fastest attention), when timed."""
        t = self.times_ms
        if kind == "encode" and t.get("encode_fp32"):
            return t["encode_bf16"] / t["encode_fp32"]
        if kind == "train" and t.get("train_fp32"):
            best = min(v for k, v in t.items() if k.startswith("train_bf16"))
            return best / t["train_fp32"]
        return None

    def reason(self, kind: str) -> str:
        """One line: the precision ``kind`` (``encode`` / ``train``) runs in, and why."""
        chosen = self.encode if kind == "encode" else self.train
        if self.source.startswith(ENV):
            return f"{chosen} ({self.source})"
        r = self.ratio(kind)
        if r is None:
            return f"{chosen} ({self.source})"
        how = f"bf16 took {r:.2f}× fp32's time on this CPU"
        att = f", {self.attention} attention" if kind == "train" and chosen == "bf16" else ""
        rule = f"bf16 where ≤ {CLEARLY}×"
        when = "timed now" if self.source == "probe" else "timed before, cached"
        return f"{chosen}{att} ({how}; {rule}; {when})"


def machine_key() -> str:
    """This machine as the cache knows it: the CPU's model name, the cores this process may use, torch's thread
    count and version."""
    import torch

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return f"{cpu_name()} | {cores} cores | {torch.get_num_threads()} threads | torch {torch.__version__}"


@functools.cache
def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, ``sysctl`` on macOS), else what :mod:`platform` says."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    if platform.system() == "Darwin":
        import subprocess

        try:
            return subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True,
                                  timeout=5).stdout.strip() or platform.processor()
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or platform.machine() or "unknown CPU"


def shape_of(model) -> Shape:
    """The shapes of a transformer (a SentenceTransformer, a Hugging Face model or its config); the default's where
    they cannot be read."""
    config = getattr(model, "config", None)
    if config is None and hasattr(model, "modules"):  # a module holding a transformer (a SentenceTransformer)
        config = next((m.config for m in model.modules() if hasattr(getattr(m, "config", None), "hidden_size")),
                      None)
    try:
        hidden = int(config.hidden_size)
        return Shape(hidden, int(getattr(config, "intermediate_size", 4 * hidden) or 4 * hidden),
                     int(config.num_attention_heads))
    except (AttributeError, TypeError, ValueError):
        return DEFAULT_SHAPE


_MEMO: dict[tuple[str, str], Verdict] = {}


def override() -> str:
    """``XLSENT_CPU_BF16`` as set: ``0``, ``1`` or ``""`` (unset: timed); any other value is one error line."""
    forced = os.environ.get(ENV, "").strip()
    if forced not in ("", "0", "1"):
        from xlsent.utils.errors import XlsentError

        raise XlsentError(f"{ENV}={forced}: use 0 (fp32 on the CPU), 1 (bf16 on the CPU) or leave it unset (timed)")
    return forced


def verdict(shape: Shape | None = None, *, refresh: bool = False, say=None) -> Verdict:
    """This CPU's verdict for ``shape``: the override's, the cached one, or timed now (and cached).
    ``refresh``: time again. ``say``: a callable for the one line said while timing (default: stderr where this
    process shows progress)."""
    shape = shape or DEFAULT_SHAPE
    forced = override()
    if forced in ("0", "1"):
        choice = "bf16" if forced == "1" else "fp32"
        # forced on: plain attention, the kernel whose bf16 backward is not slow on any CPU timed so far
        return Verdict(choice, choice, "plain", {}, f"{ENV}={forced}", "", shape.key)
    machine = machine_key()
    if not refresh and (machine, shape.key) in _MEMO:
        return _MEMO[(machine, shape.key)]
    from filelock import FileLock

    from xlsent.utils.io import cache_dir

    path = cache_dir() / CACHE_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock", timeout=600):  # one process times while the others wait (torchrun)
            found = _cached_or_timed(path, machine, shape, refresh, say)
    except OSError:  # a cache that cannot be written (read-only, full): timed, and used for this process only
        _say(say, f"timing bf16 against fp32 on this CPU ({shape.key}; {path} cannot be written: not kept)")
        found = _timed_or_fp32(machine, shape, say)
    _MEMO[(machine, shape.key)] = found
    return found


def _cached_or_timed(path: Path, machine: str, shape: Shape, refresh: bool, say) -> Verdict:
    from xlsent.utils.io import write_json_atomic

    table = _read(path)
    entry = table.get(machine, {}).get(shape.key)
    if isinstance(entry, dict) and not refresh:
        try:
            return Verdict(**{**entry, "source": "cache", "machine": machine})
        except TypeError:  # written by another version of xlsent: timed again
            pass
    _say(say, f"timing bf16 against fp32 on this CPU once ({shape.key}; cached in {path})")
    found = _timed_or_fp32(machine, shape, say)
    if found.source != "probe":  # the timing failed: fp32, not kept
        return found
    table.setdefault(machine, {})[shape.key] = {k: v for k, v in asdict(found).items()
                                                if k not in ("source", "machine")}
    try:
        write_json_atomic(path, table)
    except OSError:  # a full disk: the verdict holds for this process, and is timed again next time
        pass
    return found


def _timed_or_fp32(machine: str, shape: Shape, say) -> Verdict:
    """The probe's verdict, or fp32 (not cached) where the timing itself fails on this build."""
    try:
        return decide(time_block(shape), machine, shape)
    except Exception as e:  # a torch build without bf16 on the CPU, or a kernel that refuses: fp32 is always safe
        _say(say, f"timing bf16 on this CPU failed ({type(e).__name__}: {e}); fp32 is used")
        return Verdict(source="fp32: the timing failed", machine=machine, shape=shape.key)


def decide(times: dict[str, float], machine: str = "", shape: Shape = DEFAULT_SHAPE) -> Verdict:
    """The verdict of a probe's timings (milliseconds): bf16 where it takes at most :data:`CLEARLY` of fp32's."""
    out = Verdict(times_ms=dict(times), machine=machine, shape=shape.key)
    if times.get("encode_bf16", float("inf")) <= CLEARLY * times["encode_fp32"]:
        out.encode = "bf16"
    kernels = {k.removeprefix("train_bf16_"): v for k, v in times.items() if k.startswith("train_bf16_")}
    if kernels:
        out.attention = min(kernels, key=kernels.get)
        if kernels[out.attention] <= CLEARLY * times["train_fp32"]:
            out.train = "bf16"
    return out


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):  # none yet, or unreadable: timed again and written whole
        return {}


def _say(say, line: str) -> None:
    if say is not None:
        say(line)
        return
    from xlsent.utils.progress import progress_shown

    if progress_shown(None):
        import sys

        print(line, file=sys.stderr, flush=True)


def time_block(shape: Shape, rounds: int = ROUNDS) -> dict[str, float]:
    """Milliseconds (best of ``rounds``, the settings interleaved) of one transformer block of ``shape``:
    ``encode_fp32``, ``encode_bf16`` (forward, autocast), ``train_fp32``, ``train_bf16_plain`` and
    ``train_bf16_fused`` (forward and backward, autocast, each attention kernel). After the first round a bf16
    setting over twice fp32's time is not timed again."""
    import contextlib

    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from transformers import BertConfig
    from transformers.models.bert.modeling_bert import BertLayer

    config = BertConfig(hidden_size=shape.hidden, intermediate_size=shape.intermediate,
                        num_attention_heads=shape.heads, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                        attn_implementation="sdpa")
    gen = torch.Generator().manual_seed(0)
    with torch.inference_mode(False), torch.random.fork_rng(devices=[]):  # weights that can take gradients
        torch.manual_seed(0)
        block = BertLayer(config).eval()
        x_enc = torch.randn(*ENCODE_BATCH, shape.hidden, generator=gen)
        x_train = torch.randn(*TRAIN_BATCH, shape.hidden, generator=gen)

    def out(y):
        return y[0] if isinstance(y, tuple) else y

    def encode(bf16: bool):
        def run():
            ctx = torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
            with torch.inference_mode(), ctx:
                out(block(x_enc))
        return run

    def train(kernel: str | None):
        def run():
            att = sdpa_kernel(SDPBackend.MATH) if kernel == "plain" else contextlib.nullcontext()
            ctx = torch.autocast("cpu", dtype=torch.bfloat16) if kernel else contextlib.nullcontext()
            with att, ctx:
                y = out(block(x_train))
            y.float().square().mean().backward()
            block.zero_grad(set_to_none=True)
        return run

    runs = {"encode_fp32": encode(False), "encode_bf16": encode(True), "train_fp32": train(None),
            "train_bf16_plain": train("plain"), "train_bf16_fused": train("fused")}
    # whatever the caller is inside (an autocast, no_grad, inference_mode: the probe runs where it is first needed),
    # each setting runs in exactly its own precision, with gradients where it trains
    with torch.inference_mode(False), torch.enable_grad(), torch.autocast("cpu", enabled=False):
        return _best(runs, rounds)


def _best(runs: dict, rounds: int) -> dict[str, float]:
    for run in runs.values():  # warm-up: kernels chosen, memory allocated
        run()
    best: dict[str, float] = {}
    for i in range(rounds):
        for name, run in runs.items():
            if i and name.endswith(("bf16", "plain", "fused")):
                base = best["encode_fp32" if name.startswith("encode") else "train_fp32"]
                if best[name] > 2 * base:  # plainly slower: no need to be precise
                    continue
            t = time.perf_counter()
            run()
            best[name] = min(best.get(name, float("inf")), (time.perf_counter() - t) * 1000)
    return {k: round(v, 2) for k, v in best.items()}


def describe(shape: Shape | None = None) -> dict[str, str]:
    """What this machine's CPU gets for ``shape``, and why: rows for ``xlsent models info``."""
    v = verdict(shape)
    rows = {"CPU": cpu_name(), "CPU encoding": v.reason("encode"), "CPU training": v.reason("train")}
    if v.times_ms:
        rows["CPU probe (ms)"] = ", ".join(f"{k} {t:g}" for k, t in v.times_ms.items())
    rows["CPU override"] = f"{ENV}=0 or 1; --dtype (encoding), optim.precision (training)"
    return rows
