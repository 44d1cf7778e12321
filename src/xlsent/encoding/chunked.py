"""Chunked pooling (Manafi 2025, §3.2.5): long texts are split into ≤ N-word chunks, each chunk is
embedded, and the chunk embeddings are averaged.

Decisions: words are whitespace tokens; chunks are consecutive and as equal as possible
(a 45-word text with N = 20 gives 15 + 15 + 15, not 20 + 20 + 5, so no chunk is a stub);
the average is unweighted; if the model normalises its embeddings (a final ``Normalize``
module), the average is normalised again so downstream distances keep their scale.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np


def chunk_text(text: str, max_words: int) -> list[str]:
    """``text`` split into consecutive chunks of at most ``max_words`` whitespace words (sizes balanced)."""
    words = text.split()
    if max_words <= 0 or len(words) <= max_words:
        return [text]
    n_chunks = math.ceil(len(words) / max_words)
    bounds = np.linspace(0, len(words), n_chunks + 1).round().astype(int)
    return [" ".join(words[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def chunked_encode(
    encode: Callable[[list[str]], np.ndarray], texts: Sequence[str], max_words: int, renormalize: bool = False
) -> np.ndarray:
    """Embed ``texts`` with ``encode``, averaging over ≤ ``max_words``-word chunks."""
    texts = list(texts)
    chunks, owner = [], []
    for i, t in enumerate(texts):
        parts = chunk_text(t, max_words)
        chunks += parts
        owner += [i] * len(parts)
    vecs = np.asarray(encode(chunks), dtype=np.float32)
    owner_arr = np.asarray(owner)
    out = np.zeros((len(texts), vecs.shape[1]), dtype=np.float32)
    np.add.at(out, owner_arr, vecs)
    out /= np.bincount(owner_arr, minlength=len(texts))[:, None]
    if renormalize:
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return out


def model_normalizes(model) -> bool:
    from sentence_transformers.base.modules import Normalize

    return len(model) > 0 and isinstance(model[len(model) - 1], Normalize)
