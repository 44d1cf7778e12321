"""The ``spans`` task type: structural-span retrieval (what the SCP recipe trains)."""

from __future__ import annotations

from dataclasses import dataclass

from xlsent.evaluation.tasks.base import Scorer, TaskType, _tags
from xlsent.evaluation.tasks.options import _data, _resamples, _sample, _seed, option
from xlsent.evaluation.tasks.result import TaskRun


@dataclass
class SpansTask(TaskType):
    """Structural-span retrieval (what the SCP recipe trains): each English span (subject, verb, object, entity)
    finds its aligned span among every span of the pool, and back (Chen et al. 2023, Eq. 4)."""

    type = "spans"
    main_score = "p@1"
    measures = "structural-span P@1, mean of both directions"
    kind = "spans"
    user_files = "SPANS (a file of xlsent data structural-words)"

    sample: int = _sample(1000)  # pairs of the pool (0 = all)
    seed: int = _seed()
    max_length: int = option(128, low=8)  # pieces per sentence (spans past it are left out and counted)
    resamples: int = _resamples()
    records: list[dict] = _data()

    def load(self) -> None:
        from xlsent.data.derived.structural import read_spans
        from xlsent.evaluation.spans import sample_records

        records, _ = read_spans(self.declaration.dataset)
        self.records = sample_records(records, self.sample, self.seed)

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.spans import span_retrieval

        handle = scorer.sentence_model()
        r = span_retrieval(handle.model, handle.prompt, self.records, self.max_length, bootstrap=self.resamples,
                           seed=self.seed, name=scorer.model)
        main = (r.src2tgt.p_at_1 + r.tgt2src.p_at_1) / 2
        figures = {"p@1": main, "src2tgt_p@1": r.src2tgt.p_at_1, "tgt2src_p@1": r.tgt2src.p_at_1}
        tags = _tags(self.declaration, [[x["src"] for x in self.records[:50]], [x["tgt"] for x in self.records[:50]]])
        return self.finish(scorer, [self.mteb_row("default", tags, figures, r.to_dict())], [r], r.to_dict())
