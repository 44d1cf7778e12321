"""The one way xlsent loads a model: :func:`load_model` → :class:`ModelHandle` (model, folder, fingerprint).

``name_or_path`` is a registered name (:data:`xlsent.models.registry.REGISTRY`) or a local folder
holding a sentence-transformers model or a plain Hugging Face transformer (which gets mean
pooling, as sentence-transformers does). Nothing here downloads. Every recipe, evaluation,
encoder and mining job loads through this module, so a model is resolved once and identified
the same way everywhere (its fingerprint keys the feature caches and mining work folders).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from xlsent.models.registry import resolve_model_path
from xlsent.utils.errors import XlsentError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

_FINGERPRINT_SUFFIXES = {".json", ".safetensors", ".bin", ".model", ".txt", ".onnx", ".tsv"}


def model_fingerprint(path: str | Path) -> str:
    """Identity of a model folder: its resolved path and the names, sizes and modification times of its files."""
    h = hashlib.sha1()
    root = Path(path).resolve()
    h.update(str(root).encode())
    for f in sorted(root.rglob("*")):
        if f.is_file() and f.suffix in _FINGERPRINT_SUFFIXES:
            st = f.stat()
            h.update(f"{f.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def is_sentence_encoder(path: str | Path) -> bool:
    """True for a sentence-transformers folder with a pooling module (a model trained to give sentence
    vectors at its output); False for a plain Hugging Face folder (e.g. a masked-language model)."""
    modules = Path(path) / "modules.json"
    if not modules.exists():
        return False
    try:
        entries = json.loads(modules.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return any("Pooling" in str(m.get("type", "")) for m in entries)


def transformer_subfolder(model_path: str | Path) -> str:
    """Folder (relative to the model) of a sentence-transformers model's Transformer module."""
    modules = Path(model_path) / "modules.json"
    if not modules.exists():
        return ""
    first = json.loads(modules.read_text(encoding="utf-8"))[0]
    return "" if first.get("path") in ("", None) else first["path"]


@dataclass
class ModelHandle:
    """A loaded model with the folder it came from and a fingerprint of that folder."""

    name: str
    path: Path
    model: "SentenceTransformer"
    _fingerprint: str | None = field(default=None, repr=False)

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = model_fingerprint(self.path)
        return self._fingerprint

    @property
    def dimension(self) -> int:
        return int(self.model.get_embedding_dimension())

    @property
    def prompt(self) -> str:
        """The model's default prompt (e5: ``"passage: "``), or ``""``."""
        return model_prompt(self.model)


def model_prompt(model) -> str:
    """A SentenceTransformer's default prompt (e5: ``"passage: "``), or ``""``."""
    name = model.default_prompt_name
    return model.prompts.get(name, "") if name else ""


def load_model(name_or_path: str | Path, *, max_seq_length: int | None = None, config_kwargs: dict | None = None,
               device: str | None = None) -> ModelHandle:
    """Resolve ``name_or_path`` and load it as a ``SentenceTransformer`` (offline).

    ``config_kwargs`` change the transformer's config at load time (e.g. ``num_hidden_layers``).
    ``device``: a torch device string; ``None`` = the process's device (:func:`xlsent.utils.device.current_device`:
    ``--device`` / ``models.device``, else auto).
    """
    from sentence_transformers import SentenceTransformer

    from xlsent.utils.device import current_device

    path = resolve_model_path(str(name_or_path))
    device = device or current_device()
    try:
        st = SentenceTransformer(str(path), device=device, local_files_only=True, config_kwargs=config_kwargs)
    except OSError as exc:  # a broken folder, not a user typo we can name better
        raise XlsentError(f"{path}: could not load the model ({exc}) — is the folder complete?") from exc
    if max_seq_length:  # never past the model's own limit (its position table)
        st.max_seq_length = min(int(max_seq_length), st.max_seq_length or int(max_seq_length))
    return ModelHandle(str(name_or_path), path, st)


def load_transformer_module(model_path: str | Path, num_layers: int, hidden_states: bool = True):
    """A model's Transformer module alone, with only its first ``num_layers`` layers.

    ``hidden_states`` sets ``config.output_hidden_states`` (needed by layer-averaging modules).
    Loaded afresh from disk (never by editing a live model: Hugging Face records hidden states
    with hooks that keep the layer count they first saw).
    """
    from sentence_transformers.base.modules import Transformer

    return Transformer.load(
        str(model_path),
        subfolder=transformer_subfolder(model_path),
        local_files_only=True,
        config_kwargs={"num_hidden_layers": int(num_layers), "output_hidden_states": hidden_states},
    )


def model_info(name: str) -> dict:
    """What ``xlsent models info`` shows: parameters, layers, dimensions, Matryoshka widths, prompts, languages, and
    the precision it runs in on this machine (``precision``: bf16 or fp32 on this CPU, timed, and why)."""
    from xlsent.models.registry import REGISTRY
    from xlsent.models.widths import recorded_widths

    handle = load_model(name)
    model, path = handle.model, handle.path
    auto = model[0].auto_model
    cfg = auto.config
    total = sum(p.numel() for p in model.parameters())
    emb = sum(p.numel() for n, p in auto.named_parameters() if "embeddings" in n)
    info = {
        "name": name,
        "path": str(path),
        "parameters": total,
        "embedding_parameters": emb,
        "encoder_parameters": total - emb,
        "layers": getattr(cfg, "num_hidden_layers", None),
        "hidden": getattr(cfg, "hidden_size", None),
        "dimension": model.get_embedding_dimension(),
        "matryoshka_widths": recorded_widths(path),
        "vocab": getattr(cfg, "vocab_size", None),
        "max_seq_length": model.max_seq_length,
        "prompts": dict(model.prompts),
        "default_prompt": model.default_prompt_name,
        "modules": [type(m).__name__ for m in model],
    }
    if name in REGISTRY:
        info["languages"] = REGISTRY[name].languages
        info["source"] = REGISTRY[name].source
    from xlsent.utils.device import precision_report

    info["precision"] = precision_report(model)  # what this machine runs it in, and why
    return info
