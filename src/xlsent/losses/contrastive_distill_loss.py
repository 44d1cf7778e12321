"""Embedding distillation with an in-batch contrastive term (xlsent's option for stage 3 of Ding et al. 2022).

The paper's stage 3 (Eq. 4) fits the student to the assistant's sentence embeddings by MSE
alone. On anisotropic assistants such as multilingual-e5 (any two sentences have cosine
≈ 0.7–0.8) MSE is dominated by the shared direction: a student at cosine 0.92 with its
targets can still retrieve at chance, because what tells sentences apart is the small
residual around that direction. The contrastive term asks each student embedding to be
closer to its own target than to the other targets of the batch (a softmax over
``S · Tᵀ / τ``, as in CRD / contrastive distillation), which is exactly what retrieval needs.

For C text columns (e.g. English and the other language) with targets ``labels`` of shape
``(batch, C, dim)`` (or ``(batch, dim)``, one target shared by every column), the C·batch
student embeddings S and targets T (rows in the same order) give::

    loss = mse_weight · mean_c MSE(S_c, T_c) + contrastive_weight · CE(S Tᵀ / τ, identity)

where identical targets in the batch (the same English sentence twice, or a shared target)
are all counted as positives. With ``contrastive_weight = 0`` it is sentence-transformers'
``MSELoss`` (up to the mean over columns).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from xlsent.losses.gather import gather_rows, share_of_mean


def contrastive_distill_loss(student: Tensor, target: Tensor, temperature: float = 0.05) -> Tensor:
    """In-batch InfoNCE of student rows against target rows (cosine / τ); equal targets are all positives.
    Under DDP each student row is scored against every process's targets (:mod:`xlsent.losses.gather`)."""
    s = F.normalize(student, dim=-1)
    t = F.normalize(target.to(s.dtype), dim=-1)
    all_t, _ = gather_rows(t.detach(), grad=False)  # targets are fixed: no gradient flows to them
    logits = s @ all_t.T / temperature
    with torch.no_grad():
        positive = (t @ all_t.T) > 1 - 1e-6  # rows whose targets coincide
    log_p = F.log_softmax(logits, dim=1)
    # multi-positive InfoNCE: −log Σ_{j positive} p_ij
    return share_of_mean(-torch.logsumexp(log_p.masked_fill(~positive, float("-inf")), dim=1).sum(), len(s))


class ContrastiveDistillLoss(nn.Module):
    """MSE to fixed target embeddings plus an in-batch contrastive term (see the module docstring)."""

    def __init__(self, model, temperature: float = 0.05, contrastive_weight: float = 1.0,
                 mse_weight: float = 1.0) -> None:
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.model = model
        self.temperature = float(temperature)
        self.contrastive_weight = float(contrastive_weight)
        self.mse_weight = float(mse_weight)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor) -> Tensor:
        from xlsent.losses.sorted_forward import embed_columns

        return self.compute_loss_from_embeddings(list(embed_columns(self.model, sentence_features)), labels)

    def compute_loss_from_embeddings(self, columns: list[Tensor], labels: Tensor) -> Tensor:
        labels = labels.detach()
        targets = [labels[:, c] if labels.dim() == 3 else labels for c in range(len(columns))]
        s, t = torch.cat(columns), torch.cat(targets).to(columns[0].dtype)
        loss = s.new_zeros(())
        if self.mse_weight:
            loss = loss + self.mse_weight * F.mse_loss(s, t)
        if self.contrastive_weight:
            loss = loss + self.contrastive_weight * contrastive_distill_loss(s, t, self.temperature)
        return loss

    def get_config_dict(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "contrastive_weight": self.contrastive_weight,
                "mse_weight": self.mse_weight}
