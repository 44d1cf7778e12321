"""Embed texts with any sentence-transformers model, batches sorted by token length."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch


def token_lengths(model, texts: Sequence[str]) -> np.ndarray:
    """Number of tokens each text gets (fast tokenizer, no padding)."""
    tok = model.tokenizer
    enc = tok(list(texts), add_special_tokens=True, truncation=True, max_length=model.max_seq_length)
    return np.fromiter((len(ids) for ids in enc["input_ids"]), dtype=np.int64, count=len(texts))


def embed(
    model,
    texts: Sequence[str],
    batch_size: int = 64,
    normalize: bool = False,
    show_progress: bool | None = True,
    description: str = "embedding",
    prompt: str | None = None,
) -> np.ndarray:
    """Encode ``texts`` with ``model``: ``prompt`` prefixed (``None``: the model's default prompt).

    Texts are ordered by token count (not characters, as ``encode`` does), so a
    batch pads to a similar length; results come back in input order.
    Chunked pooling, glossing and the rest of the text → vector path are
    :class:`xlsent.encoding.encoder.Encoder`'s; this is its sentence-transformers backend. The progress bar
    (``show_progress``; ``None``: this process's setting, :mod:`xlsent.utils.progress`) counts pieces, not texts,
    so its ETA holds though the longest texts go first.
    """
    from xlsent.utils.progress import progress_bar

    texts = list(texts)
    dim = model.get_embedding_dimension()
    out = np.zeros((len(texts), dim), dtype=np.float32)
    if not texts:
        return out
    from xlsent.models.handle import model_prompt

    prompt = model_prompt(model) if prompt is None else prompt
    lengths = token_lengths(model, [prompt + t for t in texts])
    order = np.argsort(-lengths, kind="stable")
    with progress_bar(show_progress) as progress, torch.inference_mode():
        task = progress.add_task(f"{description} ({len(texts):,} texts)", total=int(lengths.sum()))
        for start in range(0, len(texts), batch_size):
            idx = order[start : start + batch_size]
            vecs = model.encode(
                [texts[i] for i in idx],
                batch_size=len(idx),
                convert_to_numpy=True,
                normalize_embeddings=normalize,
                show_progress_bar=False,
                prompt=prompt,
            )
            out[idx] = vecs
            progress.advance(task, int(lengths[idx].sum()))
    return out
