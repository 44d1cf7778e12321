"""A model argument resolved once, before anything loads: :class:`ModelSource`.

Every public function takes its model as a registered name, a folder (a trained run's ``model/``, an exported ONNX
folder), a loaded ``SentenceTransformer`` or an encoder. What can be told about it before it loads — the folder it
names, whether that folder is an export, the width of its vectors, its named prompts, the language means stored in
it — is read here, from one resolution of the name, so that a wrong option is one line before any weight is read;
:func:`xlsent.encoding.loading.open_encoder` then turns it into an encoder.
"""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import Any

from xlsent.utils.errors import XlsentError


class ModelSource:
    """``model`` as the caller gave it, and what its folder says before it loads (each read once, when asked)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        #: given by name or folder (not loaded in Python)
        self.named = isinstance(model, (str, Path))
        #: how a message names the model: its name or folder as given; a loaded model, its ``name`` or ``MODEL`` (its
        #: folder is not known here)
        self.label = str(model) if self.named else str(getattr(model, "name", None) or "MODEL")

    @cached_property
    def exported(self) -> bool:
        """The folder given is an exported ONNX folder (``xlsent export``)."""
        from xlsent.encoding.onnx_folder import is_export_folder

        given = Path(str(self.model)).expanduser()
        return self.named and given.is_dir() and is_export_folder(given)  # the path alone: no name is resolved

    @cached_property
    def folder(self) -> Path:
        """The folder the model names: an export folder itself, else the resolved model folder (a registered name's
        prepared folder, a run folder's ``model/``). Language means (``xlsent models calibrate``) live there,
        whichever backend runs."""
        from xlsent.models.registry import resolve_model_path

        return Path(str(self.model)).expanduser() if self.exported else resolve_model_path(str(self.model))

    def identity(self) -> str:
        """What keys a loaded model in this process: a folder's fingerprint (a model retrained or re-exported in
        place is another model), else the name."""
        given = Path(str(self.model)).expanduser()
        if given.is_dir():
            from xlsent.models.handle import model_fingerprint

            return model_fingerprint(given)
        return str(self.model)

    def width(self) -> int | None:
        """The width of the model's vectors without loading it where it can be read: an encoder's or a loaded
        ``SentenceTransformer``'s own, an exported folder's manifest, a model folder's configuration files (a
        registered name's prepared folder); ``None`` when only loading the model would tell."""
        if self.named:
            if self.exported:
                from xlsent.encoding.onnx_folder import read_manifest

                return int(read_manifest(self.folder).dimension) or None
            from xlsent.models.widths import folder_dimension

            return folder_dimension(self.folder)
        model = getattr(self.model, "backend", self.model)  # an encoder already cut: its model's full width
        for name in ("dimension", "get_embedding_dimension"):
            value = getattr(model, name, None)
            value = value() if callable(value) else value
            if isinstance(value, int) and value > 0:
                return value
        return None

    def prompts(self) -> dict[str, str] | None:
        """The model's named prompts read from its folder (sentence-transformers'
        ``config_sentence_transformers.json``; an exported folder keeps none); ``None`` when the folder does not
        say."""
        from xlsent.encoding.onnx_folder import is_export_folder

        if self.exported or is_export_folder(self.folder):
            return {}
        config = self.folder / "config_sentence_transformers.json"
        try:
            prompts = json.loads(config.read_text(encoding="utf-8")).get("prompts")
        except (OSError, ValueError, AttributeError):
            return None
        return dict(prompts) if isinstance(prompts, dict) else None

    def means(self, lang: str | None):
        """The model folder's language means, checked for ``lang`` (``center=``): one line for a missing ``lang``, a
        model given loaded, a folder without means or a language not calibrated — before the model loads."""
        from xlsent.models.language_means import read_language_means

        if not lang:
            raise XlsentError("center= needs lang= (the language whose mean vector to subtract)")
        if not self.named:
            raise XlsentError("center= reads the language means stored in a model folder: give the model by name or "
                              "folder")
        means = read_language_means(self.folder)
        if means is None:
            raise XlsentError(f"center=: {self.model} carries no language means — calibrate it first (xlsent models "
                              f"calibrate {self.model} --lang {lang}=FILE, or xlsent.calibrate)")
        means.mean(lang)  # an uncalibrated language is one line, before the model loads
        return means

