"""Simulated int8, shared by the int8 pass (:mod:`xlsent.export.quantize`: the smoothing search's error) and the
int8 self-distillation (:mod:`xlsent.export.distill`): onnxruntime's dynamic scheme written as torch fake
quantisation with straight-through gradients, and SmoothQuant's scale.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # torch is imported where it is used: the CLI imports the int8 settings, and must start fast
    import torch


def fake_quant_activation(x: torch.Tensor) -> torch.Tensor:
    """onnxruntime's DynamicQuantizeLinear: uint8, per tensor, range [min(0, x), max(0, x)], straight-through."""
    import torch

    lo = torch.clamp(x.detach().min(), max=0.0)
    hi = torch.clamp(x.detach().max(), min=0.0)
    scale = torch.clamp((hi - lo) / 255.0, min=1e-8)
    zero = torch.round(-lo / scale).clamp(0, 255)
    return torch.fake_quantize_per_tensor_affine(x, scale.float(), zero.int(), 0, 255)


def fake_quant_activation_per_token(x: torch.Tensor) -> torch.Tensor:
    """:mod:`xlsent.export.per_token`'s scheme: symmetric int8 with one scale per token, straight-through."""
    import torch

    scale = torch.clamp(x.detach().abs().amax(-1, keepdim=True) / 127.0, min=1e-8 / 127)
    return x + (torch.round(x / scale) * scale - x).detach()


def fake_quant_weight(w: torch.Tensor, per_channel: bool, reduce_range: bool) -> torch.Tensor:
    """Symmetric int8 weights (per output channel of an ``nn.Linear``), straight-through."""
    import torch

    qmax = 63 if reduce_range else 127
    if per_channel:
        scale = torch.clamp(w.detach().abs().amax(1) / qmax, min=1e-8).float()
        return torch.fake_quantize_per_channel_affine(w, scale, torch.zeros_like(scale, dtype=torch.int32), 0,
                                                      -qmax - 1, qmax)
    scale = torch.clamp(w.detach().abs().max() / qmax, min=1e-8).float()
    return torch.fake_quantize_per_tensor_affine(w, scale, torch.zeros((), dtype=torch.int32), -qmax - 1, qmax)


def smooth_scale(xmax: np.ndarray, wmax: np.ndarray, alpha: float) -> np.ndarray:
    """SmoothQuant's per-input-channel ``s = max|X|^α / max|W|^(1−α)``, clipped to [0.01, 100]."""
    s = np.power(np.maximum(xmax, 1e-5), alpha) / np.power(wmax, 1.0 - alpha)
    return np.clip(s, 1e-2, 1e2).astype(np.float32)
