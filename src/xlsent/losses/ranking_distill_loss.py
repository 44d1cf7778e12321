"""In-batch ranking in both directions plus self-distillation to a frozen copy of the base model.

The loss of ``xlsent train adapt`` (:mod:`xlsent.recipes.adapt`): sentence-transformers'
:class:`~sentence_transformers.sentence_transformer.losses.MultipleNegativesRankingLoss` (InfoNCE
with in-batch negatives and optional hard negatives, here both ways: each anchor finds its
positive among the batch's positives and hard negatives, and each positive finds its anchor among
the batch's anchors), plus λ times the squared error of both sides to the frozen model's vector of
the positive (the English side)::

    L = ½ (CE(s·cos(a_i, P ∪ N)) + CE(s·cos(p_i, A)))  +  λ · 1/B Σ_i (‖p_i − t_i‖² + ‖a_i − t_i‖²)

with ``t_i`` the frozen base model's embedding of ``p_i``. The distillation term is X-KD's
(Reimers & Gurevych 2020) with the squared L2 norm of Manafi (2025, Eq. 3.2): it keeps the
English side where the base model put it — and with it every other language the base model
aligned to English — while the anchor side is pulled to the same target the ranking term points
it at.
"""

from __future__ import annotations

from typing import Any, Iterable

from torch import Tensor, nn

from xlsent.losses.gather import distributed
from xlsent.losses.soft_margin_triplet_loss import squared_error_kd


class RankingDistillLoss(nn.Module):
    """Bidirectional MultipleNegativesRankingLoss + λ · squared-error self-distillation.

    Args:
        model: the SentenceTransformer being trained.
        scale: inverse temperature of the ranking softmax (sentence-transformers' default 20).
        symmetric: rank in both directions (anchor → positives and positive → anchors).
        kd_weight: λ; 0 gives the ranking loss alone (and needs no labels).
        gather_across_devices: passed to the ranking loss (negatives from every process under DDP);
            ``None`` (the default): whenever a process group of two or more processes is running.
        sorted_chunk: the batch's texts (every column together) run through the model in chunks of this many,
            sorted by length, each padded only to its own longest (:func:`~xlsent.losses.sorted_forward.embed_sorted`:
            the same loss, less padding); 0 (the default): a forward pass a column, as sentence-transformers does.
            ``mini_batch_size``: its old name (sentence-transformers' cached losses use that name for GradCache's
            chunks, which bound memory — these do not), still accepted.

    Inputs:
        +-------------------------------------------------+-------------------------------------------+
        | Texts                                           | Labels                                    |
        +=================================================+===========================================+
        | (anchor, positive) or (anchor, positive, neg…)  | the frozen model's embedding of positive  |
        |                                                 | (B, D); any value when ``kd_weight`` = 0  |
        +-------------------------------------------------+-------------------------------------------+

    Relations: with ``kd_weight=0`` and ``symmetric=False`` it is exactly
    ``MultipleNegativesRankingLoss``; with ``symmetric=True`` it is
    ``MultipleNegativesSymmetricRankingLoss``'s objective with hard negatives kept in the forward
    direction; its distillation term is :func:`~xlsent.losses.squared_error_kd` on both columns
    against one target.

    Example::

        loss = RankingDistillLoss(student, kd_weight=1.0)
        # dataset columns: anchor (Chichewa), positive (English), label (frozen e5-small's English vector)
    """

    def __init__(self, model, scale: float = 20.0, symmetric: bool = True, kd_weight: float = 1.0,
                 gather_across_devices: bool | None = None, sorted_chunk: int = 0,
                 mini_batch_size: int | None = None) -> None:
        super().__init__()
        if mini_batch_size is not None:
            import warnings

            warnings.warn("RankingDistillLoss(mini_batch_size=) is now sorted_chunk= (mini_batch_size is accepted "
                          "until the next release)", DeprecationWarning, stacklevel=2)
            sorted_chunk = mini_batch_size
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

        self.model = model
        self.kd_weight = float(kd_weight)
        self.gather = gather_across_devices
        self.sorted_chunk = int(sorted_chunk)
        self.ranking = MultipleNegativesRankingLoss(
            model, scale=scale, gather_across_devices=bool(gather_across_devices),
            directions=("query_to_doc", "doc_to_query") if symmetric else ("query_to_doc",),
            partition_mode="per_direction")

    @property
    def mini_batch_size(self) -> int:
        """:attr:`sorted_chunk`'s old name."""
        return self.sorted_chunk

    @mini_batch_size.setter
    def mini_batch_size(self, value: int) -> None:
        self.sorted_chunk = int(value)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor) -> Tensor:
        from xlsent.losses.sorted_forward import embed_sorted

        emb = embed_sorted(self.model, sentence_features, self.sorted_chunk)
        return self.compute_loss_from_embeddings(emb, labels)

    def compute_loss_from_embeddings(self, emb: list[Tensor], labels: Tensor) -> Tensor:
        self.ranking.gather_across_devices = distributed()[0] > 1 if self.gather is None else self.gather
        loss = self.ranking.compute_loss_from_embeddings(emb, labels)
        if self.kd_weight:
            loss = loss + self.kd_weight * squared_error_kd([emb[1], emb[0]], [labels, labels])
        return loss

    def get_config_dict(self) -> dict[str, Any]:
        return {**self.ranking.get_config_dict(), "kd_weight": self.kd_weight,
                "sorted_chunk": self.sorted_chunk}
