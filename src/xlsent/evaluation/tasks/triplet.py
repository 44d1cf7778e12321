"""The ``triplet`` task type: held-out triplets, the anchor's translation nearer than a negative."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlsent.evaluation.tasks.base import Scorer, TaskType, _lang_tag
from xlsent.evaluation.tasks.options import _chunk_words, _data, _on_bad_lines, _resamples, _sample, _seed, option
from xlsent.evaluation.tasks.result import TaskRun
from xlsent.evaluation.tasks.retrieval import RetrievalTask


def _triplet_file(dataset: str) -> bool:
    """A file of ``anchor<TAB>positive<TAB>negative`` lines (a pairs TSV has two fields a line)."""
    from xlsent.data.formats.readers import read_lines

    p = Path(dataset).expanduser()
    if not p.is_file() or ".jsonl" in p.name:
        return False
    first = next((x for x in read_lines(p)[:50] if x.strip()), "")
    return first.count("\t") == 2


@dataclass
class TripletTask(TaskType):
    """Held-out triplets: the English anchor's translation nearer than a negative — by default another section of
    the same document where the pool has sections (paper 004), else a random one; ``hard``: mined by ``teacher``."""

    type = "triplet"
    main_score = "accuracy"
    measures = "share of triplets whose positive is nearer than the negative (cosine)"
    kind = "pairs"
    user_files = "TRIPLETS (anchor<TAB>positive<TAB>negative) or PAIRS"

    # each option's help is xlsent eval triplet's (xlsent.cli.eval builds its options from these fields)
    sample: int = _sample(help="use this many pairs (of --dataset) or triplets (of --triplets) drawn at random (0 = "
                          "all)")
    seed: int = _seed(help="seed for sampling, negatives and the bootstrap")
    resamples: int = _resamples()
    negatives: str | None = option(None, choices=("section", "random", "hard"), help="for --dataset: section | random "
                                   "| hard (mined by --teacher); default: section where the pool has sections, else "
                                   "random")
    teacher: str = option("minilm-en", help="for --negatives hard: the model that mines them")
    chunk_words: int = _chunk_words()
    on_bad_lines: str = _on_bad_lines()
    triplets: Any = _data()  # a datasets.Dataset: anchor, positive, negative
    pool: Any = _data()
    anchor_lang: str = _data()

    lists_languages = False

    @classmethod
    def has_files(cls, dataset: str) -> bool:
        return _triplet_file(dataset) or RetrievalTask.has_files(dataset)

    def load(self) -> None:
        from xlsent.data.derived.triplets import read_triplets
        from xlsent.data.sets.pairs import load_pairs, other_language, section_keys

        dataset, self.anchor_lang = self.declaration.dataset, ""
        if _triplet_file(dataset):
            ds, report = read_triplets(dataset, self.on_bad_lines)
            self.notes += report.lines()
            if self.sample and self.sample < len(ds):
                ds = ds.shuffle(seed=self.seed).select(range(self.sample))
            self.triplets = ds
            return
        loaded = load_pairs(dataset, on_bad_lines=self.on_bad_lines, dedupe=False, sample=self.sample, seed=self.seed)
        self.notes += loaded.notes()
        self.pool = loaded.dataset
        self.anchor_lang = other_language(self.pool)
        if self.negatives is None:
            self.negatives = "section" if section_keys(self.pool) is not None else "random"
        if self.negatives != "hard":  # hard negatives need the teacher: built when it runs
            self.build()

    def build(self, teacher: Any = None) -> None:
        from xlsent.data.derived.triplets import build_triplets

        self.triplets, report = build_triplets(self.pool, self.negatives or "random", self.seed, teacher=teacher)
        self.notes += report.lines()

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.triplet import evaluate_triplets

        if self.triplets is None:
            self.build(scorer.sentence_model(self.teacher).model)
        t = self.triplets
        r = evaluate_triplets(list(t["anchor"]), list(t["positive"]), list(t["negative"]),
                              scorer.encoder(chunk_words=self.chunk_words),
                              scorer.model, self.declaration.dataset, self.resamples, self.seed,
                              anchor_lang=self.anchor_lang or None)
        figures = {f"{k}_accuracy": float(v.accuracy) for k, v in r.accuracy.items()}
        figures["accuracy"] = figures["cosine_accuracy"]
        tags = [_lang_tag(self.anchor_lang, list(t["anchor"])), _lang_tag("eng", list(t["positive"]))]
        return self.finish(scorer, [self.mteb_row("default", tags, figures, r.to_dict())], [r], r.to_dict())
