"""The ``classification`` task type: zero-shot transfer of a linear classifier trained on the source language."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xlsent.evaluation.tasks.base import Scorer, TaskType, _lang_tag
from xlsent.evaluation.tasks.options import _chunk_words, _data, _resamples, option
from xlsent.evaluation.tasks.result import TaskRun
from xlsent.utils.errors import XlsentError


@dataclass
class ClassificationTask(TaskType):
    """Zero-shot transfer: a linear classifier on source-language vectors, tested on the target language."""

    type = "classification"
    main_score = "accuracy"
    measures = "accuracy of the source-trained classifier on the target language"
    kind = "labelled"
    user_files = "TRAIN,TEST[,TRAIN_TARGET] (label<TAB>text files; train_lang and test_lang name their languages)"
    chooses_on_dev = True

    per_class: int = option(500, low=0)  # bible-genre: verses per class and side (0 = all)
    seeds: int = option(5, low=1)  # validation splits (C chosen on each)
    resamples: int = _resamples()
    train_lang: str = option("")
    test_lang: str = option("")
    chunk_words: int = _chunk_words()
    train: Any = _data()  # xlsent.data.formats.labelled.Labelled
    test: Any = _data()
    train_target: Any = _data()

    def load(self) -> None:
        from xlsent.data.formats.labelled import read_labelled
        from xlsent.data.sets.registry import find, load

        dataset = self.declaration.dataset
        if find(dataset, "labelled") is not None:
            task = load(dataset, "labelled", per_class=self.per_class)
            self.train, self.test, self.train_target = task["train"], task["test"], task["train_target"]
        else:
            files = dataset.split(",")
            if len(files) not in (2, 3):
                raise XlsentError(f"classification:{dataset}: give TRAIN,TEST or TRAIN,TEST,TRAIN_TARGET files")
            self.train, self.test, *rest = (read_labelled(f) for f in files)
            self.train_target = rest[0] if rest else None
            self.train.lang = self.train_lang
            for part in (self.test, self.train_target):
                if part is not None:
                    part.lang = self.test_lang
        tr, te, tt = self.train, self.test, self.train_target
        unseen = sorted(set(te.labels) - set(tr.labels))
        if unseen:
            raise XlsentError(f"{te.source}: label(s) {', '.join(unseen)} never occur in {tr.source} — the "
                              "classifier cannot predict them; give training texts for every test label")
        if len(set(tr.labels)) < 2:
            raise XlsentError(f"{tr.source}: a classifier needs at least 2 labels")
        self.notes.append(f"train {len(tr.texts)} ({tr.source}), test {len(te.texts)} ({te.source})"
                          + (f", in-language train {len(tt.texts)} ({tt.source})" if tt else ""))

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.classify import evaluate_classification

        r = evaluate_classification(scorer.encoder(chunk_words=self.chunk_words), self.train, self.test,
                                    self.train_target, self.seeds, self.resamples)
        t = {"model": scorer.model, "train": self.train.source, "test": self.test.source, **r}
        tags = [_lang_tag(self.train.lang, self.train.texts), _lang_tag(self.test.lang, self.test.texts)]
        figures = {"accuracy": r["transfer"]["accuracy"], "f1": r["transfer"]["macro_f1"]}
        return self.finish(scorer, [self.mteb_row("default", tags, figures, t)], [t], t)
