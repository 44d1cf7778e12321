"""Moved to :mod:`xlsent.training.trainer` (issue 78: the training engine's path for SentenceTransformer models)
and, for the Matryoshka settings, :mod:`xlsent.losses.matryoshka`; the old names kept for old imports.
``train_stage`` takes the Matryoshka wrapper as ``loss_wrapper=`` (``matryoshka_widths(cfg.loss)``), no longer
the ``matryoshka=`` / ``matryoshka_kd=`` settings: the training layer imports no loss."""

from xlsent.losses.matryoshka import matryoshka_hash_part, matryoshka_setting
from xlsent.training.stage import disk_needed
from xlsent.training.trainer import _policy_callback, _row_lengths, train_stage, training_prompt

__all__ = ["disk_needed", "matryoshka_hash_part", "matryoshka_setting", "train_stage", "training_prompt",
           "_policy_callback", "_row_lengths"]
