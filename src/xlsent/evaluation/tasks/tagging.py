"""The ``ner`` and ``pos`` task types: a token tagger on a CoNLL set (entity micro-F1, token accuracy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xlsent.evaluation.tasks.base import Scorer, TaskType, _tags
from xlsent.evaluation.tasks.options import _data, _resamples, _sample, _seed, option
from xlsent.evaluation.tasks.result import TaskRun


@dataclass
class NerTask(TaskType):
    """A token tagger (``xlsent train tagger``) on a CoNLL set: the scorer's model is the tagger's folder."""

    type = "ner"
    main_score = "micro_f1"
    measures = "entity micro-F1 (seqeval-style spans)"
    kind = "tagged"
    user_files = "CONLL (token … tag a line, a blank line between sentences)"

    sample: int = _sample()  # sentences (0 = all)
    seed: int = _seed()
    resamples: int = _resamples()
    scheme: str | None = option(None, choices=("iob2", "iob1", "plain"))  # default: iob2 for NER, plain for POS
    strict: bool = option(False)  # an I- tag after O is an error instead of a counted repair
    tag_column: int = option(-1)
    max_length: int = option(128, low=8)
    corpus: Any = _data()  # xlsent.data.formats.tagging.TaggedCorpus

    @classmethod
    def accepts(cls, entry) -> bool:
        return entry.name.split(":")[0].endswith(cls.type)

    def load(self) -> None:
        from xlsent.data.formats.tagging import load_tagged
        from xlsent.evaluation.tagging import sample_corpus

        scheme: Any = self.scheme  # checked against the schemes (option choices)
        self.corpus = sample_corpus(load_tagged(self.declaration.dataset, scheme, self.tag_column, self.strict,
                                                task=self.type), self.sample, self.seed)
        self.notes += self.corpus.notes

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.tagging import evaluate_tagger

        model, tok = scorer.tagger()
        s = evaluate_tagger(model, tok, self.corpus, self.type, self.resamples, self.seed, self.max_length)
        main = float(s.main())
        tags = _tags(self.declaration, [[" ".join(t) for t in self.corpus.tokens[:50]]])
        return self.finish(scorer, [self.mteb_row("default", tags, {self.main_score: main}, s.to_dict())], [s],
                           s.to_dict())


@dataclass
class PosTask(NerTask):
    type = "pos"
    main_score = "accuracy"
    measures = "token accuracy"
