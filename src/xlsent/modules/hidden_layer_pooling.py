"""Pool one hidden layer of a transformer into a sentence vector (the layer choice of Huang et al., 2023)."""

from __future__ import annotations

import torch

POOLINGS = ("mean", "cls")


def pool_hidden(hidden: torch.Tensor, attention_mask: torch.Tensor, mode: str) -> torch.Tensor:
    """One layer's hidden states ``(batch, tokens, dim)`` → sentence vectors: ``"mean"``, the attention-masked
    mean over tokens, special tokens included (as sentence-transformers' mean pooling does), or ``"cls"``, the
    first token."""
    if mode not in POOLINGS:
        raise ValueError(f"mode must be 'mean' or 'cls', not {mode!r}")
    if mode == "cls":
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
