"""A model folder's width, read from its configuration files without loading any weight, and the Matryoshka
widths a folder records.

:func:`folder_dimension` follows sentence-transformers' own rule (``SentenceTransformer.get_embedding_dimension``):
the last module that knows its output width gives it — a ``Dense`` its ``out_features``, a ``Pooling`` its token
width times its pooling modes, a ``Transformer`` its ``hidden_size``; ``Normalize`` and ``Dropout`` keep the width.
A plain Hugging Face folder (no ``modules.json``) is mean-pooled: its ``hidden_size``. A module it does not know,
or a file it cannot read, gives ``None`` (the width is then known only once the model loads).

:func:`recorded_widths` reads the widths a Matryoshka-trained model was trained to be cut to
(:data:`WIDTHS_FILE`: ``{"dims": [384, 256, 128, 64]}``); any width from 1 to the full one can be asked for
whether or not the folder records some. :func:`write_widths` writes that record (training with
``loss.matryoshka_dims``: the file also keeps the weights and the loss it wrapped, which only people read);
:func:`check_matryoshka` checks a recipe's ``loss.matryoshka_dims`` / ``matryoshka_weights`` before any model
loads. sentence-transformers needs no record to cut: ``SentenceTransformer(folder, truncate_dim=k)`` works on
any folder, and its own config is left alone (a ``truncate_dim`` there would cut every default load).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def write_widths(folder: str | Path, dims: list[int], weights: list[float] | None = None, loss: str = "") -> None:
    """Record in ``folder`` the widths a model was trained to be cut to (widest first), with their loss weights."""
    from xlsent.utils.io import write_json_atomic

    order = sorted(range(len(dims)), key=lambda i: -dims[i])
    record: dict[str, Any] = {"dims": [int(dims[i]) for i in order]}
    if weights:
        record["weights"] = [float(weights[i]) for i in order]
    if loss:
        record["loss"] = loss
    write_json_atomic(Path(folder) / WIDTHS_FILE, record)


def check_matryoshka(dims: Any, weights: Any, full: int | None, model: str = "the model",
                     key: str = "loss.matryoshka_dims") -> tuple[list[int], list[float]]:
    """``(dims, weights)`` of a Matryoshka setting checked: whole numbers > 0, none twice, none above the model's
    width ``full`` (``None``: not known before loading — only the rest is checked), one weight > 0 a width or no
    weights (equal). One :class:`~xlsent.utils.errors.XlsentError` line otherwise; ``([], [])`` when off."""
    from xlsent.utils.errors import XlsentError

    dims = [] if dims in (None, "") else dims
    weights = [] if weights in (None, "") else weights
    wkey = key.rsplit(".", 1)[0] + ".matryoshka_weights"
    example = f"e.g. --set {key}={','.join(str(d) for d in _example(full))}"
    if not isinstance(dims, list) or any(isinstance(d, bool) or not isinstance(d, int) for d in dims):
        raise XlsentError(f"config {key}={dims!r}: expected whole numbers (widths) — {example}, or leave it "
                          "empty for no Matryoshka training")
    if any(d < 1 for d in dims):
        raise XlsentError(f"config {key}={dims}: every width must be > 0 — {example}")
    if len(set(dims)) != len(dims):
        raise XlsentError(f"config {key}={dims}: a width is given twice — give each once, {example}")
    if full and any(d > full for d in dims):
        raise XlsentError(f"config {key}={dims}: {max(dims)} is more than {model}'s width ({full}) — give widths "
                          f"from 1 to {full}, {example}")
    if not isinstance(weights, list) or any(isinstance(w, bool) or not isinstance(w, (int, float)) for w in weights):
        raise XlsentError(f"config {wkey}={weights!r}: expected numbers, one a width — e.g. --set "
                          f"{wkey}={','.join('1' for _ in dims) or '1,1,1,1'}, or leave it empty for equal weights")
    if weights and not dims:
        raise XlsentError(f"config {wkey}={weights}: weights without {key} — give the widths too, or leave "
                          f"{wkey} empty")
    if weights and len(weights) != len(dims):
        raise XlsentError(f"config {wkey}={weights}: {len(weights)} weight(s) for {len(dims)} width(s) — give one "
                          "a width in the same order, or leave it empty for equal weights")
    if any(w <= 0 for w in weights):
        raise XlsentError(f"config {wkey}={weights}: every weight must be > 0 — drop the width instead")
    return [int(d) for d in dims], [float(w) for w in weights]


def _example(full: int | None) -> list[int]:
    full = full or 384
    return [full] + [d for d in (256, 128, 64) if d < full] if full > 64 else [full, max(1, full // 2)]
