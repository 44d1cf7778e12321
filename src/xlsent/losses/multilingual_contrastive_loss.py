"""Multilingual contrastive learning (MCL) + distillation, stage 4 of Ding et al. (2022).

Ding et al. *Multi-stage Distillation Framework for Cross-Lingual Semantic Similarity
Matching*, Findings of NAACL 2022, §3.2 Eq. (5)–(9).

For a batch of N parallel pairs (s_i, t_i), the teacher's English cosine matrix
``φ_T[i, j] = cos(T(s_i), T(s_j))`` is the target for the student's cross-lingual matrix
``φ_S[i, j] = cos(S(s_i), S(t_j))``:

* ``soft`` (Eq. 5, the paper's method): ``1/N² Σ_ij (φ_T − φ_S)²`` — every entry, the
  diagonal included, no temperature (as in the published code).
* ``bool`` (Eq. 8): the target is the identity matrix (1 for translations, 0 otherwise).
* ``ce`` (Eq. 9): ``−Σ_j φ_T[i, j] · log softmax_j(φ_S[i, :] / τ)`` with τ = 0.05; the paper
  sums over i, xlsent averages over i so the scale does not grow with the batch size.
* ``off``: no contrastive term (the "w/o CL" ablation).

The total is ``mcl_weight · ℓ1 + kd_weight · ℓ2`` with ℓ2 = MSE(S(s), T(s)) + MSE(S(t), T(s))
(Eq. 6; element-wise mean squared error, as sentence-transformers' MSELoss and the published
code compute it); both weights are 1 in the paper.

xlsent option: ``infonce_weight > 0`` adds an in-batch InfoNCE of both student sides against
the teacher's English embeddings (each S(s_i) and S(t_i) must pick T(s_i) among the batch's
targets, τ = ``infonce_temperature``; :func:`~xlsent.losses.contrastive_distill_loss`). With
an anisotropic teacher (e5: any two sentences at cosine ≈ 0.8) the soft MCL and MSE terms
alone reach a low loss while retrieval falls to chance; the InfoNCE term keeps translations
apart from the rest of the batch. 0 (the default) is the paper's loss.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from xlsent.losses.contrastive_distill_loss import contrastive_distill_loss
from xlsent.losses.gather import gather_rows, share_of_mean

VARIANTS = ("soft", "bool", "ce", "off")


def cosine_matrix(x: Tensor, y: Tensor) -> Tensor:
    return F.normalize(x, dim=-1) @ F.normalize(y, dim=-1).T


def mcl_loss(teacher_src: Tensor, student_src: Tensor, student_tgt: Tensor, variant: str = "soft",
             temperature: float = 0.05) -> Tensor:
    """ℓ1 of Eq. 5 / 8 / 9 for one batch (see the module docstring). Under DDP this process's rows are
    compared with every process's columns (:mod:`xlsent.losses.gather`), as one process with the global batch."""
    if variant == "off":
        return student_src.new_zeros(())
    all_tgt, offset = gather_rows(student_tgt)
    phi_s = cosine_matrix(student_src, all_tgt)
    n, cols = len(student_src), len(all_tgt)
    if variant in ("soft", "ce"):
        all_teacher, _ = gather_rows(teacher_src.detach(), grad=False)
        phi_t = cosine_matrix(teacher_src, all_teacher).to(phi_s.dtype)
    if variant == "soft":
        return share_of_mean((phi_t - phi_s).pow(2).sum(), n) / cols
    if variant == "bool":
        eye = torch.zeros_like(phi_s)
        eye[torch.arange(n, device=eye.device), torch.arange(n, device=eye.device) + offset] = 1
        return share_of_mean((eye - phi_s).pow(2).sum(), n) / cols
    if variant == "ce":
        return share_of_mean(-(phi_t * F.log_softmax(phi_s / temperature, dim=1)).sum(), n)
    raise ValueError(f"unknown MCL variant '{variant}' (choose from {', '.join(VARIANTS)})")


class MultilingualContrastiveLoss(nn.Module):
    """MCL (Eq. 5/8/9) plus the cross-lingual KD MSE (Eq. 6).

    Inputs: two text columns (English, other language). Labels: the teacher's embedding of
    the English side, shape ``(batch, dim)``.
    """

    def __init__(self, model, variant: str = "soft", temperature: float = 0.05, mcl_weight: float = 1.0,
                 kd_weight: float = 1.0, infonce_weight: float = 0.0, infonce_temperature: float = 0.05) -> None:
        super().__init__()
        if variant not in VARIANTS:
            raise ValueError(f"unknown MCL variant '{variant}' (choose from {', '.join(VARIANTS)})")
        self.model = model
        self.variant = variant
        self.temperature = float(temperature)
        self.mcl_weight = float(mcl_weight)
        self.kd_weight = float(kd_weight)
        self.infonce_weight = float(infonce_weight)
        self.infonce_temperature = float(infonce_temperature)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor) -> Tensor:
        from xlsent.losses.sorted_forward import embed_columns

        s_src, s_tgt = embed_columns(self.model, sentence_features)
        return self.compute_loss_from_embeddings(s_src, s_tgt, labels)

    def compute_loss_from_embeddings(self, s_src: Tensor, s_tgt: Tensor, labels: Tensor) -> Tensor:
        t_src = labels.detach().to(s_src.dtype)
        loss = self.mcl_weight * mcl_loss(t_src, s_src, s_tgt, self.variant, self.temperature)
        if self.kd_weight:
            loss = loss + self.kd_weight * (F.mse_loss(s_src, t_src) + F.mse_loss(s_tgt, t_src))
        if self.infonce_weight:
            both = torch.cat([s_src, s_tgt])
            loss = loss + self.infonce_weight * contrastive_distill_loss(both, torch.cat([t_src, t_src]),
                                                                         self.infonce_temperature)
        return loss

    def get_config_dict(self) -> dict[str, Any]:
        return {"variant": self.variant, "temperature": self.temperature, "mcl_weight": self.mcl_weight,
                "kd_weight": self.kd_weight, "infonce_weight": self.infonce_weight,
                "infonce_temperature": self.infonce_temperature}
