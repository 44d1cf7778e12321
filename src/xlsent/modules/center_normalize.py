"""Unit → center → unit normalisation with a stored center (Huang et al., 2023, §4.2)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class CenterNormalize(nn.Module):
    """Length-normalise, subtract a fixed center, length-normalise again.

    The center is the mean of the unit-normalised training embeddings, estimated
    once after training (:meth:`fit`) and saved with the model, so encoding a
    single sentence needs no batch statistics. A saved model carries it as sentence-transformers' own
    ``Normalize`` → ``Dense`` (identity weight, bias −center) → ``Normalize``.
    """

    def __init__(self, dimension: int) -> None:
        super().__init__()
        self.dimension = int(dimension)
        self.register_buffer("center", torch.zeros(self.dimension))

    @torch.no_grad()
    def fit(self, embeddings: torch.Tensor) -> "CenterNormalize":
        self.center.copy_(F.normalize(embeddings.float(), dim=-1).mean(0))
        return self

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(F.normalize(x, dim=-1) - self.center.to(x.dtype), dim=-1)
