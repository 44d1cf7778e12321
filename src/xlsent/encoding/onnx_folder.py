"""The exported folder's format, as the ONNX backend reads it: the manifest ``xlsent_onnx.json``.

An exported folder (written by :func:`xlsent.exporter.folder.export_model`, ``xlsent export``) holds ``model.onnx``,
the tokenizer files and this manifest: the model's prompt, maximum length, lower-casing, pad id, dimension, whether
rows come out unit-length, the source model and its fingerprint, the int8 and vocabulary settings and the export
checks. The reader lives here, with :class:`xlsent.encoding.onnx_backend.OnnxBackend`; the writer in
:mod:`xlsent.exporter`, a layer above.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from xlsent.utils.errors import XlsentError

MANIFEST = "xlsent_onnx.json"
SCHEMA = "xlsent.onnx/1"


@dataclass
class ExportManifest:
    name: str
    source: str
    source_fingerprint: str
    dimension: int
    normalizes: bool
    prompt: str
    max_seq_length: int
    lowercase: bool
    pad_id: int
    model_file: str = "model.onnx"
    int8: dict | None = None
    vocab: dict | None = None
    checks: dict = field(default_factory=dict)
    schema: str = SCHEMA


def is_export_folder(path: str | Path) -> bool:
    return (Path(path) / MANIFEST).is_file()


def read_manifest(folder: str | Path) -> ExportManifest:
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise XlsentError(f"{folder}: not an exported model folder (no {MANIFEST}) — make one with xlsent export")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("schema") != SCHEMA:
            raise XlsentError(f"{path}: unknown schema {data.get('schema')!r} (this xlsent reads {SCHEMA}) — "
                              "export the model again")
        return ExportManifest(**data)
    except (json.JSONDecodeError, TypeError) as exc:
        raise XlsentError(f"{path}: unreadable manifest ({exc}) — export the model again") from exc
