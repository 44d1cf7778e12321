"""Contrastive margin loss of Hadsell et al. (2006) as used by Huang et al. (2023), Eq. (2)."""

from __future__ import annotations

from typing import Iterable

import torch.nn.functional as F
from torch import Tensor, nn

from xlsent.losses.distances import DISTANCES, pair_distance

def contrastive_loss(
    a: Tensor, b: Tensor, labels: Tensor, margin: float = 1.0, distance: str = "euclidean", reduction: str = "mean"
) -> Tensor:
    """``L = ½(1−l)·D² + ½·l·max(0, m − D)²`` with the paper's labels: **0 = parallel, 1 = non-parallel**.

    ``b`` may carry an extra candidate axis (``a``: (n, d), ``b``: (n, K, d)):
    the per-candidate losses are averaged over K (the "average" negative strategy).
    """
    if b.dim() == a.dim() + 1:
        d = pair_distance(a.unsqueeze(-2), b, distance)  # (n, K)
        labels = labels.to(d.dtype).unsqueeze(-1)
    else:
        d = pair_distance(a, b, distance)
        labels = labels.to(d.dtype)
    loss = 0.5 * (1 - labels) * d.pow(2) + 0.5 * labels * F.relu(margin - d).pow(2)
    if loss.dim() == 2:
        loss = loss.mean(-1)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


class SiameseContrastiveLoss(nn.Module):
    """Contrastive loss over pairs of sentences with a margin, on Euclidean distance by default.

    Args:
        model: a SentenceTransformer (both sentences go through the same, shared, weights).
        margin: ``m`` in Eq. (2); pairs labelled non-parallel are pushed at least this far apart.
        distance: ``"euclidean"`` (the paper), ``"manhattan"`` or ``"cosine"`` (1 − cos).

    References:
        - Huang et al. (2023), Cross-lingual Sentence Embedding for Low-resource
          Chinese-Vietnamese Based on Contrastive Learning, ACM TALLIP 22(6), Eq. (2)–(3).
        - Hadsell, Chopra & LeCun (2006), Dimensionality Reduction by Learning an Invariant Mapping.

    Inputs:
        +-----------------------------------------------+--------------------------------------+
        | Texts                                         | Labels                               |
        +===============================================+======================================+
        | (sentence_A, sentence_B) pairs                | 0 = parallel, 1 = non-parallel       |
        +-----------------------------------------------+--------------------------------------+

    Relations:
        sentence-transformers' ``ContrastiveLoss`` uses the **opposite** labels
        (1 = similar, 0 = dissimilar), cosine distance and margin 0.5 by default.
        To feed data labelled for that loss, pass ``labels = 1 − labels``.
        ``OnlineContrastiveLoss`` adds in-batch hard-pair mining; xlsent's siamese
        recipe mines hardest negatives over the whole training pool instead.

    Example:
        ::

            from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
            from datasets import Dataset
            from xlsent.losses import SiameseContrastiveLoss

            model = SentenceTransformer("path/to/model")
            train = Dataset.from_dict({
                "sentence1": ["Mulungu ndi wabwino.", "Mulungu ndi wabwino."],
                "sentence2": ["God is good.", "The river is wide."],
                "label": [0, 1],
            })
            loss = SiameseContrastiveLoss(model, margin=1.0)
            SentenceTransformerTrainer(model=model, train_dataset=train, loss=loss).train()
    """

    def __init__(self, model: nn.Module, margin: float = 1.0, distance: str = "euclidean") -> None:
        super().__init__()
        if distance not in DISTANCES:
            raise ValueError(f"distance must be one of {DISTANCES}, not {distance!r}")
        self.model = model
        self.margin = margin
        self.distance = distance

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor) -> Tensor:
        reps = [self.model(f)["sentence_embedding"] for f in sentence_features]
        return contrastive_loss(reps[0], reps[1], labels, self.margin, self.distance)

    def get_config_dict(self) -> dict:
        return {"margin": self.margin, "distance": self.distance, "labels": "0 = parallel, 1 = non-parallel"}

    @property
    def citation(self) -> str:
        return "Huang, Liang, Wu, Zhu, Yu (2023). ACM TALLIP 22(6), Article 176. doi:10.1145/3589341"
