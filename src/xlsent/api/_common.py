"""What every public function shares: where models run, option checks, encoders loaded once per process."""

from __future__ import annotations

import functools
import inspect
import os
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from xlsent.utils.errors import XlsentError, named

Note = Callable[[str], None] | None
F = TypeVar("F", bound=Callable[..., Any])


def writes(*params: str) -> Callable[[F], F]:
    """Hold the outputs named by ``params`` for one process while the function runs (:func:`xlsent.utils.io.claim`):
    a second run into an output in use is refused in one line, a lock left by a killed run is taken over. A file
    that is already there is replaced when the new one is complete, said in one line just before (a
    :class:`xlsent.utils.io.Replacing` warning); folders keep their own rules (a run folder resumes or says what it
    discards). An output that cannot be created is left to the function's own checks."""
    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            from xlsent.utils.io import claim

            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return fn(*args, **kwargs)  # the function says what is wrong with its arguments
            with ExitStack() as held:
                for name in params:
                    value = bound.arguments.get(name, signature.parameters[name].default)
                    if value in (None, "", inspect.Parameter.empty) or not isinstance(value, (str, Path)):
                        continue
                    path = Path(value)
                    if not _creatable(path):
                        continue
                    held.enter_context(claim(path, announce=True))
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]
    return decorate


def _creatable(path: Path) -> bool:
    for parent in (path.parent, *path.parent.parents):
        if parent.exists():
            return parent.is_dir() and os.access(parent, os.W_OK)
    return False


def output_file(path: str | Path | None, option: str = "output") -> Path | None:
    """Check an output file's path before any heavy work: not a folder, and its folder can be created."""
    if path is None:
        return None
    path = Path(path)
    if path.is_dir():
        raise XlsentError(f"{named(option, str(path))}: is a folder — give a file name")
    for parent in (path.parent, *path.parent.parents):
        if parent.exists():
            if not parent.is_dir():
                raise XlsentError(f"{named(option, str(path))}: cannot be created — {parent} is a file; choose "
                                  "another path")
            if not os.access(parent, os.W_OK):
                raise XlsentError(f"{named(option, str(path))}: {parent} is not writable — choose another path")
            break
    return path


def output_folder(path: str | Path, option: str = "output") -> Path:
    """Check a run folder's path before any heavy work: not a file, and creatable."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise XlsentError(f"{named(option, str(path))}: exists and is a file — give a folder for the run")
    checked = output_file(path / "config.yaml", option)
    assert checked is not None
    return checked.parent


def check_unicode(texts, name: str) -> None:
    """One line for a text given in Python that is not Unicode (a lone surrogate, e.g. from a JSON string), naming
    its index — before any model loads, instead of the tokenizer's TypeError after it."""
    from xlsent.utils.text import FIX, bad_char, describe

    for i, t in enumerate(texts):
        if isinstance(t, str) and (j := bad_char(t)) is not None:
            raise XlsentError(f"{name}[{i}]: text that is not Unicode ({describe('', j, t[j])}) — {FIX}")


def at_least(value: float, minimum: float, option: str) -> None:
    """One line for a numeric parameter out of range (checked before any model loads); ``option``: its Python
    name (or a command's ``--option``)."""
    if value < minimum:
        raise XlsentError(f"{named(option, value)}: must be ≥ {minimum:g}")


def choice(value: str, allowed: tuple[str, ...], option: str) -> str:
    """One line for a word that is not one of ``allowed``."""
    if value not in allowed:
        raise XlsentError(f"unknown {named(option, value)}: use one of {', '.join(allowed)}")
    return value


def place(device: str = "auto", dtype: str = "auto", options: tuple[str, str] = ("device", "dtype")) -> None:
    """Make ``device`` (``auto`` | ``cpu`` | ``cuda`` | ``cuda:N`` | ``mps``) the process's device and ``dtype`` the
    precision torch models encode in; a device that is not there is one line, before any model loads."""
    from xlsent.utils.device import use_device, use_encoding_dtype

    use_device(device, options[0])
    use_encoding_dtype(dtype, options[1])


def check_backend(backend: str, threads: int) -> None:
    """``backend`` / ``threads``, checked before any model loads."""
    from xlsent.encoding.encoder import BACKENDS

    choice(backend, BACKENDS, "backend")
    at_least(threads, 0, "threads")


def check_dimensions(model: Any, dimensions: Any, option: str = "truncate_dim") -> int | None:
    """``truncate_dim`` for ``model``: ``None`` (the full width) or 1 to the model's width, read from its folder —
    one line before the model loads (:func:`xlsent.encoding.width.check_dimensions`)."""
    from xlsent.encoding.width import check_dimensions as check

    return check(model, dimensions, option)


def parse_threshold(value: str | float | None) -> float | str | None:
    """A mining or filtering cut: ``"auto"``, ``"none"``/``None`` (keep every candidate) or a number."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    v = str(value).strip().lower()
    if v in ("auto", "none"):
        return None if v == "none" else "auto"
    try:
        return float(v)
    except ValueError:
        raise XlsentError(f"{named('threshold', value)}: not a number — give auto (default), none (keep all) "
                          "or a number such as 1.02") from None


def parse_filters(value: str | Sequence[str]) -> tuple[str, ...]:
    """The noise filters asked for (``"default"``, ``"none"``, a comma-separated list or a sequence), checked."""
    from xlsent.data.noise_filters import NOISE_FILTERS

    if isinstance(value, (tuple, list)):
        kinds = tuple(str(x).strip().lower() for x in value)
    else:
        v = str(value).strip().lower()
        if v in ("default", "all"):
            return NOISE_FILTERS
        if v in ("none", ""):
            return ()
        kinds = tuple(x.strip() for x in v.split(",") if x.strip())
    for k in kinds:
        choice(k, NOISE_FILTERS, "filters")
    return kinds


_ENCODERS: dict[tuple, Any] = {}


def model_label(model: Any) -> str:
    """How a message names a model given as a name, a folder, a loaded SentenceTransformer or an encoder."""
    if isinstance(model, (str, Path)):
        return str(model)
    return str(getattr(model, "name", None) or "MODEL")  # a model loaded in Python: its folder is not known here


def encoder_for(model: Any, *, backend: str = "auto", threads: int = 0, normalize: bool = False,
                batch_size: int = 64, chunk_words: int = 0, show_progress: bool | None = None, memo: bool = False,
                name: str | None = None, dimensions: int | None = None, prompt_name: str | None = None,
                prompt: str | None = None):
    """The encoder of ``model``: a registered name or folder (its model loaded once per process, backend, threads,
    device and dtype — a notebook that calls :func:`xlsent.embed` in a loop loads it once, and every other option
    is a light copy around the same loaded model), a loaded ``SentenceTransformer``, or an encoder already made
    (returned as it is, or cut to ``dimensions``). ``dimensions``: the first N coordinates of each vector,
    renormalised (:func:`xlsent.encoding.width.cut`; ``None`` = the full width). ``prompt`` (a text) or
    ``prompt_name`` (one of the model's prompts, e5's ``query`` / ``passage``) replaces the model's default prompt."""
    from xlsent.encoding.encoder import Encoder

    if prompt is not None and prompt_name is not None:
        raise XlsentError("give prompt= (a text) or prompt_name= (one of the model's prompts), not both")
    if isinstance(model, Encoder):
        return _prompted(model if dimensions is None else model.replace(dimensions=dimensions), prompt_name, prompt)
    if prompt_name is not None and isinstance(model, (str, Path)):  # a name the folder lacks: said before it loads
        from xlsent.encoding.encoder import folder_prompts, prompt_in

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
        return _prompted(Encoder.load(handle, **opts), prompt_name, prompt)
    from xlsent.exporter.load import load_encoder
    from xlsent.utils.device import current_device, encoding_spec

    device = current_device()
    folder = Path(str(model)).expanduser()
    if folder.is_dir():  # a folder is known by its contents: a model retrained or re-exported in place is reloaded
        from xlsent.models.handle import model_fingerprint

        identity = model_fingerprint(folder)
    else:
        identity = str(model)
    import os

    # the dtype as asked (auto is decided with the model's shapes, once it loads) and the CPU override
    key = (identity, backend, threads, device, encoding_spec(), os.environ.get("XLSENT_CPU_BF16"))
    if key not in _ENCODERS:
        _ENCODERS[key] = load_encoder(model, backend=backend, threads=threads, name=str(model))
    # a copy with this call's options: the loaded model is shared, a memo (one job's) never is
    return _prompted(_ENCODERS[key].replace(name=name or str(model), **opts), prompt_name, prompt)


def _prompted(encoder: Any, prompt_name: str | None, prompt: str | None) -> Any:
    """``encoder`` with the prompt asked for (its model's own default when neither is given)."""
    if prompt_name is not None:
        prompt = encoder.prompt_named(prompt_name)
    return encoder if prompt is None else encoder.replace(prompt=prompt)


def renamed(given: dict, old: str, new: str, until: str = "0.3") -> None:
    """A parameter renamed in this release: its old name still works (moved to ``new`` in ``given``) with a
    ``DeprecationWarning`` until release ``until`` (the changelog lists every rename)."""
    import warnings

    if old in given:
        if new in given:
            raise XlsentError(f"{old}= is the old name of {new}=: give one of them")
        warnings.warn(f"{old}= is renamed {new}= (the old name goes in xlsent {until})", DeprecationWarning,
                      stacklevel=3)
        given[new] = given.pop(old)


#: parameters renamed to sentence-transformers' names (and one name a meaning): old → new, kept for one release
RENAMED = {"normalize": "normalize_embeddings", "dimensions": "truncate_dim", "show_progress": "show_progress_bar",
           "k_nn": "k"}


def old_names(function: str, old: dict, **current: Any) -> list:
    """The values of ``current``'s parameters, each taken from its old name (:data:`RENAMED`) where the caller
    used it — with a ``DeprecationWarning`` — and a ``TypeError`` for any other unexpected keyword, as Python
    gives."""
    import warnings

    for name, value in old.items():
        new = RENAMED.get(name)
        if new not in current:
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")
        warnings.warn(f"{function}({name}=…) is renamed {new}= (the old name goes in xlsent 0.3)", DeprecationWarning,
                      stacklevel=3)
        current[new] = value
    return list(current.values())
