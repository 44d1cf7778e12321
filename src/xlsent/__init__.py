"""xlsent: cross-lingual sentence embeddings for low-resource languages.

The public API (:mod:`xlsent.api`) is importable from here — ``xlsent.load``, ``xlsent.embed``,
``xlsent.evaluate``, ``xlsent.evaluate_tasks``, ``xlsent.adapt``, ``xlsent.learning_curve``, ``xlsent.bootstrap``, ``xlsent.train``, ``xlsent.mine``, ``xlsent.align``, ``xlsent.filter_pairs``,
``xlsent.export``, ``xlsent.calibrate``, ``xlsent.extend_vocab``, ``xlsent.romanize``, ``xlsent.identify`` — and is imported on first use, so ``import xlsent`` stays fast and loads
no torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["load", "embed", "embed_file", "evaluate", "evaluate_tasks", "adapt", "learning_curve", "bootstrap", "train", "mine", "filter_pairs", "align", "export",
           "calibrate", "extend_vocab", "romanize", "identify",
           "Evaluation", "RunResult", "CurveResult", "AlignedBlock", "EmbedFileResult", "ExportResult", "Identification",
           "XlsentError", "InputFormatError", "__version__"]

if TYPE_CHECKING:  # for type checkers and editors; at run time the names come from __getattr__
    from xlsent.api import (AlignedBlock, CurveResult, EmbedFileResult, Evaluation, ExportResult, Identification,
                            InputFormatError, RunResult, XlsentError, adapt, align, bootstrap, calibrate, embed, embed_file,
                            evaluate, evaluate_tasks, export, extend_vocab, filter_pairs, identify, learning_curve,
                            load, mine, romanize, train)


def __getattr__(name: str) -> Any:
    if name in __all__:
        import xlsent.api as api

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'xlsent' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
