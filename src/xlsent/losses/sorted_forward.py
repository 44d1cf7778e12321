"""How xlsent's losses run a batch's columns (anchor, positive, negatives…) through the model.

:func:`embed_columns` — one ``sentence_embedding`` tensor a column: the first column (the anchor) in its own
forward pass, the other columns merged into one pass when they preprocess alike (:func:`merge_columns`), as
sentence-transformers' own losses do. :func:`embed_sorted` — the same, with the batch's texts sorted by length
and run ``sorted_chunk`` at a time, each chunk padded only to its own longest.

Why our own code: sentence-transformers (6.x) does this in ``sentence_transformers.base.losses.merged_forward``
(``embed_columns``, ``merge_feature_batches``), a module its package does not export (its public
``sentence_transformers.base.losses`` offers only ``column_merging_disabled``) and no public function gives a
loss its columns' embeddings. What we need of it is small — pad the token tensors of columns with the same
features to one width and concatenate them — so it is written here (:func:`merge_columns`), following the same
rules (same keys, token tensors indexed by row, equal metadata such as ``prompt_length``; anything else: one
forward pass a column). The columns and the order of the forward passes are the ones sentence-transformers'
``embed_columns`` runs, so a loss computes what it computed with it.

Sorted chunks: a padded batch costs rows × its longest text: beside one long UDHR paragraph, 31 short verses pay
for 128 pieces each. :func:`embed_sorted` merges every column into one set of rows, sorts the rows by length and
runs the model over chunks of ``sorted_chunk`` rows, each cut to its own longest text (as sentence-transformers'
chunked forward does for its multi-vector losses, here sorted first), then puts the embeddings back in order, one
tensor a column. The batch — its texts, its in-batch negatives, its loss — is the one the sampler drew; only the
padding goes. Every chunk's activations stay live for the backward pass (this is not GradCache, whose
``mini_batch_size`` bounds memory — hence our option's own name): the gain is compute and the memory padding
held, at the cost of more, smaller matrix products.

On the demo's mixture of Bible verses and UDHR paragraphs (random batches of 32 pairs), chunks of 8 of the 64
texts cost 49% of the tokens the padded columns did (docs/experiments/adapt.md, "Faster steps").
"""

from __future__ import annotations

from typing import Any, Iterable

from torch import Tensor, nn


def _right_padded(mask: Tensor, lengths: Tensor) -> bool:
    import torch

    return bool(torch.equal(mask.bool(), torch.arange(mask.shape[1], device=mask.device)[None, :] < lengths[:, None]))


def _rows(features: dict[str, Any]) -> int:
    for key in ("input_ids", "attention_mask"):
        if isinstance(features.get(key), Tensor):
            return int(features[key].shape[0])
    return next(int(v.shape[0]) for v in features.values() if isinstance(v, Tensor) and v.ndim > 0)


def _same(values: list) -> bool:
    try:
        if isinstance(values[0], Tensor):
            import torch

            return all(isinstance(v, Tensor) and torch.equal(v, values[0]) for v in values[1:])
        return not any(bool(v != values[0]) for v in values[1:])
    except (RuntimeError, ValueError):  # values that cannot be compared cannot be shown equal
        return False


def merge_columns(features_list: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The columns' features as one batch (column 1's rows, then column 2's …), token tensors padded to the widest
    column; ``None`` when they do not merge (other keys, a flattened batch, a float tensor of another width,
    a tensor not indexed by row, metadata that differs): the caller then runs a forward pass a column."""
    import torch
    import torch.nn.functional as F

    first = features_list[0]
    if any(set(f) != set(first) for f in features_list[1:]) or "cu_seq_lens_q" in first:
        return None
    if not any(isinstance(first.get(k), Tensor) and first[k].ndim >= 2 for k in ("input_ids", "attention_mask")):
        return None
    rows, merged = _rows(first), {}
    for key, head in first.items():
        values = [f[key] for f in features_list]
        if not (isinstance(head, Tensor) and key != "prompt_length"):  # metadata: the same in every column
            if not _same(values):
                return None
            merged[key] = head
            continue
        if any(not isinstance(v, Tensor) or v.ndim != head.ndim or v.ndim == 0 or v.shape[0] != rows for v in values):
            return None
        if head.ndim >= 2:
            if any(v.shape[2:] != head.shape[2:] for v in values):
                return None
            width = max(v.shape[1] for v in values)
            if any(v.shape[1] != width for v in values):
                if head.is_floating_point() or head.is_complex():  # only token ids and masks pad with zeros
                    return None
                values = [F.pad(v, [0, 0] * (v.ndim - 2) + [0, width - v.shape[1]]) for v in values]
        merged[key] = torch.cat(values, dim=0)
    return merged


def embed_columns(model: nn.Module, features_list: Iterable[dict[str, Any]],
                  separate_first: bool = True) -> list[Tensor]:
    """One ``sentence_embedding`` tensor a column: the first column in its own forward pass (``separate_first``),
    the others in one merged pass when :func:`merge_columns` merges them, else one pass a column."""
    features_list = list(features_list)
    if separate_first and features_list:
        return [model(features_list[0])["sentence_embedding"],
                *embed_columns(model, features_list[1:], separate_first=False)]
    merged = merge_columns(features_list) if len(features_list) > 1 else None
    if merged is None:
        return [model(features)["sentence_embedding"] for features in features_list]
    emb = model(merged)["sentence_embedding"]
    return list(emb.reshape(len(features_list), -1, *emb.shape[1:]).unbind(0))


def embed_sorted(model: nn.Module, features_list: Iterable[dict[str, Any]], sorted_chunk: int = 0, *,
                 mini_batch_size: int | None = None) -> list[Tensor]:
    """One ``sentence_embedding`` tensor a column, the columns' rows run in chunks of ``sorted_chunk`` sorted by
    length. ``sorted_chunk`` 0, one chunk's worth of rows, or features that cannot be cut this way (not right-
    padded token batches, columns that do not merge) fall back to :func:`embed_columns`. ``mini_batch_size``: its
    old name, still accepted."""
    import torch

    if mini_batch_size is not None:
        sorted_chunk = mini_batch_size
    features_list = list(features_list)
    rows = int(sorted_chunk or 0)
    merged = (merge_columns(features_list) if len(features_list) > 1 else features_list[0]) if rows else None
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
