"""``--backend onnx`` on a torch model: export it once into the cache, then run the export.

The encoder (:mod:`xlsent.encoding`) reads exported folders but never exports: that would make the layer that
runs models depend on the one that converts them. The decision to export on the fly is taken here, a layer
above both, and every command that takes ``--backend`` loads its model through :func:`load_encoder`.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from xlsent.encoding.encoder import BACKENDS, Encoder
from xlsent.encoding.onnx_folder import is_export_folder
from xlsent.exporter.graph import GRAPH_VERSION
from xlsent.models.handle import ModelHandle, model_fingerprint
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import cache_dir


def cached_export(name_or_path: str) -> Path:
    """An fp32 export of a torch model, made once into the cache (keyed by the model folder's fingerprint and
    :data:`~xlsent.exporter.graph.GRAPH_VERSION`)."""
    from xlsent.exporter.folder import export_model
    from xlsent.models.registry import resolve_model_path

    source = resolve_model_path(name_or_path)
    target = cache_dir() / "onnx" / f"{model_fingerprint(source)}-g{GRAPH_VERSION}"
    if not is_export_folder(target):
        warnings.warn(f"--backend onnx: exporting {name_or_path} once (fp32) into {target} — later runs reuse it",
                      stacklevel=2)
        export_model(str(source), target, log=lambda m: None)
    return target


def load_encoder(name_or_path: str | Path | ModelHandle, backend: str = "auto", **kwargs) -> Encoder:
    """:meth:`Encoder.load`, where ``backend="onnx"`` also takes a torch model (exported once, fp32, into the
    cache; the encoder keeps the model's own name)."""
    if backend not in BACKENDS:  # said before any export starts
        raise XlsentError(f"unknown backend '{backend}': choose one of {', '.join(BACKENDS)}")
    if backend == "onnx" and not isinstance(name_or_path, ModelHandle):
        folder = Path(str(name_or_path))
        if not (folder.is_dir() and is_export_folder(folder)):
            kwargs.setdefault("name", str(name_or_path))
            name_or_path = cached_export(str(name_or_path))
    return Encoder.load(name_or_path, backend=backend, **kwargs)
