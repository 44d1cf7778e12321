"""The one way a model argument becomes an encoder: :func:`open_encoder`.

A registered name, a model folder, an exported folder, a loaded ``SentenceTransformer`` or an encoder already made
goes in; a loaded :class:`~xlsent.encoding.encoder.Encoder` comes out, and that is what is handed down — never the
name again. A name or folder is resolved and loaded once, here (:func:`load`: an exported folder on onnxruntime,
anything else through :func:`xlsent.models.handle.load_model`), and kept for the process, per backend, threads,
device and dtype: a notebook that embeds in a loop loads it once, every other option is a light copy around the same
loaded model, and a folder whose contents change is loaded again.

Loading never exports: a torch model run with ``backend="onnx"`` — and only then — is exported by the ``export``
function the caller hands in (:func:`xlsent.exporter.load.cached_export`: once, fp32, into the cache), since
converting a model is the business of the layer above this one.

What a model's folder says before the model loads — its width (:func:`xlsent.encoding.width.check_dimensions`), its
prompts (:func:`~xlsent.encoding.encoder.folder_prompts`), its language means (:func:`language_means`) — is read
where a wrong option must be one line before any weight is read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from xlsent.encoding.encoder import Encoder, check_running
from xlsent.utils.errors import XlsentError

#: the encoders loaded in this process (:func:`load` with ``keep=True``)
_ENCODERS: dict[tuple, Encoder] = {}


def model_label(model: Any) -> str:
    """How a message names a model given as a name, a folder, a loaded SentenceTransformer or an encoder."""
    if isinstance(model, (str, Path)):
        return str(model)
    return str(getattr(model, "name", None) or "MODEL")  # a model loaded in Python: its folder is not known here


def language_means(model: Any, lang: str | None):
    """The language means stored in ``model``'s folder, checked for ``lang`` (``center=``): one line for a missing
    ``lang``, a model given loaded, a folder without means or a language not calibrated — before the model loads."""
    from xlsent.encoding.encoder import source_folder
    from xlsent.models.language_means import read_language_means

    if not lang:
        raise XlsentError("center= needs lang= (the language whose mean vector to subtract)")
    if not isinstance(model, (str, Path)):
        raise XlsentError("center= reads the language means stored in a model folder: give the model by name or "
                          "folder")
    means = read_language_means(source_folder(model))
    if means is None:
        raise XlsentError(f"center=: {model} carries no language means — calibrate it first (xlsent models "
                          f"calibrate {model} --lang {lang}=FILE, or xlsent.calibrate)")
    means.mean(lang)  # an uncalibrated language is one line, before the model loads
    return means


def load(model: Any, backend: str = "auto", threads: int = 0, export: Callable[[str], Path] | None = None,
         keep: bool = False, **kwargs: Any) -> Encoder:
    """An encoder of ``model`` (a name, a folder, an exported folder or a handle): a torch model is loaded here
    (:func:`~xlsent.models.handle.load_model`) and handed to :meth:`Encoder.load`; ``backend="onnx"`` on a torch model
    first runs ``export`` on it (the encoder keeps the model's own name). ``keep``: loaded once per process (by the
    folder's contents or the name, backend, threads, device, the dtype as asked and the CPU override)."""
    check_running(backend, threads)  # said before any export starts, or any model loads
    if not isinstance(model, (str, Path)):  # a handle: Encoder.load's own
        return Encoder.load(model, backend=backend, threads=threads, **kwargs)
    from xlsent.encoding.onnx_folder import is_export_folder

    given = Path(str(model)).expanduser()
    exported = given.is_dir() and is_export_folder(given)
    key = None
    if keep:
        from xlsent.models.handle import model_fingerprint
        from xlsent.utils.device import current_device, encoding_spec

        # a folder is known by its contents: a model retrained or re-exported in place is loaded again; the dtype as
        # asked (auto is decided with the model's shapes, once it loads)
        key = (model_fingerprint(given) if given.is_dir() else str(model), backend, threads, current_device(),
               encoding_spec(), os.environ.get("XLSENT_CPU_BF16"))
        if key in _ENCODERS:
            return _ENCODERS[key]
    if not exported and backend != "onnx":  # a torch model: loaded once, here, and handed down
        from xlsent.models.handle import load_model

        encoder = Encoder.load(load_model(model), backend=backend, threads=threads, own=True, **kwargs)
    else:
        if backend == "onnx" and export is not None and not exported:
            kwargs.setdefault("name", str(model))
            model = export(str(model))
        encoder = Encoder.load(model, backend=backend, threads=threads, **kwargs)
    if key is not None:
        _ENCODERS[key] = encoder
    return encoder


def open_encoder(model: Any, *, backend: str = "auto", threads: int = 0,
                 export: Callable[[str], Path] | None = None, normalize: bool = False, batch_size: int = 64,
                 chunk_words: int = 0, show_progress: bool | None = None, memo: bool = False, name: str | None = None,
                 dimensions: int | None = None, prompt_name: str | None = None,
                 prompt: str | None = None) -> Encoder:
    """The encoder of ``model`` (see the module): loaded once per process for a name or folder (:func:`load`), wrapped
    for a loaded ``SentenceTransformer``, returned as it is (or cut to ``dimensions``) for an encoder. ``dimensions``:
    the first N coordinates of each vector, renormalised (``None`` = the full width). ``prompt`` (a text) or
    ``prompt_name`` (one of the model's prompts, e5's ``query`` / ``passage``; a name the folder lacks is said before
    the model loads) replaces the model's default prompt. ``export``: how a torch model is exported for
    ``backend="onnx"``."""
    from xlsent.encoding.encoder import folder_prompts, prompt_in

    if prompt is not None and prompt_name is not None:
        raise XlsentError("give prompt= (a text) or prompt_name= (one of the model's prompts), not both")
    if isinstance(model, Encoder):
        return _prompted(model if dimensions is None else model.replace(dimensions=dimensions), prompt_name, prompt)
    if prompt_name is not None and isinstance(model, (str, Path)):  # a name the folder lacks: said before it loads
        known = folder_prompts(model)
        if known is not None:
            prompt_in(known, prompt_name)
    opts: dict[str, Any] = dict(normalize=normalize, batch_size=batch_size, chunk_words=chunk_words,
                                show_progress=show_progress, memo=memo, dimensions=dimensions)
    if not isinstance(model, (str, Path)):  # a SentenceTransformer the caller loaded
        from sentence_transformers import SentenceTransformer

        if not isinstance(model, SentenceTransformer):
            raise XlsentError(f"model: give a registered name, a model folder or a SentenceTransformer, "
                              f"not {type(model).__name__}")
        from xlsent.models.handle import ModelHandle

        path = Path(getattr(model, "_xlsent_path", "") or "/nonexistent")  # no folder: no gloss dictionary
        # an in-memory model has no folder to fingerprint: its own id keys any cache, never another model's
        handle = ModelHandle(name or "model", path, model, _fingerprint=f"in-memory-{id(model)}")
        return _prompted(Encoder.load(handle, label=model_label(model), **opts), prompt_name, prompt)
    loaded = load(model, backend=backend, threads=threads, export=export, keep=True)
    opts["name"] = name or str(model)  # this call's name for the model (the cached encoder may be another path's)
    # a copy with this call's options: the loaded model is shared, a memo (one job's) never is
    return _prompted(loaded.replace(**opts), prompt_name, prompt)


def _prompted(encoder: Encoder, prompt_name: str | None, prompt: str | None) -> Encoder:
    """``encoder`` with the prompt asked for (its model's own default when neither is given)."""
    if prompt_name is not None:
        prompt = encoder.prompt_named(prompt_name)
    return encoder if prompt is None else encoder.replace(prompt=prompt)
