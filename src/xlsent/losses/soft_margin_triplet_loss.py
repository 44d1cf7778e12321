"""Soft-margin triplet loss with teacher distillation (Manafi 2025, §3.2.2, "Distill-XLMR-Triplet").

    L = 1/N Σ log(1 + exp(d(a_i, p_i) − d(a_i, n_i) + α))                      (Eq. 3.1)
      + λ · 1/N Σ (‖p_i^s − p_i^t‖² + ‖n_i^s − n_i^t‖²)                          (Eq. 3.2, 3.3)

with ``d`` the Euclidean distance, ``a`` the low-resource anchor, ``p`` its English
translation and ``n`` an unrelated English sentence; ``p^t``, ``n^t`` are the teacher's
embeddings, passed as labels (computed once, see :mod:`xlsent.encoding.teacher_cache`).

sentence-transformers' :class:`~sentence_transformers.sentence_transformer.losses.TripletLoss`
uses a hinge ``max(0, d(a,p) − d(a,n) + margin)``; the paper's soft margin is the softplus of
the same quantity, so it never stops pushing. The KD term follows Eq. 3.2 literally: the
*squared L2 norm* (summed over dimensions, averaged over the batch), not an element-wise mean.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch.nn.functional as F
from torch import Tensor, nn

from xlsent.losses.distances import DISTANCES, pair_distance

def soft_margin_triplet_loss(a: Tensor, p: Tensor, n: Tensor, margin: float = 1.0, distance: str = "euclidean") -> Tensor:
    """Eq. 3.1: mean of ``log(1 + exp(d(a,p) − d(a,n) + α))``."""
    return F.softplus(pair_distance(a, p, distance) - pair_distance(a, n, distance) + margin).mean()


def squared_error_kd(student: list[Tensor], teacher: list[Tensor]) -> Tensor:
    """Eq. 3.2: ``1/N Σ_i Σ_k ‖s_k,i − t_k,i‖²`` over the given columns ``k``."""
    return sum((s - t.to(s.dtype)).pow(2).sum(-1) for s, t in zip(student, teacher)).mean()


class SoftMarginTripletDistillLoss(nn.Module):
    """Soft-margin triplet loss on the student plus λ · squared-error distillation to the teacher.

    Args:
        model: the student SentenceTransformer.
        margin: α of Eq. 3.1 (the paper gives no value; xlsent's default is 1.0, on unit
            vectors whose Euclidean distances lie in [0, 2]).
        kd_weight: λ of Eq. 3.3 (0.9 in the paper); 0 gives the plain soft-margin triplet loss.
        distance: ``euclidean`` (the paper), ``cosine`` or ``manhattan``.

    Inputs: three text columns (anchor, positive, negative). Labels: the teacher's embeddings
    of the positive and negative, shape ``(batch, 2, dim)``. With ``kd_weight == 0`` labels
    may be omitted.
    """

    def __init__(self, model, margin: float = 1.0, kd_weight: float = 0.9, distance: str = "euclidean") -> None:
        super().__init__()
        if distance not in DISTANCES:
            raise ValueError(f"distance must be one of {DISTANCES}, not {distance!r}")
        self.model = model
        self.margin = float(margin)
        self.kd_weight = float(kd_weight)
        self.distance = distance

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None) -> Tensor:
        from xlsent.losses.sorted_forward import embed_columns

        a, p, n = embed_columns(self.model, sentence_features)
        return self.compute_loss_from_embeddings(a, p, n, labels)

    def compute_loss_from_embeddings(self, a: Tensor, p: Tensor, n: Tensor, labels: Tensor | None) -> Tensor:
        loss = soft_margin_triplet_loss(a, p, n, self.margin, self.distance)
        if self.kd_weight:
            if labels is None or labels.dim() != 3 or labels.size(1) != 2:
                raise ValueError("SoftMarginTripletDistillLoss needs teacher labels of shape (batch, 2, dim): [T(positive), T(negative)]")
            labels = labels.detach()
            loss = loss + self.kd_weight * squared_error_kd([p, n], [labels[:, 0], labels[:, 1]])
        return loss

    def get_config_dict(self) -> dict[str, Any]:
        return {"margin": self.margin, "kd_weight": self.kd_weight, "distance": self.distance}
