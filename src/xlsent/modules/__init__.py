"""The pieces of the siamese recipe (Huang et al., 2023): the shared head, the stored-center normalisation and
hidden-layer pooling. A saved model holds none of these classes: :func:`xlsent.recipes.siamese.save_siamese_model`
writes sentence-transformers' own modules, so ``SentenceTransformer(path)`` loads it anywhere.
"""

from xlsent.modules.center_normalize import CenterNormalize
from xlsent.modules.hidden_layer_pooling import POOLINGS, pool_hidden
from xlsent.modules.siamese_head import SiameseHead

__all__ = ["CenterNormalize", "POOLINGS", "SiameseHead", "pool_hidden"]
