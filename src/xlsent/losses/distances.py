"""Row-wise distances between embeddings, shared by the pair and triplet losses."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

DISTANCES = ("euclidean", "manhattan", "cosine")


def pair_distance(a: Tensor, b: Tensor, distance: str = "euclidean") -> Tensor:
    """Row-wise distance between ``a`` and ``b`` (same shape, or broadcastable) over the last axis.

    ``euclidean`` (clamped at 1e-12 before the square root, so its gradient is finite at 0),
    ``manhattan``, or ``cosine`` (1 − cos).
    """
    if distance == "euclidean":
        return (a - b).pow(2).sum(-1).clamp(min=1e-12).sqrt()
    if distance == "manhattan":
        return (a - b).abs().sum(-1)
    if distance == "cosine":
        return 1 - F.cosine_similarity(a, b, dim=-1)
    raise ValueError(f"distance must be one of {DISTANCES}, not {distance!r}")
