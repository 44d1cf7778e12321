"""The settings the training machinery reads: :class:`Section` (a config section — a ``dict`` whose keys are
also typed attributes) and :class:`OptimConfig`, the ``optim:`` section of every recipe's config and what
:func:`xlsent.training.loop.run_loop` takes. The recipes' other sections are in
:mod:`xlsent.recipes.config_types`."""

from __future__ import annotations

import typing
from typing import Any, Literal


class Section(dict):
    """A config section: a ``dict`` whose keys are also attributes, typed by the class annotations.

    A subclass's annotated class attributes are the fields' defaults; they are moved into
    ``_field_defaults`` (a class attribute would hide the value the section holds)."""

    _field_defaults: dict[str, Any] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        own = {k: cls.__dict__[k] for k in cls.__dict__.get("__annotations__", {}) if k in cls.__dict__}
        for k in own:
            delattr(cls, k)
        cls._field_defaults = {**cls._field_defaults, **own}

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            if name in type(self)._field_defaults:
                return type(self)._field_defaults[name]
            raise AttributeError(f"{type(self).__name__} has no key {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def to_dict(self) -> dict:
        """A plain nested ``dict`` (what YAML and JSON writers take)."""
        return {k: v.to_dict() if isinstance(v, Section) else list(v) if isinstance(v, list) else v
                for k, v in self.items()}

    @classmethod
    def declared(cls, key: str) -> Any:
        """The declared type of ``key`` (``None`` where the class declares none)."""
        return typing.get_type_hints(cls).get(key)


class OptimConfig(Section):
    """``optim:`` — the optimiser, schedule, checkpointing and seed."""

    lr: float = 2e-5
    batch_size: int = 16
    epochs: int = 1
    max_steps: int = 0
    warmup_ratio: float = 0.1
    weight_decay: float = 0.01
    adam_epsilon: float = 1e-6
    max_grad_norm: float = 1.0
    checkpoint_every: float = 0.2
    checkpoint_minutes: float = 10.0
    logging_steps: int = 10
    seed: int = 0
    precision: Literal["auto", "fp32", "bf16", "fp16"] = "auto"  # auto: bf16 on a GPU that has it, else fp32
    grad_accum: int = 1                     # micro-batches a step (optim.batch_size stays the global batch)
