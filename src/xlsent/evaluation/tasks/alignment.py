"""The ``alignment`` task type: sentence alignment of document pairs scored against the gold (Vecalign's scorer)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlsent.evaluation.tasks.base import Scorer, TaskType, _tags
from xlsent.evaluation.tasks.options import _data, option
from xlsent.evaluation.tasks.result import TaskRun
from xlsent.utils.errors import XlsentError


@dataclass
class AlignmentTask(TaskType):
    """Sentence alignment of document pairs with ``xlsent align``'s settings, scored against the gold with
    Vecalign's scorer; or the user's prediction scored against their gold (no model)."""

    type = "alignment"
    main_score = "strict_f1"
    measures = "strict F1 of the aligned blocks (Vecalign's scorer)"
    kind = "alignment"
    user_files = "GOLD,PRED (alignment files, or folders of them matched by name: scores the prediction)"

    max_overlap: int = option(3)
    deletion_quantile: float = option(0.02)
    plain: bool = option(False)
    runs: str = option("mean", choices=("mean", "concat"))
    length_weight: float = option(0.1)
    documents: list = _data()  # xlsent.data.formats.alignment.DocumentPair
    gold: list = _data()
    predicted: list = _data()
    config: Any = _data()

    @property
    def needs_model(self) -> bool:
        return self.predicted is None

    def load(self) -> None:
        from xlsent.aligner.vecalign import AlignConfig
        from xlsent.data.formats.alignment import read_alignment
        from xlsent.data.sets.registry import find, load

        dataset = self.declaration.dataset
        self.config = AlignConfig.of(self.max_overlap, self.deletion_quantile, 5, self.plain, self.runs,
                                     self.length_weight)
        if find(dataset, "alignment") is not None:
            self.documents = load(dataset, "alignment")
            return
        parts = dataset.split(",")
        if len(parts) != 2:
            raise XlsentError(f"alignment:{dataset}: give GOLD,PRED (two files, or two folders)")
        gold, pred = (Path(p).expanduser() for p in parts)
        if gold.is_dir() != pred.is_dir():
            raise XlsentError("gold and pred must both be files or both be folders")
        files = [(gold, pred)]
        if gold.is_dir():
            names = sorted(p.name for p in gold.iterdir() if p.is_file() and not p.name.endswith(".json"))
            missing = [n for n in names if not (pred / n).is_file()]
            if missing:
                raise XlsentError(f"{pred}: no prediction for {missing[0]} (and {len(missing) - 1} more) — files "
                                  "are matched by name")
            files = [(gold / n, pred / n) for n in names]
        self.gold = [read_alignment(g) for g, _ in files]
        self.predicted = [read_alignment(p) for _, p in files]

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.alignment import evaluate_alignment, score_alignments

        if self.predicted is not None:
            s = score_alignments(self.gold, self.predicted)
            details = {"dataset": None, "model": None, **s.to_dict()}
            tags = ["und-Zyyy"]
        else:
            from xlsent.aligner.vecalign import EMBED_BATCH, align_documents

            enc = scorer.encoder(normalize=True, batch_size=EMBED_BATCH)
            s, _ = evaluate_alignment(self.documents, lambda x: align_documents(
                x.src, x.tgt, enc.encode, enc.dimension, self.config, ("en", "ny")))
            details = {"dataset": self.declaration.dataset, "model": scorer.model, **s.to_dict()}
            first = self.documents[:1]
            tags = _tags(self.declaration, [x.src[:50] for x in first] + [x.tgt[:50] for x in first])
        figures = {k: getattr(s, k) for k in ("strict_precision", "strict_recall", "strict_f1", "lax_precision",
                                               "lax_recall", "lax_f1")}
        return self.finish(scorer, [self.mteb_row("default", tags, figures, details)], [s], details)
