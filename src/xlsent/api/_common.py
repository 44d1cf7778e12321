"""What every public function shares: where models run, option checks, encoders loaded once per process."""

from __future__ import annotations

import functools
import inspect
import os
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from xlsent.encoding.encoder import RUNNING as ENCODER_RUNNING
from xlsent.encoding.encoder import check_running as check_backend  # backend / threads, before any model loads
from xlsent.utils.errors import XlsentError, named
from xlsent.utils.options import Option, check, one_of

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


def check_options(declared: Mapping[str, Option], given: Mapping[str, Any], names: Sequence[str] | None = None) -> None:
    """A function's arguments (``given``, e.g. its ``locals()``) against its declared options (``declared``: name →
    :class:`xlsent.utils.options.Option`, the range or words the CLI's options are built from too), before any model
    loads: the one line of :meth:`~xlsent.utils.options.Option.check` for the first out of range."""
    check(declared, given, names)


#: where and how a model runs, as every function that loads one takes it (checked by :func:`check_backend` and
#: :func:`place`; the CLI's --backend, --threads, --device, --dtype and --dimensions built from these)
RUNNING: dict[str, Option] = {
    **ENCODER_RUNNING,
    "device": Option("auto", help="where the model runs: auto (CUDA, then MPS, then the CPU) | cpu | cuda | cuda:N | "
                     "mps"),
    "dtype": Option("auto", help="precision a torch model encodes in: auto (fp16 on a CUDA GPU, bf16 autocast on a "
                    "CPU where it was timed faster, fp32 elsewhere) | fp32 | fp16 | bf16"),
    "truncate_dim": Option(None, help="the first N coordinates of each vector, renormalised to unit length (1 to the "
                           "model's width; default: the full width)"),
}


def place(device: str = "auto", dtype: str = "auto", options: tuple[str, str] = ("device", "dtype")) -> None:
    """Make ``device`` (``auto`` | ``cpu`` | ``cuda`` | ``cuda:N`` | ``mps``) the process's device and ``dtype`` the
    precision torch models encode in; a device that is not there is one line, before any model loads."""
    from xlsent.utils.device import use_device, use_encoding_dtype

    use_device(device, options[0])
    use_encoding_dtype(dtype, options[1])


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
    from xlsent.data.filters.noise_filters import NOISE_FILTERS

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
        one_of(NOISE_FILTERS).check(k, "filters")
    return kinds


def model_label(model: Any) -> str:
    """How a message names a model given as a name, a folder, a loaded SentenceTransformer or an encoder."""
    from xlsent.encoding.loading import model_label as label

    return label(model)


def encoder_for(model: Any, *, backend: str = "auto", threads: int = 0, normalize: bool = False,
                batch_size: int = 64, chunk_words: int = 0, show_progress: bool | None = None, memo: bool = False,
                name: str | None = None, dimensions: int | None = None, prompt_name: str | None = None,
                prompt: str | None = None):
    """The encoder of ``model`` (:func:`xlsent.encoding.loading.open_encoder`: a registered name or folder loaded
    once per process, backend, threads, device and dtype; a loaded ``SentenceTransformer``; an encoder already
    made), a torch model exported for ``backend="onnx"`` (:func:`xlsent.exporter.load.cached_export`) and only
    then."""
    from xlsent.encoding.loading import open_encoder
    from xlsent.exporter.load import cached_export

    return open_encoder(model, backend=backend, threads=threads, export=cached_export, normalize=normalize,
                        batch_size=batch_size, chunk_words=chunk_words, show_progress=show_progress, memo=memo,
                        name=name, dimensions=dimensions, prompt_name=prompt_name, prompt=prompt)


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
