"""The training engine: one place owns training for every recipe and for the export and model layers that train.

**Design.** A recipe reads *build data, build model, train the stage, save*; everything about *how* it trains is
here, once:

* **run folders** (:mod:`~xlsent.training.run_folder`): the config hash, checkpoints by fraction and time
  (:class:`~xlsent.training.run_folder.CheckpointPolicy`), resume (never of another config), the disk a
  checkpoint needs, the model written atomically and the done marker last (:meth:`StageFolder.finish`);
* **a stage's settings** (:mod:`~xlsent.training.stage`): device, precision (``optim.precision``), processes and
  gradient accumulation (the global batch split over them), the disk a stage needs at its peak, the shared AdamW
  with linear warm-up; the processes of a run (:mod:`~xlsent.training.processes`: torchrun / accelerate launch,
  each process's seed);
* **the settings themselves** (:mod:`~xlsent.training.settings`: the ``optim:`` section) and the batches
  (:mod:`~xlsent.training.batching`), priced before the first step (:mod:`~xlsent.training.estimate`).

The engine has two paths, one per kind of model, each a recipe's one call for a stage:

* **SentenceTransformer models** — :func:`xlsent.training.trainer.train_stage` (``train_stage(model, dataset,
  loss, optim, folder, …)``): sentence-transformers' own trainer (the ecosystem's: its samplers, losses, prompts,
  checkpoints), configured from ``optim``; it trains, prices the run, and saves the model with the stage record.
  Used by adapt, multistage, xkd, triplet_kd, gloss. (Was ``xlsent.recipes._trainer``.)
* **other models** (heads over cached features, the tagger, the dual transformer of scp, titles, lightweight
  students, the token aligner of :mod:`xlsent.models.student`) — :func:`xlsent.training.loop.run_loop` (the
  module, its optimiser and schedule, the number of examples and a step function: the loss of a batch) on
  Accelerate, then :func:`xlsent.training.loop.finish_stage` to save.

Both paths check the disk the stage needs before the first step, price the run (the trainer's before its first
step, the loop's after it) and keep the price in the stage record beside the time the run took.

Both paths start from :func:`xlsent.training.stage.stage_settings` and keep their stage in a
:class:`~xlsent.training.run_folder.StageFolder`; what differs is only what each library does for itself (the
trainer its checkpoints' format and its progress bar, Accelerate the loop the recipe's step function runs in).
A loss wrapper such as Matryoshka's widths is handed to the trainer's path by the recipe
(:func:`xlsent.losses.matryoshka.matryoshka_widths`): this layer sits below the losses and models.
"""

from __future__ import annotations

from typing import Any

#: the engine's entries, imported on first use (importing xlsent.training stays cheap)
_ENTRIES = {"train_stage": "xlsent.training.trainer", "run_loop": "xlsent.training.loop",
            "finish_stage": "xlsent.training.loop", "stage_settings": "xlsent.training.stage",
            "StageFolder": "xlsent.training.run_folder", "config_hash": "xlsent.training.run_folder"}

__all__ = sorted(_ENTRIES)


def __getattr__(name: str) -> Any:
    if name in _ENTRIES:
        import importlib

        return getattr(importlib.import_module(_ENTRIES[name]), name)
    raise AttributeError(f"module 'xlsent.training' has no attribute {name!r}")
