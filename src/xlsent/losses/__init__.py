"""Losses, as sentence-transformers-compatible ``nn.Module`` classes (``forward(features, labels)``)."""

from xlsent.losses.distances import DISTANCES, pair_distance
from xlsent.losses.contrastive_distill_loss import ContrastiveDistillLoss, contrastive_distill_loss
from xlsent.losses.multilingual_contrastive_loss import MultilingualContrastiveLoss, mcl_loss
from xlsent.losses.ranking_distill_loss import RankingDistillLoss
from xlsent.losses.siamese_contrastive_loss import SiameseContrastiveLoss, contrastive_loss
from xlsent.losses.soft_margin_triplet_loss import (
    SoftMarginTripletDistillLoss,
    soft_margin_triplet_loss,
    squared_error_kd,
)

__all__ = [
    "DISTANCES",
    "ContrastiveDistillLoss",
    "MultilingualContrastiveLoss",
    "RankingDistillLoss",
    "SiameseContrastiveLoss",
    "SoftMarginTripletDistillLoss",
    "contrastive_distill_loss",
    "contrastive_loss",
    "mcl_loss",
    "pair_distance",
    "soft_margin_triplet_loss",
    "squared_error_kd",
]
