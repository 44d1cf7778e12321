"""The shared reconstruction layer of the siamese network (Huang et al., 2023, Fig. 5)."""

from __future__ import annotations

import torch
from torch import nn

HEAD_TYPES = ("linear", "tanh", "relu", "tanh2")


class SiameseHead(nn.Module):
    """Dimension-preserving head applied to both sides of a pair (weights shared).

    ``head_type``:

    * ``linear`` — FC → dropout (the paper's choice, Fig. 5a);
    * ``tanh`` / ``relu`` — FC → activation → dropout (Fig. 5b);
    * ``tanh2`` — FC → tanh → FC → tanh → dropout (Fig. 5c, two layers).

    Every FC is ``dim × dim`` with a bias and is initialised to the identity
    (bias 0), so the untrained head leaves the encoder's geometry intact — the
    paper does not say how it initialises; a random projection would destroy
    the pre-trained alignment the method fine-tunes. Dropout is active only in
    training mode. A saved model carries it as sentence-transformers' own ``Dense`` and ``Dropout``
    (:func:`xlsent.recipes.siamese.save_siamese_model`).
    """

    def __init__(self, dimension: int, head_type: str = "linear", dropout: float = 0.2, identity_init: bool = True):
        super().__init__()
        if head_type not in HEAD_TYPES:
            raise ValueError(f"head_type must be one of {HEAD_TYPES}, not {head_type!r}")
        self.dimension = int(dimension)
        self.head_type = head_type
        self.dropout = float(dropout)
        self.identity_init = bool(identity_init)
        n_fc = 2 if head_type == "tanh2" else 1
        self.fcs = nn.ModuleList(nn.Linear(self.dimension, self.dimension) for _ in range(n_fc))
        if self.identity_init:
            for fc in self.fcs:
                nn.init.eye_(fc.weight)
                nn.init.zeros_(fc.bias)
        self.drop = nn.Dropout(self.dropout)

    def transform(self, x: torch.Tensor) -> torch.Tensor:
        for fc in self.fcs:
            x = fc(x)
            if self.head_type in ("tanh", "tanh2"):
                x = torch.tanh(x)
            elif self.head_type == "relu":
                x = torch.relu(x)
        return self.drop(x)
