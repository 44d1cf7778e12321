"""A batch's texts embedded in chunks sorted by length, each chunk padded only to its own longest text.

A padded batch costs rows × its longest text: beside one long UDHR paragraph, 31 short verses pay for 128 pieces
each. :func:`embed_sorted` takes a loss's columns (anchor, positive, negatives…), merges them into one set of
rows with sentence-transformers' :func:`~sentence_transformers.base.losses.merged_forward.merge_feature_batches`,
sorts the rows by length and runs the model over chunks of ``mini_batch_size`` rows, each cut to its own longest
text (as sentence-transformers' chunked forward does for its multi-vector losses, here sorted first), then puts the
embeddings back in order, one tensor a column. The batch — its texts, its in-batch negatives, its loss — is the
one the sampler drew; only the padding goes. Every chunk's activations stay live for the backward pass (this is
not GradCache): the gain is compute and the memory padding held, at the cost of more, smaller matrix products.

On the demo's mixture of Bible verses and UDHR paragraphs (random batches of 32 pairs), chunks of 8 of the 64
texts cost 49% of the tokens the padded columns did (docs/experiments/adapt.md, "Faster steps").
"""

from __future__ import annotations

from typing import Any, Iterable

from torch import Tensor, nn


def _right_padded(mask: Tensor, lengths: Tensor) -> bool:
    import torch

    return bool(torch.equal(mask.bool(), torch.arange(mask.shape[1], device=mask.device)[None, :] < lengths[:, None]))


def embed_sorted(model: nn.Module, features_list: Iterable[dict[str, Any]], mini_batch_size: int) -> list[Tensor]:
    """One ``sentence_embedding`` tensor a column, the columns' rows run in chunks of ``mini_batch_size`` sorted by
    length. ``mini_batch_size`` 0, one chunk's worth of rows, or features that cannot be cut this way (not right-
    padded token batches, columns that do not merge) fall back to sentence-transformers' ``embed_columns``."""
    import torch
    from sentence_transformers.base.losses.merged_forward import embed_columns, merge_feature_batches

    features_list = list(features_list)
    rows = int(mini_batch_size or 0)
    merged = (merge_feature_batches(features_list) if len(features_list) > 1 else features_list[0]) if rows else None
    mask = merged.get("attention_mask") if merged is not None else None
    if not isinstance(mask, Tensor) or mask.ndim != 2 or mask.shape[0] <= rows:
        return embed_columns(model, features_list)
    n, width = mask.shape
    lengths = mask.sum(dim=1)
    if not _right_padded(mask, lengths):
        return embed_columns(model, features_list)
    order = torch.argsort(lengths, stable=True)
    out = []
    for begin in range(0, n, rows):
        idx = order[begin:begin + rows]
        cut = int(lengths[idx].max())
        chunk = {}
        for key, value in merged.items():
            if isinstance(value, Tensor) and key != "prompt_length" and value.ndim and value.shape[0] == n:
                value = value[idx]
                if value.ndim >= 2 and value.shape[1] == width:
                    value = value[:, :cut]
            chunk[key] = value
        out.append(model(chunk)["sentence_embedding"])
    emb = torch.cat(out)[torch.argsort(order)]
    return list(emb.reshape(len(features_list), -1, *emb.shape[1:]).unbind(0))
