"""Losses, as sentence-transformers-compatible ``nn.Module`` classes."""

from xlsent.losses.siamese_contrastive_loss import SiameseContrastiveLoss, contrastive_loss, pair_distance

__all__ = ["SiameseContrastiveLoss", "contrastive_loss", "pair_distance"]
