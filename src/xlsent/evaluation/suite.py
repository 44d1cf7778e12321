"""The held-out evaluation every recipe and the demo run, and the one ``metrics.json`` schema.

:func:`evaluate_held_out` runs declared tasks (:mod:`xlsent.evaluation.tasks`, the runner of ``xlsent eval run``)
for each encoder on a recipe's ``eval`` pool — ``retrieval:POOL`` (both ways, bootstrap CIs), ``triplet:POOL``,
``mse:POOL`` against the teacher where one is given and widths agree, and optionally ``retrieval:UDHR_POOL`` (the
47 bundled UDHR languages, or another UDHR set) — and returns a :class:`HeldOut`. Test data is only reported,
never used to choose anything.

``metrics.json`` (schema ``xlsent.metrics/2``, written by ``xlsent train`` and ``xlsent demo``; ``xlsent.metrics/1`` had no
``main_scores`` and is still read)::

    {"schema": "xlsent.metrics/2",
     "recipe": "siamese",                        # the recipe that trained the model
     "eval_pool": {"pairs": "bible-en-ny:test", "n": 1000, "sample_seed": 0},
     "models": {                                 # one entry per model compared, base first
        "<name>": {"retrieval": {src2tgt/tgt2src: {p@1, p@5, p@10, ci95}, ...},
                   "triplets": {...},            # held-out triplet accuracy
                   "mse": {...},                 # only with a teacher of the same width
                   "udhr": {"mean": {...}, "languages": [...], "summary"?},   # only with eval.udhr
                   "spans": {src2tgt/tgt2src: {p@1, ci95}, by_type, ...},  # only the SCP recipe
                   "tagging": {task, sentences, micro_f1|accuracy: {value, ci95}, per_label, ...},  # tagger
                   "choice": {accuracy, ci95, n},  # title selection (multiple choice)
                   "main_scores": {"retrieval:bible-en-ny:test": 0.93, …}}},  # each task's main score, as
                                                                              # xlsent eval run gives it
     "run": {...}}                               # recipe extras: data notes, train log, sizes, stages

A token tagger or a title selector is scored on its task alone (``tagging`` / ``choice``), not on sentence
retrieval; its ``eval_pool`` names the test file and whether its labels are gold, silver or the user's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SCHEMA = "xlsent.metrics/2"
READS = ("xlsent.metrics/1", SCHEMA)
#: the eval pool's first pairs whose vectors each model's result keeps for a report's plot (``HeldOut.plot_vectors``)
PLOTTED_PAIRS = 300


@dataclass
class ModelMetrics:
    retrieval: dict | None = None
    triplets: dict | None = None
    mse: dict | None = None
    udhr: dict | None = None
    spans: dict | None = None  # structural-span retrieval (the SCP recipe's report)
    tagging: dict | None = None  # NER entity F1 / POS accuracy (the tagger recipe)
    choice: dict | None = None  # multiple-choice accuracy (the title-selection recipe)
    main_scores: dict | None = None  # task name → its main score (xlsent.evaluation.tasks)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class HeldOut:
    """Held-out metrics of several models on one pool (the typed form of ``metrics.json``)."""

    eval_pool: dict
    models: dict[str, ModelMetrics] = field(default_factory=dict)
    recipe: str = ""
    run: dict = field(default_factory=dict)
    #: each model's vectors of the eval pool's first :data:`PLOTTED_PAIRS` pairs, ``(source side, target side)``:
    #: what a report plots, taken from the vectors the evaluation made (nothing encoded again); not saved
    plot_vectors: dict = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> dict:
        return {"schema": SCHEMA, "recipe": self.recipe, "eval_pool": self.eval_pool,
                "models": {n: m.to_dict() for n, m in self.models.items()}, "run": self.run}

    @classmethod
    def from_dict(cls, d: dict) -> "HeldOut":
        if d.get("schema") not in READS:
            raise ValueError(f"not an xlsent metrics file ({', '.join(READS)}; schema {d.get('schema')!r})")
        return cls(d["eval_pool"], {n: ModelMetrics(**m) for n, m in d["models"].items()}, d.get("recipe", ""),
                   d.get("run", {}))


def evaluate_held_out(encoders: dict, e: dict, teacher=None, seed: int = 0, on_note=None) -> HeldOut:
    """Held-out retrieval (both directions), triplet accuracy and MSE to the teacher for each encoder, each a
    declared task run by :func:`xlsent.evaluation.tasks.run_tasks`.

    ``encoders`` maps a report name to a :class:`~xlsent.encoding.encoder.TextEncoder` (a gloss
    model's encoder glosses the non-English side itself); ``teacher`` is the teacher's encoder.
    ``e`` is the recipe's ``eval`` section: ``pairs``, ``sample``, ``similarity``, ``udhr`` (also
    score the bundled UDHR pools), ``udhr_pool`` (``udhr``, the 47 reported languages, or ``udhr-dev``, the 24
    development ones — for choosing a setting; ``udhr-all:dev`` / ``udhr-all:test``, every declaration, split by
    language). Each UDHR language's result carries its script and the model tokenizer's pieces per word and
    unknown-piece rate; over ``udhr-all`` a ``summary`` groups the languages by them
    (:mod:`xlsent.evaluation.languages`). Held-out triplets take their negative from another section
    of the same document where the pool has sections (Bible, UDHR, JSONL doc/section), else at random.
    """
    from xlsent.evaluation.retrieval import mean_row
    from xlsent.evaluation.tasks import build, run_tasks

    pool, udhr = e["pairs"], e.get("udhr_pool") or "udhr"
    same = {"sample": e["sample"], "seed": seed}
    retrieval: Any
    retrieval, triplet = build([f"retrieval:{pool}", f"triplet:{pool}"], {
        **same, "similarity": e["similarity"], "beside": False, "by_language": False})
    mse = build(f"mse:{pool}", {**same, "teacher": getattr(teacher, "name", "teacher")})[0] if teacher is not None \
        else None
    udhr_task = build(f"retrieval:{udhr}", {"seed": seed, "similarity": e["similarity"], "beside": False})[0] \
        if e.get("udhr") else None  # read once for every model
    out = HeldOut({"pairs": pool, "n": len(retrieval.pools[pool].src), "sample_seed": seed})
    plotted = retrieval.pools[pool]
    plotted_n = min(PLOTTED_PAIRS, len(plotted.src))
    for name, enc in encoders.items():
        if on_note is not None:
            on_note(f"evaluating {name}…")
        tasks = [retrieval, triplet] + ([mse] if mse and enc.dimension == teacher.dimension else [])
        runs = run_tasks(tasks + ([udhr_task] if udhr_task else []), _Given(name, enc, teacher))
        m = ModelMetrics(runs[0].details, runs[1].details, main_scores={r.task: r.main_score for r in runs})
        for r in runs[2:]:
            if r.declaration.type == "mse":
                m.mse = r.details
            else:
                summary = r.details.get("summary") if isinstance(r.details, dict) else None
                m.udhr = {"mean": mean_row(r.results), "languages": [x.to_dict() for x in r.results],
                          **({"summary": summary} if summary else {})}
        out.models[name] = m
        # a memoising encoder (a recipe's) returns the retrieval task's own vectors here
        out.plot_vectors[name] = (enc.encode(plotted.src[:plotted_n], plotted.src_lang or None),
                                  enc.encode(plotted.tgt[:plotted_n], plotted.tgt_lang or None))
    return out


class _Given:
    """The scorer of encoders already made (:class:`xlsent.evaluation.tasks.Scorer`): a recipe's, loaded once."""

    def __init__(self, name: str, enc, teacher):
        self.model, self.enc, self.teacher_enc = name, enc, teacher

    def encoder(self, **options):
        return self.enc

    def teacher(self, name: str):
        return self.teacher_enc

    def sentence_model(self, name=None):
        raise NotImplementedError("a recipe's report scores its encoders only")

    def tagger(self):
        raise NotImplementedError("a recipe's report scores its encoders only")
