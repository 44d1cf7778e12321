"""Shared save/load for xlsent modules that carry a config and torch weights."""

from __future__ import annotations

from sentence_transformers.base.modules.module import Module

_HUB_KEYS = ("token", "cache_folder", "revision", "local_files_only")


class WeightedModule(Module):
    """A :class:`Module` whose ``__init__`` takes its ``config_keys`` and whose state is its weights."""

    def save(self, output_path: str, *args, safe_serialization: bool = True, **kwargs) -> None:
        self.save_config(output_path)
        self.save_torch_weights(output_path, safe_serialization=safe_serialization)

    @classmethod
    def load(cls, model_name_or_path: str, subfolder: str = "", **kwargs):
        hub = {k: kwargs[k] for k in _HUB_KEYS if k in kwargs}
        model = cls(**cls.load_config(model_name_or_path, subfolder=subfolder, **hub))
        cls.load_torch_weights(model_name_or_path, subfolder=subfolder, model=model, **hub)
        return model
