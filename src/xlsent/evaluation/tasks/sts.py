"""The ``sts`` task type: Spearman's ρ of the cosine similarity of sentence pairs with their gold scores."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlsent.evaluation.tasks.base import Scorer, TaskType, _lang_tag
from xlsent.evaluation.tasks.options import _chunk_words, _data, _on_bad_lines, _resamples, _seed
from xlsent.evaluation.tasks.result import TaskRun


@dataclass
class StsTask(TaskType):
    type = "sts"
    main_score = "cosine_spearman"
    measures = "Spearman's ρ of cosine similarity with the gold scores"
    user_files = "FILE (sentence1<TAB>sentence2<TAB>score, 0–5)"
    mteb_type = "STS"

    resamples: int = _resamples()
    seed: int = _seed()
    chunk_words: int = _chunk_words()
    on_bad_lines: str = _on_bad_lines()
    sentences1: list[str] = _data()
    sentences2: list[str] = _data()
    gold: list[float] = _data()

    def load(self) -> None:
        from xlsent.data.formats.sts import read_sts

        table, report = read_sts(Path(self.declaration.dataset), self.on_bad_lines)
        self.notes += report.lines()
        self.sentences1, self.sentences2, self.gold = list(table["sentence1"]), list(table["sentence2"]), list(
            table["score"])

    def mteb_data(self, dataset: Any, dataset_dict: Any) -> tuple[dict, dict]:
        return {"default": ["und-Zyyy"]}, {"default": dataset_dict({self.declaration.splits[0]: dataset.from_dict(
            {"sentence1": self.sentences1, "sentence2": self.sentences2, "score": self.gold})})}

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.sts import evaluate_sts

        r = evaluate_sts(self.sentences1, self.sentences2, self.gold, scorer.encoder(chunk_words=self.chunk_words),
                         scorer.model,
                         self.declaration.dataset, self.resamples, self.seed)
        figures = {f"{sim}_{kind}": float(getattr(c, kind)) for sim, c in r.by_similarity.items()
                   for kind in ("spearman", "pearson")}
        row = self.mteb_row("default", [_lang_tag("und", self.sentences1)], figures, r.to_dict())
        return self.finish(scorer, [row], [r], r.to_dict())
