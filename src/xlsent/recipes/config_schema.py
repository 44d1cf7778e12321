"""Validation of a merged recipe config into typed objects, before any model or corpus is loaded.

:func:`validate_config` turns the merged mapping into a
:class:`~xlsent.recipes.config_types.RecipeConfig`. Every value is checked against its declared
type (:mod:`xlsent.recipes.config_types` for the shared sections; for a recipe's own keys, the
classes its module declares in ``SECTIONS``, else the type of the shipped default in
``configs/<recipe>.yaml``), the range declared on the field (``Annotated[float, Range(gt=0)]``: a learning
rate > 0, a batch size ≥ 1, a dropout in [0, 1)), the allowed words of the key (a ``Literal`` field, or the recipe
module's ``CHOICES``), and — for models and data — that the name or path can be found; then the
recipe module's ``validate(cfg)`` hook checks what spans several keys. The first problem is one
:class:`~xlsent.utils.errors.XlsentError` line that names the key, the value and the fix
(:func:`config_error`). Nothing here names a recipe: what is one recipe's is declared once, in its
module (:func:`recipe_declaration`); that module (and torch with it) is imported only when a value
differs from the shipped default — the shipped defaults pass its checks (``tests/test_configs.py``)
— so a config of defaults, and a bad device, is checked in well under a second.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from xlsent.recipes.config_types import RecipeConfig, Section, section_type
from xlsent.utils.errors import XlsentError


def recipe_declaration(recipe: str, name: str, default: Any = None) -> Any:
    """What the module ``xlsent/recipes/<recipe>.py`` declares of its own config: ``CHOICES`` (the allowed words
    of its keys, built from the constants of the modules that use the values), ``SECTIONS`` (dotted section →
    :class:`~xlsent.recipes.config_types.Section` subclass typing its own keys) or ``validate`` (a check of the
    typed config that raises :func:`config_error`)."""
    return getattr(importlib.import_module(f"xlsent.recipes.{recipe.replace('-', '_')}"), name, default)


def recipe_choices(recipe: str) -> dict[str, tuple]:
    """The allowed words of a recipe's own keys, as its module declares them (``CHOICES``)."""
    return dict(recipe_declaration(recipe, "CHOICES", {}))


_PAIR_KEYS = {"train.pairs", "eval.pairs"}
_TAGGED_KEYS = {"train.data", "eval.test"}


def _type_name(v: Any) -> str:
    return {bool: "true/false", int: "a whole number", float: "a number", str: "a word or path",
            list: "a list", dict: "a mapping"}.get(type(v), type(v).__name__)


def config_error(key: str, value: Any, problem: str, fix: str) -> XlsentError:
    """The one line a bad value fails with: ``config KEY=VALUE: problem — fix``."""
    return XlsentError(f"config {key}={value!r}: {problem} — {fix}")


_fail = config_error


def _check_type(key: str, value: Any, default: Any, typ: type | None) -> Any:
    """``value`` as the field's type ``typ`` (an int where a float is expected), or an error."""
    if typ is None:  # a key whose shipped default is null and whose section declares no type
        return value
    if typ is bool:
        if not isinstance(value, bool):
            raise _fail(key, value, "expected true or false", f"write {key}=true or {key}=false")
        return value
    if typ is int:
        if isinstance(value, bool) or not isinstance(value, int):
            shown = "null" if default is None else default
            raise _fail(key, value, f"expected a whole number (default {shown})", f"e.g. --set {key}={shown}")
        return value
    if typ is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            shown = "null" if default is None else f"{default:g}"
            raise _fail(key, value, f"expected a number (default {shown})", f"e.g. --set {key}={shown}")
        return float(value)
    if typ is str:
        if value is None:  # `--set key=` (YAML null): the empty word
            return ""
        if not isinstance(value, str):
            raise _fail(key, value, f"expected {_type_name(default)}, got {_type_name(value)}",
                        f"e.g. --set {key}={default or 'VALUE'}")
        return value
    if typ is list:
        if not isinstance(value, list):
            raise _fail(key, value, "expected a list", f"e.g. --set '{key}={default}'")
        return value
    return value


_WIDTH_LISTS = ("matryoshka_dims", "matryoshka_weights")


def _as_list(key: str, value: Any) -> Any:
    """``--set loss.matryoshka_dims=384,256,128`` (a YAML word), ``=128`` (one number) or ``=`` (empty) as a list;
    anything else is left to the type check."""
    if value is None or value == "":
        return []
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [value]
    if isinstance(value, str):
        def number(x: str) -> Any:
            for kind in (int, float):
                try:
                    return kind(x)
                except ValueError:
                    pass
            return x  # not a number: reported by the check that follows

        return [number(x.strip()) for x in value.strip().strip("[]").split(",") if x.strip()]
    return value


def _model_width(name: str) -> int | None:
    """A registered model's width, or a model folder's from its configuration files — without loading it."""
    from xlsent.models.registry import REGISTRY
    from xlsent.models.widths import folder_dimension

    if name in REGISTRY:
        return REGISTRY[name].width or None
    p = Path(name).expanduser()
    return folder_dimension(p) if p.is_dir() else None


def _check_matryoshka(typed: RecipeConfig) -> None:
    """``loss.matryoshka_dims`` / ``matryoshka_weights``: whole widths > 0, none twice, none above the trained
    model's width (read from the registry or the folder's files), one weight > 0 a width."""
    loss = typed.get("loss")
    if isinstance(loss, dict) and loss.get("matryoshka_kd", "every") not in ("every", "full"):
        raise _fail("loss.matryoshka_kd", loss["matryoshka_kd"], "not every or full",
                    "every: the distillation term at each width; full: at the full width only")
    if not isinstance(loss, dict) or not ({"matryoshka_dims", "matryoshka_weights"} & set(loss)):
        return
    from xlsent.models.widths import check_matryoshka

    models = typed.get("models") or {}
    name = models.get("student") if isinstance(models.get("student"), str) else ""
    check_matryoshka(loss.get("matryoshka_dims"), loss.get("matryoshka_weights"),
                     _model_width(name) if name else None, name or "the model")


def _check_declared(key: str, value: Any, default: Any, annotation: Any) -> Any:
    """``value`` checked against its field's declared annotation: the type (``float`` takes an int), the range
    (``Annotated[…, Range(…)]``), the words of a ``Literal``, ``None`` where the type allows it, and unions of
    these (``features.layer``: a hidden-state index ≥ 0, or ``auto`` / ``last`` / ``all``)."""
    import types
    import typing

    from xlsent.recipes.config_types import unwrap

    t, outer = unwrap(annotation)
    options = typing.get_args(t) if isinstance(t, types.UnionType) or typing.get_origin(t) is typing.Union else (t,)
    if value is None and type(None) in options:
        return None
    words: tuple = ()
    kinds: list[tuple[type, Any]] = []
    for option in options:
        o, inner = unwrap(option)
        if typing.get_origin(o) is typing.Literal:
            words += typing.get_args(o)
        elif isinstance(o, type) and o is not type(None):
            kinds.append((o, inner or outer))
    if value in words:
        return value
    if words and (isinstance(value, str) or not kinds):
        whole = ["a whole number"] if any(k is int for k, _ in kinds) else []
        raise _fail(key, value, "not an allowed value", f"use one of {', '.join(map(str, [*whole, *words]))}")
    for i, (kind, rng) in enumerate(kinds):
        try:
            value = _check_type(key, value, default, kind)
        except XlsentError:
            if i == len(kinds) - 1:
                raise
            continue
        problem = rng.problem(value) if rng is not None and isinstance(value, (int, float)) else None
        if problem:
            raise _fail(key, value, problem, rng.fix())
        return value
    return value


def _check_device(key: str, value: Any) -> None:
    """``models.device``'s spelling (whether the device is there is checked when the recipe starts, before any
    model loads: :func:`xlsent.utils.device.resolve_device`)."""
    import re

    from xlsent.utils.device import DEVICE_HELP

    if key == "models.device" and not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", str(value).strip().lower()):
        raise _fail(key, value, "not a device", f"use one of {DEVICE_HELP}")


def _check_exists(key: str, value: Any, files: tuple = ()) -> None:
    """Models (every ``models.*`` word but the device), pairs, tagged sets and the recipe's own ``FILES`` exist."""
    if not isinstance(value, str) or not value:
        return
    if key.startswith("models.") and key.count(".") == 1 and key != "models.device":
        from xlsent.models.registry import REGISTRY, holds_model

        p = Path(value).expanduser()
        if value not in REGISTRY and not p.is_dir():
            raise _fail(key, value, "not a registered model and no such folder",
                        f"use one of {', '.join(REGISTRY)} or a local model folder")
        if p.is_dir() and value not in REGISTRY and not holds_model(p):
            raise _fail(key, value, "the folder holds no model (no modules.json or config.json)",
                        "point it at the model's folder or a finished run's folder")
    elif key in _PAIR_KEYS:
        from xlsent.data.sets.pairs import bad_source, split_sources

        if key == "eval.pairs" and value == "holdout":
            return
        bad = bad_source(value)  # several sources, comma-separated: each one checked
        if bad is None:
            return
        if len(split_sources(value)) > 1:
            raise _fail(key, value, f"the source {bad!r} is no such file and not a bundled dataset",
                        "give pairs files (TSV, JSONL or Moses A,B) or bundled names (xlsent data list), "
                        "comma-separated")
        raise _fail(key, value, "no such file and not a bundled dataset",
                    "give a pairs file (TSV, JSONL or Moses A,B) or a bundled name (xlsent data list)")
    elif key in _TAGGED_KEYS:
        from xlsent.data.formats.tagging import BUNDLED_TAGGED

        if value not in BUNDLED_TAGGED and not Path(value).expanduser().is_file():
            raise _fail(key, value, "no such file and not a bundled tagged set",
                        f"give a CoNLL file or one of {', '.join(BUNDLED_TAGGED)}")
    elif key in files:
        path = Path(value).expanduser()
        if not path.is_file():
            raise _fail(key, value, "no such file", "check the path")


def validate_config(recipe: str, cfg: dict, defaults: dict) -> RecipeConfig:
    """Check every value of ``cfg`` (converting ints to floats where floats are expected) and return it
    as a :class:`~xlsent.recipes.config_types.RecipeConfig`; the recipe's own declarations are read (its module
    imported) only where a value differs from the shipped default."""
    own: dict[str, Any] = {}

    def declared(name: str, default: Any) -> Any:
        if name not in own:
            own[name] = recipe_declaration(recipe, name, default)
        return own[name]

    def walk(node: dict, base: dict, prefix: str, cls: type[Section]) -> Section:
        out = cls()
        for k, v in node.items():
            key = f"{prefix}{k}"
            d = base.get(k) if isinstance(base, dict) else None
            if isinstance(d, dict):
                if not isinstance(v, dict):
                    raise _fail(key, v, "expected a mapping of keys", f"set its keys, e.g. --set {key}.KEY=VALUE")
                out[k] = walk(v, d, key + ".", section_type(cls, k, d))
                continue
            owner: type[Section] = cls
            mine = v != d and cls.declared(k) is None  # a recipe's own key, not at its default: its module says
            own["differs"] = own.get("differs") or v != d
            section = declared("SECTIONS", {}).get(prefix[:-1]) if mine else None
            if section is not None and section.declared(k) is not None:
                owner = section
            if k in _WIDTH_LISTS:
                v = _as_list(key, v)
            annotation = owner.declared(k, extras=True)
            if annotation is not None:  # the field's type, range and words, declared once on its section
                v = _check_declared(key, v, d, annotation)
            else:  # a recipe's own key its module does not declare: the type of the shipped default
                v = _check_type(key, v, d, None if d is None else type(d))
            words = declared("CHOICES", {}).get(key) if v != d and isinstance(v, str) else None
            if words and v not in words:  # the allowed words built from the constants of the modules using them
                raise _fail(key, v, "not an allowed value", f"use one of {', '.join(map(str, words))}")
            _check_device(key, v)
            _check_exists(key, v, declared("FILES", ()) if mine and isinstance(v, str) and v else ())
            out[k] = v
        return out

    typed = walk(cfg, defaults, "", RecipeConfig)
    _check_matryoshka(typed)
    optim = typed.get("optim")
    if isinstance(optim, dict) and optim.get("epochs") == 0 and optim.get("max_steps") == 0:
        raise _fail("optim.epochs", 0, "with optim.max_steps=0 the run would train no step",
                    "give optim.epochs ≥ 1 or optim.max_steps ≥ 1")
    if typed.get("eval", {}).get("pairs") == "holdout" and "holdout" not in typed.get("train", {}):
        raise _fail("eval.pairs", "holdout", "this recipe holds out no part of its pairs (it has no train.holdout)",
                    "give a pairs file or a bundled pool, e.g. --set eval.pairs=bible-en-ny:test")
    if own.get("differs") and declared("validate", None) is not None:
        own["validate"](typed)  # the recipe's own checks of what spans several keys
    return typed
