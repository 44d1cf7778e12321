"""``--backend onnx`` on a torch model: export it once into the cache, then run the export.

The encoder (:mod:`xlsent.encoding`) reads exported folders but never exports: that would make the layer that
runs models depend on the one that converts them. The export on the fly is made here, a layer above both, and
handed to the one loader (:mod:`xlsent.encoding.loading`), which runs it for ``backend="onnx"`` only.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from xlsent.encoding.encoder import Encoder
from xlsent.encoding.onnx_folder import is_export_folder
from xlsent.exporter.graph import GRAPH_VERSION
from xlsent.models.handle import ModelHandle, model_fingerprint
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
    cache; the encoder keeps the model's own name): :func:`xlsent.encoding.loading.load` with :func:`cached_export`."""
    from xlsent.encoding.loading import load

    return load(name_or_path, backend, export=cached_export, **kwargs)
