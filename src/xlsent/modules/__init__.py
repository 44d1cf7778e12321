"""sentence-transformers-compatible modules that xlsent models are built from.

Each class saves with ``save`` and loads with ``load`` so that
``SentenceTransformer(path)`` rebuilds the model in a fresh process.
"""

from xlsent.modules.center_normalize import CenterNormalize
from xlsent.modules.hidden_layer_pooling import HiddenLayerPooling
from xlsent.modules.siamese_head import SiameseHead

__all__ = ["CenterNormalize", "HiddenLayerPooling", "SiameseHead"]
