"""Validation of a merged recipe config, before any model or corpus is loaded.

Every value is checked against the type of its shipped default (``configs/<recipe>.yaml``), the
ranges that the key's name implies (a learning rate > 0, a batch size ≥ 1, a dropout in [0, 1)),
the allowed words of the key (:data:`CHOICES`), and — for models and data — that the name or path
can be found. The first problem is one :class:`~xlsent.utils.errors.XlsentError` line that names
the key, the value and the fix. The choice lists repeat the constants of the modules that use them
(kept out of this module so that a bad value fails in well under a second, before torch is
imported); ``tests/test_configs.py`` checks that they agree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xlsent.utils.errors import XlsentError

_HEAD_TYPES = ("linear", "tanh", "relu", "tanh2")
_DISTANCES = ("euclidean", "manhattan", "cosine")
_SIMILARITIES = ("cosine", "dot", "euclidean", "manhattan", "margin")
_BAD_LINES = ("error", "skip")

#: allowed words per recipe and dotted key
CHOICES: dict[str, dict[str, tuple]] = {
    "*": {"train.on_bad_lines": _BAD_LINES, "eval.similarity": _SIMILARITIES},
    "siamese": {
        "features.pooling": ("mean", "cls"),
        "features.layer": ("auto", "last", "all"),  # or a hidden-state index
        "head.type": _HEAD_TYPES,
        "loss.distance": _DISTANCES,
        "negatives.strategy": ("random", "worst", "average"),
    },
    "triplet-kd": {"loss.distance": _DISTANCES, "negatives.strategy": ("random", "section", "hard")},
    "gloss": {"loss.distance": _DISTANCES, "negatives.strategy": ("random", "section", "hard"),
              "dictionary.symmetrize": ("mean", "intersection"), "dictionary.unknown": ("keep", "drop")},
    "multistage": {
        "models.student.init": ("svd", "svd-corpus", "random"),
        "models.student.positions": ("fresh", "copy"),
        "mcl.variant": ("soft", "bool", "ce", "off"),
        "stages.mode": ("multistage", "single-random", "single-predistill"),
        "stage2.objective": ("sentence", "token", "both"),
        "stage3.loss": ("mse", "contrastive"),
    },
}

_MODEL_KEYS = {"models.base", "models.teacher", "models.student", "models.assistant"}
_PAIR_KEYS = {"train.pairs", "eval.pairs"}
_FILE_KEYS = {"train.triplets", "train.monolingual", "dictionary.tsv", "dictionary.freedict"}


def _type_name(v: Any) -> str:
    return {bool: "true/false", int: "a whole number", float: "a number", str: "a word or path",
            list: "a list", dict: "a mapping"}.get(type(v), type(v).__name__)


def _fail(key: str, value: Any, problem: str, fix: str) -> XlsentError:
    return XlsentError(f"config {key}={value!r}: {problem} — {fix}")


def _check_type(key: str, value: Any, default: Any) -> Any:
    """``value`` converted to the default's type (an int where a float is expected), or an error."""
    if default is None:  # per-stage overrides: null = the optim value
        if value is not None and key.split(".")[-1] in ("lr", "batch_size", "epochs", "max_steps", "sample") and (
                isinstance(value, bool) or not isinstance(value, (int, float))):
            raise _fail(key, value, "expected a number or null", f"e.g. --set {key}=null")
        return value
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise _fail(key, value, "expected true or false", f"write {key}=true or {key}=false")
        return value
    if isinstance(default, int):
        if key == "features.layer" and isinstance(value, str):
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(key, value, f"expected a whole number (default {default})", f"e.g. --set {key}={default}")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(key, value, f"expected a number (default {default:g})", f"e.g. --set {key}={default:g}")
        return float(value)
    if isinstance(default, str):
        if key == "features.layer" and isinstance(value, int) and not isinstance(value, bool):
            return value
        if not isinstance(value, str):
            raise _fail(key, value, f"expected {_type_name(default)}, got {_type_name(value)}",
                        f"e.g. --set {key}={default or 'VALUE'}")
        return value
    if isinstance(default, list):
        if not isinstance(value, list):
            raise _fail(key, value, "expected a list", f"e.g. --set '{key}={default}'")
        return value
    return value


def _check_range(key: str, value: Any) -> None:
    leaf = key.split(".")[-1]
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return
    if leaf in ("lr", "temperature", "checkpoint_every") and not value > 0:
        raise _fail(key, value, "must be > 0", "give a positive number, e.g. 2e-5")
    if leaf in ("batch_size", "token_steps", "shard_size") and value < 1:
        raise _fail(key, value, "must be ≥ 1", "give a whole number ≥ 1")
    if leaf in ("epochs", "max_steps", "sample", "min_words", "max_words", "checkpoint_minutes", "logging_steps",
                "min_count", "monolingual_sample", "per_positive", "average_k", "chunk_words", "seed",
                "max_seq_length", "bottleneck", "warmup_ratio", "weight_decay", "adam_epsilon", "max_grad_norm",
                "margin", "kd_weight", "mcl_weight", "infonce_weight", "contrastive_weight",
                "relative_margin") and value < 0:
        raise _fail(key, value, "must be ≥ 0", "give 0 or a positive number")
    if leaf in ("dropout", "min_share", "warmup_ratio") and not 0 <= value < 1 + (leaf == "min_share"):
        raise _fail(key, value, "must lie in [0, 1)", "give a fraction such as 0.1")
    if leaf in ("ru_layers", "repeats", "per_positive", "average_k") and value < 1:
        raise _fail(key, value, "must be ≥ 1", "give a whole number ≥ 1")


def _check_exists(key: str, value: Any) -> None:
    if not isinstance(value, str) or not value:
        return
    if key in _MODEL_KEYS:
        from xlsent.models.registry import REGISTRY

        p = Path(value).expanduser()
        if value not in REGISTRY and not p.is_dir():
            raise _fail(key, value, "not a registered model and no such folder",
                        f"use one of {', '.join(REGISTRY)} or a local model folder")
        if p.is_dir() and value not in REGISTRY and not ((p / "modules.json").exists() or (p / "config.json").exists()):
            raise _fail(key, value, "the folder holds no model (no modules.json or config.json)",
                        "point it at the model's folder")
    elif key in _PAIR_KEYS:
        from xlsent.data.bundled import is_bundled

        if is_bundled(value) or Path(value).is_file():
            return
        if "," in value and all(Path(x).is_file() for x in value.split(",", 1)):
            return
        raise _fail(key, value, "no such file and not a bundled dataset",
                    "give a pairs file (TSV, JSONL or Moses A,B) or a bundled name (xlsent data list)")
    elif key in _FILE_KEYS:
        path = Path(value).expanduser()
        if not path.is_file():
            raise _fail(key, value, "no such file", "check the path")


def validate_config(recipe: str, cfg: dict, defaults: dict) -> dict:
    """Check (and coerce ints to floats where floats are expected) every value of ``cfg``; returns ``cfg``."""
    choices = {**CHOICES["*"], **CHOICES.get(recipe, {})}

    def walk(node: dict, base: dict, prefix: str) -> None:
        for k, v in list(node.items()):
            key = f"{prefix}{k}"
            d = base.get(k) if isinstance(base, dict) else None
            if isinstance(d, dict):
                if not isinstance(v, dict):
                    raise _fail(key, v, "expected a mapping of keys", f"set its keys, e.g. --set {key}.KEY=VALUE")
                walk(v, d, key + ".")
                continue
            v = node[k] = _check_type(key, v, d)
            if key in choices:
                ok = choices[key]
                if key == "features.layer" and isinstance(v, int):
                    if v < 0:
                        raise _fail(key, v, "a hidden-state index must be ≥ 0", "give 0..L, last, all or auto")
                elif v not in ok:
                    raise _fail(key, v, "not an allowed value", f"use one of {', '.join(map(str, ok))}")
            _check_range(key, v)
            _check_exists(key, v)

    walk(cfg, defaults, "")
    if recipe == "siamese" and list(cfg.get("output_norm", [])) not in (["unit", "center", "unit"], ["unit"]):
        raise _fail("output_norm", cfg["output_norm"], "not an allowed normalisation",
                    "use [unit, center, unit] (the paper) or [unit]")
    return cfg
