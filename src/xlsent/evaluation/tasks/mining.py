"""The ``mining`` task type: BUCC-style mining of a comparable corpus, its threshold chosen on dev."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlsent.evaluation.tasks.base import Scorer, TaskType, _lang_tag
from xlsent.evaluation.tasks.options import _data, _seed, option
from xlsent.evaluation.tasks.result import TaskRun
from xlsent.mining.margin import MARGINS, MODES
from xlsent.mining.store import DTYPES
from xlsent.utils.errors import XlsentError


@dataclass
class MiningTask(TaskType):
    """A BUCC-style comparable corpus: the threshold is chosen on ``dev``, the figure is ``test``'s (with
    ``xlsent mine``'s settings: ``mode``, ``margin``, ``k``, ``center``, ``precision``)."""

    type = "mining"
    main_score = "f1"
    measures = "BUCC F1 of the mined pairs at the threshold chosen on dev"
    kind = "mining"
    user_files = "DEV,TEST (BUCC prefixes: PREFIX.SRC, PREFIX.TGT, PREFIX.gold; give src_lang and tgt_lang)"
    one_language = True
    chooses_on_dev = True

    # each option's help is xlsent eval mining's (xlsent.cli.eval builds its options from these fields)
    n_gold: int = option(1000, low=1, help="bible: gold pairs per split")  # bundled corpora
    n_distractors: int = option(7000, low=0, help="bible / udhr: unrelated sentences per side")
    mode: str = option("max", choices=MODES)
    margin: str = option("ratio", choices=MARGINS, help="ratio | distance | absolute")
    k: int = option(4, low=1)
    center: bool = option(False, help="per-language centering: subtract each side's mean vector before search and "
                          "margins (as xlsent mine --center)")
    precision: str = option("float16", choices=DTYPES, help="how the embeddings are stored and searched, as xlsent "
                            "mine --precision")
    seed: int = _seed(help="seed of the bundled corpora")
    src_lang: str = option("", help="source suffix of the BUCC files (e.g. de)")
    tgt_lang: str = option("", help="target suffix of the BUCC files (e.g. en)")
    dev: Any = _data()  # xlsent.data.formats.comparable.ComparableCorpus
    test: Any = _data()

    @classmethod
    def has_files(cls, dataset: str) -> bool:
        parts = [Path(p).expanduser() for p in dataset.split(",")]
        return len(parts) == 2 and all(any(p.parent.glob(p.name + ".*")) for p in parts)

    def load(self) -> None:
        from xlsent.data.formats.comparable import read_bucc
        from xlsent.data.sets.registry import find, load

        dataset = self.declaration.dataset
        if find(dataset, "mining") is not None:
            self.dev, self.test = load(dataset, "mining", n_gold=self.n_gold, n_distractors=self.n_distractors,
                                       seed=self.seed)
            return
        if not (self.src_lang and self.tgt_lang):
            raise XlsentError("BUCC files need src_lang and tgt_lang (the files' suffixes, e.g. de and en)")
        self.dev, self.test = (read_bucc(p, self.src_lang, self.tgt_lang) for p in dataset.split(","))

    def run(self, scorer: Scorer) -> TaskRun:
        from xlsent.evaluation.mining import evaluate_mining
        from xlsent.mining.job import MineConfig

        cfg = MineConfig(k=self.k, mode=self.mode, margin=self.margin, center=self.center, dtype=self.precision)
        r = evaluate_mining(scorer.encoder(), self.dev, self.test, cfg, scorer.model)
        t = r.test
        figures = {"precision": t.precision, "recall": t.recall, "f1": t.f1, "top1_gold_sources": r.top1_gold_sources}
        tags = [_lang_tag(self.test.src_lang, [x for _, x in self.test.src]),
                _lang_tag(self.test.tgt_lang, [x for _, x in self.test.tgt])]
        return self.finish(scorer, [self.mteb_row("default", tags, figures, r.to_dict())], [r], r.to_dict())
