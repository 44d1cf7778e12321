"""The one way a model argument becomes an encoder: :func:`open_encoder`.

A registered name, a model folder, an exported folder, a loaded ``SentenceTransformer``, an encoder already made, or
a :class:`~xlsent.encoding.source.ModelSource` (the argument resolved once, its folder read for the checks made
before anything loads) goes in; a loaded :class:`~xlsent.encoding.encoder.Encoder` comes out, and that is what is
handed down — never the name again. A model given by name or folder is loaded once per process, backend, threads,
device and dtype (a notebook that embeds in a loop loads it once; every other option is a light copy around the same
loaded model), and again when its folder changes.

Loading never exports: a torch model run with ``backend="onnx"`` — and only then — is exported by the ``export``
function the caller hands in (:func:`xlsent.exporter.load.cached_export`: once, fp32, into the cache), since
converting a model is the layer above this one's business.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from xlsent.encoding.encoder import Encoder
from xlsent.encoding.source import ModelSource
from xlsent.utils.errors import XlsentError

#: the loaded encoders of this process, by :func:`_key`
_ENCODERS: dict[tuple, Encoder] = {}


def load(model: Any, backend: str = "auto", threads: int = 0, export: Callable[[str], Path] | None = None,
         **kwargs: Any) -> Encoder:
    """:meth:`Encoder.load` of ``model`` (a name, a folder, an exported folder, a handle or a
    :class:`~xlsent.encoding.source.ModelSource`), where ``backend="onnx"`` on a torch model first runs ``export`` on
    it (the encoder keeps the model's own name); not kept."""
    from xlsent.encoding.encoder import BACKENDS

    if backend not in BACKENDS:  # said before any export starts
        raise XlsentError(f"unknown backend '{backend}': choose one of {', '.join(BACKENDS)}")
    source = model if isinstance(model, ModelSource) else None
    target = source.model if source is not None else model
    if backend == "onnx" and export is not None and isinstance(target, (str, Path)) and \
            not (source or ModelSource(target)).exported:
        kwargs.setdefault("name", str(target))
        target = export(str(target))
    return Encoder.load(target, backend=backend, threads=threads, **kwargs)


def open_encoder(model: Any, *, backend: str = "auto", threads: int = 0,
                 export: Callable[[str], Path] | None = None, normalize: bool = False, batch_size: int = 64,
                 chunk_words: int = 0, show_progress: bool | None = None, memo: bool = False, name: str | None = None,
                 dimensions: int | None = None, prompt_name: str | None = None,
                 prompt: str | None = None) -> Encoder:
    """The encoder of ``model`` (see the module): loaded once per process for a name or folder, wrapped for a loaded
    ``SentenceTransformer``, returned as it is (or cut to ``dimensions``) for an encoder. ``dimensions``: the first N
    coordinates of each vector, renormalised (``None`` = the full width). ``prompt`` (a text) or ``prompt_name`` (one
    of the model's prompts, e5's ``query`` / ``passage``; a name the folder lacks is said before the model loads)
    replaces the model's default prompt. ``export``: how a torch model is exported for ``backend="onnx"``."""
    from xlsent.encoding.encoder import prompt_in

    if prompt is not None and prompt_name is not None:
        raise XlsentError("give prompt= (a text) or prompt_name= (one of the model's prompts), not both")
    source = model if isinstance(model, ModelSource) else ModelSource(model)
    model = source.model
    if isinstance(model, Encoder):
        return _prompted(model if dimensions is None else model.replace(dimensions=dimensions), prompt_name, prompt)
    if prompt_name is not None and source.named:  # a name the folder lacks: said before it loads
        known = source.prompts()
        if known is not None:
            prompt_in(known, prompt_name)
    opts: dict[str, Any] = dict(normalize=normalize, batch_size=batch_size, chunk_words=chunk_words,
                                show_progress=show_progress, memo=memo, dimensions=dimensions)
    if not source.named:  # a SentenceTransformer the caller loaded
        from sentence_transformers import SentenceTransformer

        if not isinstance(model, SentenceTransformer):
            raise XlsentError(f"model: give a registered name, a model folder or a SentenceTransformer, "
                              f"not {type(model).__name__}")
        from xlsent.models.handle import ModelHandle

        path = Path(getattr(model, "_xlsent_path", "") or "/nonexistent")  # no folder: no gloss dictionary
        # an in-memory model has no folder to fingerprint: its own id keys any cache, never another model's
        handle = ModelHandle(name or "model", path, model, _fingerprint=f"in-memory-{id(model)}")
        return _prompted(Encoder.load(handle, label=source.label, **opts), prompt_name, prompt)
    from xlsent.utils.device import current_device, encoding_spec

    # the folder's contents (or the name), backend, threads, device, the dtype as asked (auto is decided with the
    # model's shapes, once it loads) and the CPU override
    key = (source.identity(), backend, threads, current_device(), encoding_spec(), os.environ.get("XLSENT_CPU_BF16"))
    if key not in _ENCODERS:
        _ENCODERS[key] = load(source, backend=backend, threads=threads, export=export, name=str(model))
    # a copy with this call's options: the loaded model is shared, a memo (one job's) never is
    return _prompted(_ENCODERS[key].replace(name=name or str(model), **opts), prompt_name, prompt)


def _prompted(encoder: Encoder, prompt_name: str | None, prompt: str | None) -> Encoder:
    """``encoder`` with the prompt asked for (its model's own default when neither is given)."""
    if prompt_name is not None:
        prompt = encoder.prompt_named(prompt_name)
    return encoder if prompt is None else encoder.replace(prompt=prompt)
