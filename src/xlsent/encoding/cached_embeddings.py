"""Sentence embeddings of a fixed model (a teacher, an assistant) computed once and kept on disk.

Distillation targets do not change during training, so they are encoded once per
(model, text) and stored with :class:`~xlsent.encoding.feature_cache.FeatureCache` under
``<xlsent cache>/features/<model fingerprint>/sentence_embedding`` — a rerun, a resumed run or
another recipe with the same teacher reads them back instead of encoding again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from xlsent.encoding.feature_cache import FeatureCache, cached_features
from xlsent.models.handle import ModelHandle
from xlsent.utils.io import cache_dir


def embedding_cache(fingerprint: str, name: str = "sentence_embedding", cache_root: str | Path | None = None) -> FeatureCache:
    root = Path(cache_root) if cache_root else cache_dir() / "features"
    return FeatureCache(root / fingerprint / name)


def cached_embeddings(
    handle: ModelHandle,
    texts: Sequence[str],
    batch_size: int = 64,
    show_progress: bool = True,
    description: str = "teacher embeddings",
    cache_root: str | Path | None = None,
) -> np.ndarray:
    """The model's sentence embeddings of ``texts``; only texts never seen before are encoded — on a CPU in the
    precision every encoder runs in there (bf16 autocast where timed faster, :func:`xlsent.utils.device.encoding_dtype`; the
    cache keyed by it)."""
    from xlsent.encoding.embed import embed
    from xlsent.utils.device import cpu_autocast, device_kind, encoding_dtype

    device = str(handle.model.device)
    dtype = encoding_dtype(device, handle.model) if device_kind(device) == "cpu" else "fp32"
    cache = embedding_cache(handle.fingerprint + ("|dtype=bf16" if dtype == "bf16" else ""), cache_root=cache_root)

    def run(todo: list[str]) -> dict:
        with cpu_autocast(dtype, device):
            return {"emb": embed(handle.model, todo, batch_size=batch_size, show_progress=show_progress,
                                 description=description)}

    out = cached_features({"emb": cache}, list(texts), run)["emb"]
    return out.reshape(len(texts), -1) if len(texts) else np.zeros((0, handle.dimension), np.float32)
