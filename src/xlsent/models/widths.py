"""A model folder's width, read from its configuration files without loading any weight, and the Matryoshka
widths a folder records.

:func:`folder_dimension` follows sentence-transformers' own rule (``SentenceTransformer.get_embedding_dimension``):
the last module that knows its output width gives it — a ``Dense`` its ``out_features``, a ``Pooling`` its token
width times its pooling modes, a ``Transformer`` its ``hidden_size``; ``Normalize`` and ``Dropout`` keep the width.
A plain Hugging Face folder (no ``modules.json``) is mean-pooled: its ``hidden_size``. A module it does not know,
or a file it cannot read, gives ``None`` (the width is then known only once the model loads).

:func:`recorded_widths` reads the widths a Matryoshka-trained model was trained to be cut to
(:data:`WIDTHS_FILE`: ``{"dims": [384, 256, 128, 64]}``); any width from 1 to the full one can be asked for
whether or not the folder records some.
"""

from __future__ import annotations

import json
from pathlib import Path

WIDTHS_FILE = "xlsent_matryoshka.json"
_KEEP_WIDTH = ("Normalize", "Dropout", "LayerNorm")
_POOLING_FLAGS = ("cls_token", "max_tokens", "mean_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens",
                  "lasttoken")


def _json(path: Path) -> dict | list | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _hidden_size(folder: Path) -> int | None:
    cfg = _json(folder / "config.json")
    if not isinstance(cfg, dict):
        return None
    for key in ("hidden_size", "d_model", "dim"):
        if isinstance(cfg.get(key), int) and not isinstance(cfg.get(key), bool):
            return int(cfg[key])
    return None


def _pooling_width(cfg: dict) -> int | None:
    width = cfg.get("embedding_dimension", cfg.get("word_embedding_dimension"))
    if not isinstance(width, int) or isinstance(width, bool):
        return None
    modes = cfg.get("pooling_mode")
    if isinstance(modes, str):
        count = 1
    elif isinstance(modes, list):
        count = len(modes)
    else:  # the older layout: one boolean a mode
        count = sum(bool(cfg.get(f"pooling_mode_{m}")) for m in _POOLING_FLAGS)
    return width * count if count else None


def folder_dimension(folder: str | Path) -> int | None:
    """The width of the vectors the model in ``folder`` gives, from its configuration files alone; ``None`` when
    they do not say."""
    folder = Path(folder)
    modules = _json(folder / "modules.json")
    if not isinstance(modules, list):
        return _hidden_size(folder) if (folder / "config.json").is_file() else None
    for entry in reversed(modules):
        if not isinstance(entry, dict):
            return None
        kind = str(entry.get("type", "")).rsplit(".", 1)[-1]
        sub = folder / str(entry.get("path") or "")
        if kind in _KEEP_WIDTH:
            continue
        if kind == "Dense":
            cfg = _json(sub / "config.json")
            out = cfg.get("out_features") if isinstance(cfg, dict) else None
            return int(out) if isinstance(out, int) and not isinstance(out, bool) else None
        if kind == "Pooling":
            cfg = _json(sub / "config.json")
            return _pooling_width(cfg) if isinstance(cfg, dict) else None
        if kind == "Transformer":
            return _hidden_size(sub)
        return None  # a module whose width only loading it tells
    return None


def recorded_widths(folder: str | Path) -> list[int]:
    """The Matryoshka widths recorded in ``folder`` (widest first), or ``[]`` when it records none."""
    data = _json(Path(folder) / WIDTHS_FILE)
    dims = data.get("dims") if isinstance(data, dict) else None
    if not isinstance(dims, list):
        return []
    return sorted({int(d) for d in dims if isinstance(d, int) and not isinstance(d, bool) and d > 0}, reverse=True)
