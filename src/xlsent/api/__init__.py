"""The public Python API: what every ``xlsent`` command calls, importable as ``xlsent.NAME``.

Importing it loads no torch: each function imports what it needs when it is called. Errors a user can fix are
raised as :class:`XlsentError` (and its subclass :class:`InputFormatError` for a malformed file), with the same
one-line message the command prints.

The public names are listed in one place, ``__all__`` below, each imported from the module that defines it:
``xlsent.__all__`` and ``import xlsent``'s lazy names are built from it (:mod:`xlsent`), and so is the API reference
page (``docs/reference/api.md`` renders this module's ``__all__``, in its order).
"""

from __future__ import annotations

from xlsent.api.alignment import AlignedBlock, align
from xlsent.api.bootstrapping import bootstrap
from xlsent.api.data import Identification, identify
from xlsent.api.embedding import EmbedFileResult, embed, embed_file
from xlsent.api.evaluation import Evaluation, evaluate, evaluate_tasks
from xlsent.api.exporting import ExportResult, export
from xlsent.api.mining import filter_pairs, mine
from xlsent.api.models import calibrate, extend_vocab, load, romanize
from xlsent.api.training import CurveResult, RunResult, adapt, learning_curve, train
from xlsent.utils.errors import InputFormatError, XlsentError

# the public names, in the reference's order: the functions, the results they return, the errors
__all__ = ["load", "embed", "embed_file", "evaluate", "evaluate_tasks", "adapt", "learning_curve", "bootstrap", "train",
           "mine", "filter_pairs", "align", "export", "calibrate", "extend_vocab", "romanize", "identify",
           "Evaluation", "RunResult", "CurveResult", "AlignedBlock", "EmbedFileResult", "ExportResult", "Identification",
           "XlsentError", "InputFormatError"]
