"""Cross-lingual triplets (anchor, positive, negative) for triplet distillation (Manafi 2025, §3.2.1).

* **anchor** — the low-resource sentence; **positive** — its English translation;
  **negative** — an English sentence that is not the translation, chosen by one of:

  - ``random``: any other pair's English side (seeded);
  - ``section``: an English sentence from *another section of the same document* (the
    paper's choice: another section of the same Wikipedia page). Bundled data: another
    chapter of the same Bible book; another article of the same UDHR declaration. Other
    corpora: the ``doc`` and ``section`` fields of a JSONL file. A document with a single
    section falls back to ``random`` and is counted;
  - ``hard``: the English sentence most similar to the positive under the teacher,
    mined with sentence-transformers' :func:`~sentence_transformers.util.mine_hard_negatives`
    (``relative_margin`` keeps near-paraphrases out; pairs it finds no negative for are
    counted and fall back to ``random``).

  A negative never has the positive's text.
* :func:`read_triplets` reads a user's ``anchor<TAB>positive<TAB>negative`` file (optional
  header line ``anchor<TAB>positive<TAB>negative``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from xlsent.data.formats.readers import read_fields
from xlsent.data.sets.pairs import english_side, section_keys
from xlsent.utils.errors import InputFormatError, XlsentError

STRATEGIES = ("random", "section", "hard")
TRIPLET_COLUMNS = ("anchor", "positive", "negative")


@dataclass
class TripletReport:
    strategy: str
    rows: int = 0
    fallbacks: dict[str, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        out = [f"triplets: {self.rows} built with '{self.strategy}' negatives"]
        out += [f"triplets: {n} negative(s) drawn at random instead, because {why}" for why, n in self.fallbacks.items() if n]
        return out


def _random_other(i: int, positives: list[str], rng: np.random.Generator) -> int:
    n = len(positives)
    for _ in range(100):
        j = int(rng.integers(n))
        if j != i and positives[j] != positives[i]:
            return j
    raise XlsentError("cannot draw a negative: every English sentence in the corpus is the same text")


def build_triplets(ds, strategy: str = "section", seed: int = 0, teacher=None, anchor_column: str | None = None,
                   relative_margin: float = 0.05):
    """``datasets.Dataset`` with columns anchor, positive, negative (+ ``id`` when present) and a :class:`TripletReport`."""
    from datasets import Dataset

    if strategy not in STRATEGIES:
        raise XlsentError(f"unknown negative strategy '{strategy}' — choose one of {', '.join(STRATEGIES)}")
    if len(ds) < 2:
        raise XlsentError(f"need at least 2 pairs to build triplets, got {len(ds)}")
    a_col, p_col = (anchor_column, "src" if anchor_column == "tgt" else "tgt") if anchor_column else english_side(ds)
    anchors, positives = list(ds[a_col]), list(ds[p_col])
    rng = np.random.default_rng(seed)
    report = TripletReport(strategy, len(ds))
    neg = np.full(len(ds), -1, dtype=np.int64)

    if strategy == "section":
        keys = section_keys(ds)
        if keys is None:
            raise XlsentError(
                "negatives.strategy=section needs document structure: Bible rows (book, chapter), UDHR rows, or JSONL "
                "fields 'doc' and 'section' — add them or use negatives.strategy=random or hard"
            )
        by_doc: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for i, (d, s) in enumerate(keys):
            by_doc[d][s].append(i)
        single = 0
        for i, (d, s) in enumerate(keys):
            others = [j for sec, rows in by_doc[d].items() if sec != s for j in rows]
            if others:
                for _ in range(100):
                    j = others[int(rng.integers(len(others)))]
                    if positives[j] != positives[i]:
                        neg[i] = j
                        break
            if neg[i] < 0:
                single += 1
        report.fallbacks["the document has no other section (or only copies of the positive)"] = single
    elif strategy == "hard":
        if teacher is None:
            raise XlsentError("negatives.strategy=hard needs the teacher model to mine with")
        from sentence_transformers.util import mine_hard_negatives

        uniq = list(dict.fromkeys(positives))
        mined = mine_hard_negatives(
            Dataset.from_dict({"query": uniq, "positive": uniq}), teacher, corpus=uniq, num_negatives=1,
            relative_margin=relative_margin, sampling_strategy="top", output_format="triplet", verbose=False,
            batch_size=64,
        )
        index = {t: k for k, t in enumerate(positives)}
        best = dict(zip(mined["query"], mined["negative"]))
        missing = 0
        for i, p in enumerate(positives):
            if p in best:
                neg[i] = index[best[p]]
            else:
                missing += 1
        report.fallbacks[f"the teacher found no candidate below the relative margin {relative_margin}"] = missing
    for i in np.flatnonzero(neg < 0):
        neg[i] = _random_other(int(i), positives, rng)
    cols = {"anchor": anchors, "positive": positives, "negative": [positives[j] for j in neg]}
    if "id" in ds.column_names:
        cols["id"] = list(ds["id"])
    return Dataset.from_dict(cols), report


def read_triplets(path: str | Path, on_bad_lines: str = "error"):
    """Read ``anchor<TAB>positive<TAB>negative`` lines into a Dataset; bad lines error (or are skipped and counted)."""
    from datasets import Dataset

    path = Path(path)
    fix = "write each triplet as anchor<TAB>positive<TAB>negative"
    cols, report = read_fields(path, TRIPLET_COLUMNS, on_bad_lines, fix, (TRIPLET_COLUMNS,))
    if not cols["anchor"]:
        raise InputFormatError(path, None, "no valid triplets", fix)
    return Dataset.from_dict(cols), report
