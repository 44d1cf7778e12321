"""Run folders: the one way every recipe keeps a training stage's config, checkpoints and result.

A stage folder (a recipe's ``--output``, or one of the multi-stage recipe's stage sub-folders) holds::

    model/            the finished sentence-transformers model, written atomically with every extra
                      file it needs (a gloss dictionary, the model card) already inside
    train_log.jsonl   the training log
    checkpoints/      resumable state while the stage runs, tagged with the config hash
                      (``checkpoints/config_hash.txt``); removed when the stage is done
    stage.json        the done marker: config hash + the stage's record; written last

Rules, the same for every recipe:

* **Config hash.** :func:`config_hash` over everything that changes what the stage learns; how often
  it checkpoints or logs is not part of it (:data:`NOT_LEARNING`).
* **Done.** A stage is done when ``model/`` and ``stage.json`` exist and the marker's hash is this
  config's: a rerun skips it. Everything (model, dictionary, log) is written before the marker, so a
  kill at any moment leaves either a finished stage or a resumable one, never a half-finished
  "done" stage.
* **Resume, never mix.** A rerun with the same config resumes from the newest checkpoint. State of
  another config (checkpoints, a done marker) is never resumed or reused: it is discarded, and the
  recipe is told so through ``on_note``.
* **Checkpoint by fraction and time.** :class:`CheckpointPolicy` saves after every
  ``checkpoint_every`` of the stage (a fraction < 1 of its steps, or a whole number of steps) and
  whenever ``checkpoint_minutes`` have passed since the last save, so an interrupted run of any
  size loses at most that much.
* **No pickle.** Custom-loop state (:meth:`StageFolder.save_state`) is tensors, numbers and strings,
  written with ``torch.save`` and read back with ``weights_only=True``.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from xlsent.training.processes import is_main_process, wait_for_everyone
from xlsent.utils.io import (Replacing, WriteFailed, atomic_path, check_space, free_space, write_json_atomic,
                             write_text_atomic, writing)

NOT_LEARNING = ("checkpoint_every", "checkpoint_minutes", "logging_steps")
MARKER = "stage.json"
STATE = "state.pt"


def _complete(checkpoint: Path) -> bool:
    try:
        json.loads((checkpoint / "trainer_state.json").read_text())
        return True
    except (OSError, ValueError):
        return False


def learning_optim(optim: dict) -> dict:
    """An ``optim`` section without the keys that change only how often a run saves or logs."""
    return {k: v for k, v in optim.items() if k not in NOT_LEARNING}


# keys added after run folders existed: left out of the hash while off, so those folders stay valid
_OFF_WHEN_EMPTY = ("matryoshka_dims", "matryoshka_weights")
# …and those whose default leaves training as it was (T = 1: the rows as they are)
_OFF_AT_DEFAULT = {"language_temperature": 1.0, "matryoshka_kd": "every"}


# …and keys renamed since, hashed under their old names (the same setting: the same folder)
_HASHED_AS = {"sorted_chunk": "mini_batch_size"}


def _without_device(part: Any) -> Any:
    if isinstance(part, dict):
        return {_HASHED_AS.get(k, k): _without_device(v) for k, v in part.items()
                if k != "device" and not (k in _OFF_WHEN_EMPTY and v in ([], None, ""))
                and not (k in _OFF_AT_DEFAULT and v == _OFF_AT_DEFAULT[k])}
    return part


def config_hash(*parts: Any) -> str:
    """A short, stable hash of JSON-able parts (``optim`` dicts should go through :func:`learning_optim`). A
    ``device`` key is left out: a run checkpointed on one device resumes on another; so is an empty
    ``matryoshka_dims`` / ``matryoshka_weights`` (off: the hash of a run folder made before they existed), a
    ``language_temperature`` of 1 and a ``matryoshka_kd`` of ``every`` (the same); a renamed key (``sorted_chunk``,
    was ``mini_batch_size``) is hashed under its old name, so the run folders made before stay valid."""
    return hashlib.sha1(json.dumps([_without_device(p) for p in parts], sort_keys=True, default=str).encode()
                        ).hexdigest()[:12]


class CheckpointPolicy:
    """When to save: every ``every`` of ``total`` steps (a fraction < 1, or whole steps) or every ``minutes``."""

    def __init__(self, total_steps: int, every: float = 0.2, minutes: float = 10.0):
        self.interval = max(1, math.ceil(total_steps * every)) if every < 1 else max(1, int(every))
        self.seconds = float(minutes) * 60
        self.last = time.monotonic()

    def due(self, step: int) -> bool:
        if step % self.interval == 0 or (self.seconds > 0 and time.monotonic() - self.last >= self.seconds):
            self.last = time.monotonic()
            return True
        return False


class StageFolder:
    """One stage's folder; see the module docstring for the rules it enforces."""

    def __init__(self, path: str | Path, chash: str, name: str = "", on_note: Callable[[str], None] | None = None):
        self.path = Path(path)
        self.hash = chash
        self.name = name or self.path.name
        self.on_note = on_note

    def note(self, text: str, replacing: bool = False) -> None:
        """Say ``text`` through ``on_note``; a line that says something is replaced is a :class:`Replacing` warning
        where nobody listens (Python without ``on_note``): never silent."""
        if self.on_note is not None:
            self.on_note(text)
        elif replacing:
            warnings.warn(f"{self.path}: {text}", Replacing, stacklevel=3)

    @property
    def model_dir(self) -> Path:
        return self.path / "model"

    @property
    def checkpoints(self) -> Path:
        return self.path / "checkpoints"

    def record(self) -> dict | None:
        """The done marker's record when the stage finished with this config, else None."""
        marker = self.path / MARKER
        if (self.model_dir / "modules.json").exists() and marker.exists():
            rec = json.loads(marker.read_text())
            if rec.get("config_hash") == self.hash:
                return rec
        return None

    def skip_if_done(self) -> bool:
        """True (and a note) when the stage finished earlier with this config."""
        if self.record() is not None:
            self.note(f"{self.name}: finished earlier with this config — skipping")
            return True
        return False

    def begin(self) -> None:
        """Prepare to train: discard another config's checkpoints and done marker, tag the checkpoint folder."""
        self.path.mkdir(parents=True, exist_ok=True)
        tag = self.checkpoints / "config_hash.txt"
        if self.checkpoints.exists() and (not tag.exists() or tag.read_text().strip() != self.hash):
            self.note(f"{self.name}: checkpoints of another config found — discarded, starting afresh", True)
            shutil.rmtree(self.checkpoints, ignore_errors=True)
        marker = self.path / MARKER
        if marker.exists() and self.record() is None:
            self.note(f"{self.name}: a finished run of another config is here — it will be replaced", True)
            marker.unlink()
        self.checkpoints.mkdir(parents=True, exist_ok=True)
        write_text_atomic(tag, self.hash)

    def latest_trainer_checkpoint(self) -> str | None:
        """The newest complete Hugging Face trainer checkpoint of this config, if any (the trainer writes its state
        file last: a checkpoint whose state file is missing or cut short was not finished)."""
        cks = [c for c in self.checkpoints.glob("checkpoint-*") if _complete(c)]
        return str(max(cks, key=lambda p: int(p.name.split("-")[-1]))) if cks else None

    @contextmanager
    def checkpointing(self, need: int = 0) -> Iterator[None]:
        """Around a stage's training (the trainer's or the loop's): a checkpoint that could not be written (a full
        disk) is one line that says the run resumes, and what a trainer left half-written is removed. ``need``: the bytes the checkpoints and the model
        take, checked against the free space first."""
        if is_main_process() and need:
            check_space(self.path, need, "the checkpoints and the trained model")
        try:
            with writing(self.checkpoints, "a training checkpoint", need=need or None, resumes=True):
                yield
        except WriteFailed as failed:
            for c in self.checkpoints.glob("checkpoint-*"):
                if not _complete(c):
                    shutil.rmtree(c, ignore_errors=True)
            raise failed.retold(free=free_space(self.checkpoints)) from failed.__cause__

    def save_state(self, state: dict) -> None:
        """Write a custom loop's state (tensors, numbers, strings) atomically."""
        import torch

        with atomic_path(self.checkpoints / STATE, "the training state", resumes=True) as tmp:
            torch.save({"config_hash": self.hash, **state}, tmp)

    def load_state(self) -> dict | None:
        """The custom loop's last state for this config, or None."""
        import torch

        p = self.checkpoints / STATE
        if not p.exists():
            return None
        state = torch.load(p, weights_only=True, map_location="cpu")  # a run saved on a GPU resumes anywhere
        return state if state.get("config_hash") == self.hash else None

    def finish(self, save_model: Callable[[Path], None], log: list[dict], record: dict,
               keep_checkpoints: bool = False) -> dict:
        """Write the model (``save_model(tmp_folder)``: everything it needs inside), the log, then the marker;
        the stage record. Under several processes the main one writes and the others wait, then read its record."""
        if is_main_process():
            with atomic_path(self.model_dir, "the trained model", resumes=True) as tmp:
                save_model(tmp)
            write_text_atomic(self.path / "train_log.jsonl", "".join(json.dumps(e) + "\n" for e in log))
            write_json_atomic(self.path / MARKER, {"config_hash": self.hash, **record})
            if not keep_checkpoints:
                shutil.rmtree(self.checkpoints, ignore_errors=True)
        wait_for_everyone()
        return json.loads((self.path / MARKER).read_text())
