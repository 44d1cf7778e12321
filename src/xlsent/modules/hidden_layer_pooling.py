"""Pool one hidden layer (or the mean over several) of a transformer into a sentence vector."""

from __future__ import annotations

from typing import Any

import torch
from sentence_transformers.base.modules.module import Module

POOLINGS = ("mean", "cls")


class HiddenLayerPooling(Module):
    """Sentence vector from intermediate transformer layers.

    Reads ``all_layer_embeddings`` (the Hugging Face ``hidden_states`` tuple:
    index 0 is the embedding output, index ``k`` the output of layer ``k``) and
    pools each selected layer, then averages the selected layers.

    Args:
        layers: hidden-state indices to use, e.g. ``[7]`` for "the 7th hidden
            layer" of Huang et al. (2023), or ``list(range(1, 13))`` for "mean of all layers".
        mode: ``"mean"`` — attention-masked mean over tokens, special tokens
            included (as sentence-transformers' mean pooling does); ``"cls"`` —
            the first token.
        dimension: the hidden size, reported by :meth:`get_embedding_dimension`.

    The preceding :class:`~sentence_transformers.base.modules.Transformer` must
    return hidden states (``config.output_hidden_states = True``). To compute
    only what is needed, cut the transformer to ``max(layers)`` layers.
    """

    config_keys: list[str] = ["layers", "mode", "dimension"]
    config_file_name = "hidden_layer_pooling.json"

    def __init__(self, layers: list[int], mode: str = "mean", dimension: int = 0) -> None:
        super().__init__()
        if mode not in POOLINGS:
            raise ValueError(f"mode must be 'mean' or 'cls', not {mode!r}")
        if not layers:
            raise ValueError("layers must name at least one hidden-state index")
        self.layers = [int(x) for x in layers]
        self.mode = mode
        self.dimension = int(dimension)

    @staticmethod
    def pool(hidden: torch.Tensor, attention_mask: torch.Tensor, mode: str) -> torch.Tensor:
        if mode == "cls":
            return hidden[:, 0]
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)

    def forward(self, features: dict[str, Any], **kwargs) -> dict[str, Any]:
        states = features.get("all_layer_embeddings")
        if states is None:
            raise RuntimeError(
                "HiddenLayerPooling needs hidden states: set output_hidden_states=True in the transformer config"
            )
        mask = features["attention_mask"]
        pooled = [self.pool(states[k], mask, self.mode) for k in self.layers]
        features["sentence_embedding"] = torch.stack(pooled, 0).mean(0)
        return features

    def get_embedding_dimension(self) -> int:
        return self.dimension

    def save(self, output_path: str, *args, safe_serialization: bool = True, **kwargs) -> None:
        self.save_config(output_path)
