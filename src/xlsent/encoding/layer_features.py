"""Frozen-encoder features: pooled hidden layers, computed once and cached on disk.

A feature spec names a pooling and a hidden-state index: ``"mean:7"`` (mean over
tokens of hidden state 7, i.e. the output of the 7th transformer layer; index 0
is the embedding output), ``"cls:12"``, ``"mean:all"`` (mean over layers 1..L of
the per-layer token means). One forward pass serves every spec, and it runs only
as many layers as the deepest spec needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from xlsent.encoding.feature_cache import FeatureCache, cached_features
from xlsent.models.handle import ModelHandle, load_transformer_module
from xlsent.modules.hidden_layer_pooling import POOLINGS, pool_hidden
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import cache_dir


def parse_spec(spec: str, num_layers: int) -> tuple[str, list[int]]:
    """``"mean:7"`` → ``("mean", [7])``; ``"mean:all"`` → ``("mean", [1..L])``; ``"mean:last"`` → ``[L]``."""
    try:
        mode, layer = spec.split(":")
    except ValueError:
        raise XlsentError(f"feature spec {spec!r}: expected MODE:LAYER such as mean:7, cls:last or mean:all") from None
    if mode not in POOLINGS:
        raise XlsentError(f"feature spec {spec!r}: pooling must be 'mean' or 'cls'")
    if layer == "all":
        return mode, list(range(1, num_layers + 1))
    if layer == "last":
        return mode, [num_layers]
    if not layer.isdigit() or not 0 <= int(layer) <= num_layers:
        raise XlsentError(f"feature spec {spec!r}: layer must be 0..{num_layers}, 'last' or 'all'")
    return mode, [int(layer)]


class LayerFeatures:
    """Pooled hidden-layer features of a frozen sentence-transformers model.

    Args:
        handle: the loaded model (:func:`xlsent.models.handle.load_model`); its first module is a Transformer.
        batch_size: texts per forward pass; batches are sorted by token length.
        cache_root: where features are stored (default ``<xlsent cache>/features``).
    """

    def __init__(self, handle: ModelHandle, batch_size: int = 32, cache_root: str | Path | None = None):
        model = handle.model
        self.handle = handle
        self.model = model
        self.transformer = model[0]
        self.auto_model = self.transformer.auto_model
        self.num_layers = int(self.auto_model.config.num_hidden_layers)
        self.batch_size = batch_size
        self.prompt = handle.prompt
        self.model_path = handle.path
        self.fingerprint = handle.fingerprint
        self._cut_models: dict = {}
        self._caches: dict[str, FeatureCache] = {}
        self.cache_root = Path(cache_root) if cache_root else cache_dir() / "features"

    def _cut(self, deepest: int):
        if deepest not in self._cut_models:
            self._cut_models.clear()
            if deepest == self.num_layers:
                transformer = self.transformer
            else:
                transformer = load_transformer_module(self.model_path, deepest)
            transformer.auto_model.eval()
            self._cut_models[deepest] = transformer
        return self._cut_models[deepest]

    def cache(self, spec: str) -> FeatureCache:
        """The on-disk cache of one spec; one object per spec, so its chunks are read from disk once."""
        mode, layers = parse_spec(spec, self.num_layers)
        name = f"{mode}-all" if spec.endswith(":all") else f"{mode}-{layers[0]}"
        if name not in self._caches:
            self._caches[name] = FeatureCache(self.cache_root / self.fingerprint / name)
        return self._caches[name]

    @torch.inference_mode()
    def compute(self, texts: Sequence[str], specs: Sequence[str], show_progress: bool = True) -> dict[str, np.ndarray]:
        """Features for ``texts`` under each spec, without the cache."""
        from xlsent.utils.progress import progress_bar

        parsed = {s: parse_spec(s, self.num_layers) for s in specs}
        deepest = max(1, max(max(layers) for _, layers in parsed.values()))  # ≥ 1: a 0-layer model records no states
        transformer = self._cut(deepest)
        dim = int(transformer.auto_model.config.hidden_size)
        out = {s: np.zeros((len(texts), dim), dtype=np.float32) for s in specs}
        prompted = [self.prompt + t for t in texts]
        from xlsent.encoding.embed import token_lengths

        lengths = token_lengths(self.model, prompted)
        order = np.argsort(-lengths, kind="stable")
        with progress_bar(show_progress) as progress:
            task = progress.add_task(f"encoder features ({len(texts):,} texts)", total=int(lengths.sum()))
            for start in range(0, len(texts), self.batch_size):
                idx = order[start : start + self.batch_size]
                batch = transformer.preprocess([prompted[i] for i in idx])
                batch = {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
                states = transformer.auto_model(**batch, output_hidden_states=True, return_dict=True).hidden_states
                for spec, (mode, lay) in parsed.items():
                    pooled = [pool_hidden(states[k], batch["attention_mask"], mode) for k in lay]
                    out[spec][idx] = torch.stack(pooled).mean(0).float().numpy()
                progress.advance(task, int(lengths[idx].sum()))
        return out

    def get(self, texts: Sequence[str], specs: Sequence[str], show_progress: bool = True) -> dict[str, np.ndarray]:
        """Features for ``texts``, from the disk cache where present; computes the rest once."""
        caches = {s: self.cache(s) for s in specs}
        return cached_features(caches, texts, lambda todo: self.compute(todo, specs, show_progress))
