"""Widths: a vector cut to its first N coordinates and renormalised — the one implementation of ``--dimensions``.

Every place a vector leaves xlsent at a chosen width — ``xlsent embed``, ``mine``, ``eval``, :func:`xlsent.embed`,
:func:`xlsent.mine`, :func:`xlsent.evaluate` and the service's ``dimensions`` — cuts it here: :func:`cut` keeps the
first N coordinates of each row and divides them by their length, so a cut vector is exactly
``v[:N] / ‖v[:N]‖`` of the full one (what a Matryoshka-trained model is trained for; any model can be cut, a model
not trained for it loses more). The :class:`~xlsent.encoding.encoder.Encoder` applies it last, after normalisation
and chunked pooling; anything that comes after the encoder (a language's stored mean, int8 or ubinary
quantisation) works on the cut vectors — except a stored language mean, which is as wide as the model: those
callers encode at full width, center, and cut after.

:func:`check_dimensions` refuses a width below 1 or above the model's in one line, before the model loads where
the model's width can be read from its folder (:func:`model_width`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from xlsent.utils.errors import XlsentError, named

#: the name a width is given by: the parameter of this module and of the encoder, the service's field and the
#: command line's ``--dimensions`` (:func:`xlsent.api._common.check_dimensions` names Python's ``truncate_dim``)
OPTION = "dimensions"


def cut(vectors: np.ndarray, dimensions: int | None) -> np.ndarray:
    """The first ``dimensions`` coordinates of each row, renormalised to unit length (a zero row stays zero);
    ``None`` leaves the rows as they are."""
    x = np.asarray(vectors, dtype=np.float32)
    if dimensions is None:
        return x
    if x.ndim != 2 or dimensions > x.shape[1]:
        raise XlsentError(f"{named(OPTION, dimensions)}: more than the model's width ({x.shape[-1]}) — give 1 to "
                          f"{x.shape[-1]}, or leave it out for the full width")
    head = x[:, :dimensions]
    return head / np.maximum(np.linalg.norm(head, axis=1, keepdims=True), 1e-12)


def valid_width(dimensions: Any, full: int | None, option: str = OPTION) -> int | None:
    """``dimensions`` checked against the model's width ``full`` (``None``: not known yet — only ≥ 1 is checked):
    a whole number from 1 to ``full``, or ``None`` for the full width. One clear line otherwise."""
    if dimensions is None:
        return None
    if isinstance(dimensions, bool) or not isinstance(dimensions, (int, np.integer)):
        raise XlsentError(f"{named(option, dimensions)}: not a whole number — give a width such as 128 (the first N "
                          "coordinates of each vector), or leave it out for the full width")
    dimensions = int(dimensions)
    span = f"1 to {full}" if full else "1 to the model's width"
    if dimensions < 1:
        raise XlsentError(f"{named(option, dimensions)}: must be ≥ 1 (the first N coordinates of each vector, "
                          f"renormalised) — give {span}, or leave it out for the full width")
    if full and dimensions > full:
        raise XlsentError(f"{named(option, dimensions)}: more than the model's width ({full}) — give {span}, or leave "
                          "it out for the full width")
    return dimensions


def model_width(model: Any) -> int | None:
    """The width of ``model``'s vectors without loading it where it can be read: an encoder's or a loaded
    ``SentenceTransformer``'s own, an exported folder's manifest, a model folder's configuration files (a
    registered name's prepared folder); ``None`` when only loading the model would tell."""
    if isinstance(model, (str, Path)):
        from xlsent.encoding.onnx_folder import is_export_folder, read_manifest
        from xlsent.models.registry import resolve_model_path
        from xlsent.models.widths import folder_dimension

        folder = Path(str(model)).expanduser()
        if folder.is_dir() and is_export_folder(folder):
            return int(read_manifest(folder).dimension) or None
        return folder_dimension(resolve_model_path(str(model)))
    model = getattr(model, "backend", model)  # an encoder already cut: its model's full width
    for name in ("dimension", "get_embedding_dimension"):
        value = getattr(model, name, None)
        value = value() if callable(value) else value
        if isinstance(value, int) and value > 0:
            return value
    return None


def check_dimensions(model: Any, dimensions: Any, option: str = OPTION) -> int | None:
    """``dimensions`` for ``model``, checked before the model loads (its width read from its folder): ``None`` (the
    full width) or a whole number from 1 to the model's width."""
    if dimensions is None:
        return None
    valid_width(dimensions, None, option)  # below 1 or not a number: said before any folder is looked at
    return valid_width(dimensions, model_width(model), option)
