"""Typed recipe configs: the merged YAML parsed into sections whose fields have declared types.

:func:`xlsent.recipes.config.load_config` returns a :class:`RecipeConfig`. Its shared sections are
:class:`ModelsConfig`, :class:`TrainConfig`, :class:`~xlsent.training.settings.OptimConfig` and :class:`EvalConfig` (the
same in every recipe); a recipe's own sections (``loss``, ``negatives``, ``features``,
``stage1``…) are :class:`Section`. Each field is read as an attribute (``cfg.optim.lr``) and
has a declared type (the class annotations below; for a recipe's own keys, the type of the shipped
default in ``configs/<recipe>.yaml``). :func:`~xlsent.recipes.config_schema.validate_config`
checks and converts every value while it builds the objects, before any model is loaded.

A section is also a ``dict`` of exactly the keys its YAML has, so ``config.yaml``, the run
folders' config hashes and code written for plain mappings see the same data as before. A field
that a recipe's YAML does not carry (siamese has no ``optim.max_steps``) reads as the class
default.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

from xlsent.training.settings import OptimConfig, Section  # the loop's settings, part of every recipe's config


class StudentShape(Section):
    """``models.student`` of the multi-stage recipe: the shape of the student it builds."""

    bottleneck: int = 0
    init: Literal["svd", "svd-corpus", "random"] = "svd"
    positions: Literal["fresh", "copy"] = "fresh"
    ru_layers: int = 3
    repeats: int = 1


class ModelsConfig(Section):
    """``models:`` — which models a recipe loads (registered names or local folders)."""

    base: str = ""                          # siamese: the frozen encoder under the head
    teacher: str = ""                       # distillation: the frozen teacher
    student: str | StudentShape = ""        # the model trained (multistage: the shape it builds)
    assistant: str = ""                     # multistage: the teaching assistant
    reference: str = ""                     # lightweight: a model evaluated next to the trained one
    max_seq_length: int = 128
    freeze_word_embeddings: bool = False
    device: str = "auto"                    # auto | cpu | cuda | cuda:N | mps (xlsent.utils.device)


class TrainConfig(Section):
    """``train:`` — the training pairs and how they are cleaned and sampled."""

    pairs: str = ""
    sample: int = 0
    min_words: int = 0
    max_words: int = 0
    special_pattern: str = ""
    on_bad_lines: Literal["error", "skip"] = "error"
    triplets: str = ""                      # triplet-kd: a TSV of anchor, positive, negative
    monolingual: str = ""                   # multistage: extra one-sentence-a-line text for stages 2-3
    monolingual_sample: int = 0
    holdout: float = 0.0                    # adapt: share of the pairs held out to choose the step
    holdout_min: int = 100


class EvalConfig(Section):
    """``eval:`` — the held-out evaluation reported after training (never used to pick a model)."""

    pairs: str = ""
    sample: int = 1000
    similarity: Literal["cosine", "dot", "euclidean", "manhattan", "margin", "csls"] = "cosine"
    chunk_words: int = 0
    udhr: bool = True
    # which UDHR languages eval.udhr scores: udhr (47) | udhr-dev (24, choosing settings) | udhr-all:dev (211, choosing
    # settings) | udhr-all:test (234; with a summary by script and tokenizer pieces, and the plot in the demo's report)
    udhr_pool: Literal["udhr", "udhr-dev", "udhr-all:dev", "udhr-all:test"] = "udhr"
    each_stage: bool = False
    base: bool = True
    select_every: float = 2.0               # adapt: held-out scoring per epoch


class RecipeConfig(Section):
    """A recipe's whole config; the shared sections typed, the recipe's own ones :class:`Section`."""

    models: ModelsConfig
    train: TrainConfig
    optim: OptimConfig
    eval: EvalConfig


def section_type(parent: type[Section], key: str, default: Any) -> type[Section]:
    """The :class:`Section` class of the mapping ``parent.key`` (``student`` → :class:`StudentShape`
    where its default is a mapping)."""
    t = parent.declared(key)
    for cand in (typing.get_args(t) if isinstance(t, types.UnionType) else (t,)):
        if isinstance(cand, type) and issubclass(cand, Section) and isinstance(default, dict):
            return cand
    return Section


def leaf_type(parent: type[Section], key: str, default: Any) -> tuple[type | None, tuple | None]:
    """(Python type, allowed words or ``None``) of the value ``parent.key``: the declared type where the
    section declares one, else the type of the shipped default (``None`` where the default is null)."""
    t = parent.declared(key)
    if t is not None:
        options = typing.get_args(t) if isinstance(t, types.UnionType) else (t,)
        for cand in options:
            if typing.get_origin(cand) is Literal:
                return str, typing.get_args(cand)
            if isinstance(cand, type) and not issubclass(cand, Section) and (
                    len(options) == 1 or default is None or isinstance(default, cand)):
                return cand, None
    return (None if default is None else type(default)), None
