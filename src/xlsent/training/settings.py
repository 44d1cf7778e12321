"""The settings the training machinery reads: :class:`Section` (a config section — a ``dict`` whose keys are
also typed attributes) and :class:`OptimConfig`, the ``optim:`` section of every recipe's config and what
:func:`xlsent.training.loop.run_loop` takes. The recipes' other sections are in
:mod:`xlsent.recipes.config_types`."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal


@dataclass(frozen=True)
class Range:
    """A numeric field's range, declared on the field (``lr: Annotated[float, Range(gt=0)]``, pydantic's
    ``Field(gt=0)`` style) and checked with the rest of the config before any model loads."""

    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None

    def problem(self, value: float) -> str | None:
        """What is wrong with ``value`` (``must be > 0``), or None."""
        for bound, ok in ((self.gt, lambda b: value > b), (self.ge, lambda b: value >= b),
                          (self.lt, lambda b: value < b), (self.le, lambda b: value <= b)):
            if bound is not None and not ok(bound):
                return self.described()
        return None

    def described(self) -> str:
        """``must be > 0``, ``must be ≥ 1``, ``must lie in [0, 1)`` …"""
        lo, hi = (self.gt if self.gt is not None else self.ge), (self.lt if self.lt is not None else self.le)
        if lo is not None and hi is not None:
            return (f"must lie in {'(' if self.gt is not None else '['}{lo:g}, {hi:g}"
                    f"{')' if self.lt is not None else ']'}")
        if lo is not None:
            return f"must be {'>' if self.gt is not None else '≥'} {lo:g}"
        return f"must be {'<' if self.lt is not None else '≤'} {hi:g}"

    def fix(self) -> str:
        """What to give instead."""
        if (self.gt if self.gt is not None else self.ge) is not None and (self.lt, self.le) != (None, None):
            return "give a fraction such as 0.1"
        if self.gt == 0:
            return "give a number above 0"
        if self.ge == 0:
            return "give 0 or a positive number"
        return f"give a whole number {self.described().removeprefix('must be ')}"


#: the ranges fields share
Positive, Count, AtLeast1, Fraction, Unit = Range(gt=0), Range(ge=0), Range(ge=1), Range(ge=0, lt=1), Range(ge=0, le=1)
PosFloat = Annotated[float, Positive]  # a learning rate, a temperature …
NonNegFloat = Annotated[float, Count]  # a weight, a margin …
NonNegInt = Annotated[int, Count]  # a count where 0 means none or all
PosInt = Annotated[int, AtLeast1]  # a size
FractionFloat = Annotated[float, Fraction]  # a share in [0, 1)
UnitFloat = Annotated[float, Unit]  # a share in [0, 1]


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
    def declared(cls, key: str, extras: bool = False) -> Any:
        """The declared type of ``key`` (``None`` where the class declares none); ``extras``: with its
        ``Annotated`` range."""
        return typing.get_type_hints(cls, include_extras=extras).get(key)


class OptimConfig(Section):
    """``optim:`` — the optimiser, schedule, checkpointing and seed."""

    lr: PosFloat = 2e-5
    batch_size: PosInt = 16
    epochs: NonNegInt = 1
    max_steps: NonNegInt = 0
    warmup_ratio: FractionFloat = 0.1
    weight_decay: NonNegFloat = 0.01
    adam_epsilon: NonNegFloat = 1e-6
    max_grad_norm: NonNegFloat = 1.0
    checkpoint_every: PosFloat = 0.2
    checkpoint_minutes: NonNegFloat = 10.0
    logging_steps: NonNegInt = 10
    seed: NonNegInt = 0
    precision: Literal["auto", "fp32", "bf16", "fp16"] = "auto"  # auto: bf16 on a GPU that has it or a CPU timed faster in it, else fp32
    grad_accum: PosInt = 1                  # micro-batches a step (optim.batch_size stays the global batch)
    group_by_length: bool = False           # batches of similar length (xlsent.training.batching), no text twice
    min_steps: NonNegInt = 0                # a set too small for this many steps trains more epochs (0 = off)
