"""Typed recipe configs: the merged YAML parsed into sections whose fields have declared types.

:func:`xlsent.recipes.config.load_config` returns a :class:`RecipeConfig`. Its shared sections are
:class:`ModelsConfig`, :class:`TrainConfig`, :class:`~xlsent.training.settings.OptimConfig` and :class:`EvalConfig`
(the same in every recipe, holding only the fields several recipes use); a recipe's own sections (``loss``,
``negatives``, ``features``, ``stage1``…) are :class:`Section`. Each field is read as an attribute (``cfg.optim.lr``)
and has a declared type (the class annotations below; for a recipe's own keys, those its module declares in
``SECTIONS``, else the type of the shipped default in ``configs/<recipe>.yaml``).
:func:`~xlsent.recipes.config_schema.validate_config` checks and converts every value while it builds the objects,
before any model is loaded.

A section is also a ``dict`` of exactly the keys its YAML has, so ``config.yaml``, the run
folders' config hashes and code written for plain mappings see the same data as before. A field
that a recipe's YAML does not carry (``optim.max_steps`` where a recipe counts only epochs) reads as the class
default.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

from xlsent.data.formats.readers import BAD_LINE_POLICIES
from xlsent.similarity import SIMILARITIES
from xlsent.training.settings import (NonNegInt, OptimConfig, PosInt,  # the loop's settings, in every recipe's config
                                      Section)


class ModelsConfig(Section):
    """``models:`` — which models a recipe loads (registered names or local folders)."""

    base: str = ""                          # a frozen encoder, or the one a task head is put on
    teacher: str = ""                       # distillation: the frozen teacher
    student: str = ""                       # the model trained (a recipe may declare a mapping: the shape it builds)
    max_seq_length: PosInt = 128
    freeze_word_embeddings: bool = False
    train_layers: NonNegInt = 0             # train only the top N transformer blocks (0 = all of them)
    dropout: bool = True                    # the model's own dropout while training (false: none, a cheaper CPU step)
    device: str = "auto"                    # auto | cpu | cuda | cuda:N | mps (xlsent.utils.device)


class TrainConfig(Section):
    """``train:`` — the training pairs and how they are cleaned and sampled."""

    pairs: str = ""
    sample: NonNegInt = 0                   # pairs drawn from each bundled set (0 = all)
    sample_files: NonNegInt = 0             # pairs drawn from each of the user's files (0 = all: used whole)
    min_words: NonNegInt = 0
    max_words: NonNegInt = 0
    special_pattern: str = ""
    on_bad_lines: Literal[BAD_LINE_POLICIES] = "error"


class EvalConfig(Section):
    """``eval:`` — the held-out evaluation reported after training (never used to pick a model)."""

    pairs: str = ""
    sample: NonNegInt = 1000
    similarity: Literal[SIMILARITIES] = "cosine"
    chunk_words: NonNegInt = 0
    udhr: bool = True
    # which UDHR languages eval.udhr scores: udhr (47) | udhr-dev (24, choosing settings) | udhr-all:dev (211, choosing
    # settings) | udhr-all:test (234; with a summary by script and tokenizer pieces, and the plot in the demo's report)
    udhr_pool: Literal["udhr", "udhr-dev", "udhr-all:dev", "udhr-all:test"] = "udhr"
    base: bool = True


class RecipeConfig(Section):
    """A recipe's whole config; the shared sections typed, the recipe's own ones :class:`Section`."""

    models: ModelsConfig
    train: TrainConfig
    optim: OptimConfig
    eval: EvalConfig


def section_type(parent: type[Section], key: str, default: Any) -> type[Section]:
    """The :class:`Section` class of the mapping ``parent.key`` (a declared :class:`Section` subclass where the
    default is a mapping, else :class:`Section`)."""
    t = parent.declared(key)
    for cand in (typing.get_args(t) if isinstance(t, types.UnionType) else (t,)):
        if isinstance(cand, type) and issubclass(cand, Section) and isinstance(default, dict):
            return cand
    return Section


def unwrap(t: Any) -> tuple[Any, Any]:
    """(the type, its :class:`~xlsent.training.settings.Range` or None) of a declared annotation."""
    from xlsent.training.settings import Range

    if typing.get_origin(t) is typing.Annotated:
        base, *meta = typing.get_args(t)
        return base, next((m for m in meta if isinstance(m, Range)), None)
    return t, None

