"""Where models run: the one place xlsent names a device.

``--device auto|cpu|cuda|cuda:N|mps`` (every command that loads a model) and ``models.device`` (every
recipe config) go through :func:`resolve_device`; :func:`use_device` makes the answer the process's
default, which :func:`current_device` hands to whatever loads a model. ``auto`` picks CUDA, then Apple's
MPS, then the CPU. A device that is not there is one :class:`~xlsent.utils.errors.XlsentError` line naming
the option and what was found — raised before any model loads.
"""

from __future__ import annotations

import os
import re

from xlsent.utils.errors import XlsentError, named

DEVICE_HELP = "auto | cpu | cuda | cuda:N | mps"
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
DTYPES = ("fp32", "fp16", "bf16")

# ONNX export traces, checks and quantises the model on the CPU whatever --device says: the graph it writes
# runs on any device (onnxruntime's providers choose), and its checks compare against CPU fp32 vectors. Models
# assembled to be saved (a recipe's output folder, a freshly built student) are built here too; a trainer or the
# one loop then places them on the process's device.
EXPORT_DEVICE = "cpu"

_chosen: str | None = None
_encoding_dtype = "auto"


def _found() -> str:
    import torch

    if torch.version.cuda is None and not torch.cuda.is_available():
        cuda = f"this torch ({torch.__version__}) is a CPU build"
    else:
        n = torch.cuda.device_count()
        cuda = f"{n} CUDA GPU(s)" if n else "no CUDA GPU"
    mps = getattr(torch.backends, "mps", None)
    return cuda + (", MPS" if mps is not None and mps.is_available() else "")


def resolve_device(spec: str | None = "auto", option: str = "device") -> str:
    """``spec`` as a torch device string (``cpu``, ``cuda:0``, ``mps``), or one clear error."""
    import torch

    import os

    s = (spec or "auto").strip().lower()
    mps = getattr(torch.backends, "mps", None)
    has_mps = bool(mps is not None and mps.is_available())
    # under torchrun / accelerate launch each process takes the GPU of its local rank
    local = os.environ.get("LOCAL_RANK") if int(os.environ.get("WORLD_SIZE", "1") or 1) > 1 else None
    if s == "auto":
        if torch.cuda.is_available():
            return f"cuda:{local if local is not None else torch.cuda.current_device()}"
        return "mps" if has_mps else "cpu"
    if s == "cpu":
        return "cpu"
    if s == "mps":
        if not has_mps:
            raise XlsentError(f"{named(option, 'mps')}: Apple's MPS is not available here ({_found()}) — use "
                              f"{named(option, 'cpu')} or auto")
        return "mps"
    m = re.fullmatch(r"cuda(?::(\d+))?", s)
    if not m:
        raise XlsentError(f"{named(option, spec)}: not a device — use one of {DEVICE_HELP}")
    if not torch.cuda.is_available():
        raise XlsentError(f"{named(option, spec)}: no CUDA GPU here ({_found()}) — use {named(option, 'cpu')} or "
                          "auto")
    if local is not None:
        if m.group(1) is not None and int(m.group(1)) != int(local):
            raise XlsentError(f"{named(option, spec)}: under several processes each takes the GPU of its local rank — "
                              f"use {named(option, 'cuda')} (or CUDA_VISIBLE_DEVICES to choose the GPUs)")
        index = int(local)
    else:
        index = int(m.group(1)) if m.group(1) is not None else torch.cuda.current_device()
    n = torch.cuda.device_count()
    if index >= n:
        raise XlsentError(f"{named(option, spec)}: this machine has {n} CUDA GPU(s) (cuda:0 … cuda:{n - 1})")
    return f"cuda:{index}"


def use_device(spec: str | None, option: str = "device") -> str:
    """Resolve ``spec`` and make it the device every later model load uses (this process)."""
    global _chosen
    _chosen = resolve_device(spec, option)
    from xlsent.utils.cpu_bf16 import override

    override()  # a bad XLSENT_CPU_BF16 is one line here, before any model loads
    return _chosen


def current_device() -> str:
    """The device chosen by :func:`use_device`, else ``auto``'s answer (cached)."""
    global _chosen
    if _chosen is None:
        _chosen = resolve_device("auto")
    return _chosen


def device_kind(device: str) -> str:
    """``cpu``, ``cuda`` or ``mps``."""
    return device.split(":")[0]


def supports_bf16(device: str) -> bool:
    import torch

    return device_kind(device) == "cuda" and torch.cuda.is_bf16_supported()


def cpu_has_amx() -> bool:
    """Whether this CPU has Intel AMX (Xeon 4th generation and later), as torch reports it — for the record only:
    what runs in bf16 on a CPU is decided by timing it (:func:`cpu_bf16`)."""
    import torch

    check = getattr(torch.cpu, "_is_amx_tile_supported", None)
    try:
        return bool(check()) if check is not None else False
    except Exception:  # an unknown build: no claim
        return False


def cpu_bf16(model=None):
    """This CPU's bf16 verdict (:class:`xlsent.utils.cpu_bf16.Verdict`) for ``model``'s shapes (the default model's
    when None): timed once a machine and cached; ``XLSENT_CPU_BF16=0``/``1`` overrides."""
    from xlsent.utils.cpu_bf16 import shape_of, verdict

    return verdict(shape_of(model) if model is not None else None)


def training_precision(spec: str, device: str, option: str = "optim.precision", model=None) -> str:
    """``fp32``, ``bf16`` or ``fp16`` for ``spec`` on ``device``: ``auto`` = bf16 where the hardware multiplies it
    faster — a GPU that supports it, or a CPU where a training step of ``model``'s shapes was timed clearly faster in
    bf16 (:func:`cpu_bf16`; its attention kernel: :func:`training_attention`) — else fp32 (fp16 needs a loss scaler
    and is used only when asked for; the CPU has no fp16 training)."""
    if spec not in PRECISIONS:
        raise XlsentError(f"{option}={spec}: use one of {', '.join(PRECISIONS)}")
    if spec == "auto":
        if device_kind(device) == "cpu":
            return cpu_bf16(model).train
        return "bf16" if supports_bf16(device) else "fp32"
    kind = device_kind(device)
    if spec == "fp16" and kind != "cuda":
        raise XlsentError(f"{option}=fp16: half precision trains on a CUDA GPU only — use "
                          f"{'bf16 or fp32 on the CPU' if kind == 'cpu' else 'fp32'}")
    if spec == "bf16" and kind == "mps" or (spec == "bf16" and kind == "cuda" and not supports_bf16(device)):
        raise XlsentError(f"{option}=bf16: {device} has no bf16 — use fp16 or fp32")
    return spec


def precision_report(model=None, device: str | None = None) -> dict[str, str]:
    """What ``model`` runs in on ``device`` (the process's when None) under ``auto``, and why: the rows of
    ``xlsent models info``'s ``precision``."""
    device = device or current_device()
    if device_kind(device) == "cpu":
        from xlsent.utils.cpu_bf16 import describe, shape_of

        return {"device": "cpu", **describe(shape_of(model) if model is not None else None)}
    return {"device": device, "encoding": encoding_dtype(device, model),
            "training": training_precision("auto", device, model=model)}


def torch_dtype(name: str, option: str = "dtype"):
    """The torch dtype of ``fp32`` / ``fp16`` / ``bf16``."""
    import torch

    table = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    if name not in table:
        raise XlsentError(f"{named(option, name)}: use one of {', '.join(DTYPES)}")
    return table[name]


def use_encoding_dtype(spec: str | None, option: str = "dtype") -> str:
    """The dtype every later :class:`~xlsent.encoding.encoder.Encoder` runs a torch model in (this process):
    ``auto`` (fp16 on a CUDA GPU, bf16 autocast on a CPU where it was timed clearly faster, fp32 elsewhere),
    ``fp32``, ``fp16`` or ``bf16``."""
    global _encoding_dtype
    s = (spec or "auto").strip().lower()
    if s != "auto" and s not in DTYPES:
        raise XlsentError(f"{named(option, spec)}: use one of auto, {', '.join(DTYPES)}")
    _encoding_dtype = s
    return s


def encoding_spec() -> str:
    """The encoding dtype as asked for this process (``auto`` unless :func:`use_encoding_dtype` said otherwise)."""
    return _encoding_dtype


def encoding_dtype(device: str, model=None) -> str:
    """The dtype an encoder runs in on ``device``: the one asked for, else fp16 on CUDA, on a CPU bf16 where a
    forward pass of ``model``'s shapes was timed clearly faster in bf16 (:func:`cpu_bf16`; autocast, the weights stay
    fp32), and fp32 elsewhere."""
    if _encoding_dtype != "auto":
        return _encoding_dtype
    kind = device_kind(device)
    if kind == "cuda":
        return "fp16"
    return cpu_bf16(model).encode if kind == "cpu" else "fp32"


def cpu_autocast(dtype: str, device: str):
    """Where a model's weights stay fp32 and bf16 is autocast: ``dtype`` bf16 on a CPU (matrix products in bf16, sums
    in fp32); anything else: no context."""
    import contextlib

    if dtype != "bf16" or device_kind(device) != "cpu":
        return contextlib.nullcontext()
    import torch

    return torch.autocast("cpu", dtype=torch.bfloat16)


def plain_attention(precision: str, device: str, model=None) -> bool:
    """Whether a training step in ``precision`` on ``device`` runs torch's plain (math) attention: on a CPU in bf16
    where the probe timed it faster than the fused kernel for ``model``'s shapes (:func:`cpu_bf16`; on a CPU with
    AMX the fused kernel's bf16 backward took as long as all the step's matrix products together)."""
    return precision == "bf16" and device_kind(device) == "cpu" and cpu_bf16(model).attention == "plain"


def training_attention(precision: str, device: str, model=None, plain: bool | None = None):
    """The attention kernel a training step runs under: plain attention where :func:`plain_attention` says so (or
    ``plain``, decided once by the caller), else torch's own choice."""
    import contextlib

    if not (plain_attention(precision, device, model) if plain is None else plain):
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel(SDPBackend.MATH)
