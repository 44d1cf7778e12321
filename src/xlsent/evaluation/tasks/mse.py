"""The ``mse`` task type: the distance of the model's vectors to a teacher's (the smallest type: docs/contributing.md
works through it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xlsent.evaluation.tasks.base import Scorer, TaskType, _lang_tag
from xlsent.evaluation.tasks.options import _chunk_words, _data, _on_bad_lines, _sample, _seed, option
from xlsent.evaluation.tasks.result import TaskRun
from xlsent.evaluation.tasks.retrieval import RetrievalTask


@dataclass
class MseTask(TaskType):
    """Distance to a teacher: the model's vectors of both sides against the teacher's of the English side."""

    type = "mse"
    main_score = "negative_mse"
    measures = "−MSE×100 between the model's vectors of the other language and the teacher's of the English"
    kind = "pairs"
    user_files = "PAIRS (English on one side)"

    teacher: str = option("minilm-en")
    sample: int = _sample(1000)
    seed: int = _seed()
    chunk_words: int = _chunk_words()
    on_bad_lines: str = _on_bad_lines()
    english: list[str] = _data()
    other: list[str] = _data()
    other_lang: str = _data()

    lists_languages = False

    @classmethod
    def has_files(cls, dataset: str) -> bool:
        return RetrievalTask.has_files(dataset)

    def load(self) -> None:
        from xlsent.data.sets.pairs import english_side, load_pairs, other_language

        loaded = load_pairs(self.declaration.dataset, on_bad_lines=self.on_bad_lines, dedupe=False,
                            sample=self.sample, seed=self.seed)
        self.notes += loaded.notes()
        pool: Any = loaded.dataset
        other_col, en_col = english_side(pool)
        self.english, self.other = list(pool[en_col]), list(pool[other_col])
        self.other_lang = other_language(pool, other_col)

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.mse import evaluate_mse

        r = evaluate_mse(self.english, self.other, scorer.encoder(chunk_words=self.chunk_words),
                         scorer.teacher(self.teacher), scorer.model, self.teacher, self.declaration.dataset,
                         tgt_lang=self.other_lang or None)
        main = -100 * float(r.mse_tgt)
        tags = [_lang_tag("eng", self.english), _lang_tag(self.other_lang, self.other)]
        return self.finish(scorer, [self.mteb_row("default", tags, {"negative_mse": main}, r.to_dict())], [r],
                           r.to_dict())
