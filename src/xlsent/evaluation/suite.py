"""The held-out evaluation every recipe and the demo run, and the one ``metrics.json`` schema.

:func:`evaluate_held_out` scores each encoder on a recipe's ``eval`` pool — retrieval both ways
with bootstrap CIs, triplet accuracy, MSE to the teacher where one is given and widths agree, and
optionally the 47 bundled UDHR languages — and returns a :class:`HeldOut`. Test data is only
reported, never used to choose anything.

``metrics.json`` (schema ``xlsent.metrics/1``, written by ``xlsent train`` and ``xlsent demo``)::

    {"schema": "xlsent.metrics/1",
     "recipe": "siamese",                        # the recipe that trained the model
     "eval_pool": {"pairs": "bible-en-ny:test", "n": 1000, "sample_seed": 0},
     "models": {                                 # one entry per model compared, base first
        "<name>": {"retrieval": {src2tgt/tgt2src: {p@1, p@5, p@10, ci95}, ...},
                   "triplets": {...},            # held-out triplet accuracy
                   "mse": {...},                 # only with a teacher of the same width
                   "udhr": {"mean": {...}, "languages": [...], "summary"?},   # only with eval.udhr
                   "spans": {src2tgt/tgt2src: {p@1, ci95}, by_type, ...},  # only the SCP recipe
                   "tagging": {task, sentences, micro_f1|accuracy: {value, ci95}, per_label, ...},  # tagger
                   "choice": {accuracy, ci95, n}}},  # title selection (multiple choice)
     "run": {...}}                               # recipe extras: data notes, train log, sizes, stages

A token tagger or a title selector is scored on its task alone (``tagging`` / ``choice``), not on sentence
retrieval; its ``eval_pool`` names the test file and whether its labels are gold, silver or the user's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SCHEMA = "xlsent.metrics/1"


@dataclass
class ModelMetrics:
    retrieval: dict | None = None
    triplets: dict | None = None
    mse: dict | None = None
    udhr: dict | None = None
    spans: dict | None = None  # structural-span retrieval (the SCP recipe's report)
    tagging: dict | None = None  # NER entity F1 / POS accuracy (the tagger recipe)
    choice: dict | None = None  # multiple-choice accuracy (the title-selection recipe)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class HeldOut:
    """Held-out metrics of several models on one pool (the typed form of ``metrics.json``)."""

    eval_pool: dict
    models: dict[str, ModelMetrics] = field(default_factory=dict)
    recipe: str = ""
    run: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"schema": SCHEMA, "recipe": self.recipe, "eval_pool": self.eval_pool,
                "models": {n: m.to_dict() for n, m in self.models.items()}, "run": self.run}

    @classmethod
    def from_dict(cls, d: dict) -> "HeldOut":
        if d.get("schema") != SCHEMA:
            raise ValueError(f"not an {SCHEMA} metrics file (schema {d.get('schema')!r})")
        return cls(d["eval_pool"], {n: ModelMetrics(**m) for n, m in d["models"].items()}, d.get("recipe", ""),
                   d.get("run", {}))


def evaluate_held_out(encoders: dict, e: dict, teacher=None, seed: int = 0, on_note=None) -> HeldOut:
    """Held-out retrieval (both directions), triplet accuracy and MSE to the teacher for each encoder.

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
    from xlsent.data.bundled import bundled_spec, load_bundled, split_by_language
    from xlsent.data.pairs import english_side, load_pairs, section_keys, side_langs
    from xlsent.data.triplets import build_triplets
    from xlsent.evaluation.languages import profile_languages, summarize
    from xlsent.evaluation.mse import evaluate_mse
    from xlsent.evaluation.retrieval import Pool, evaluate_many, evaluate_retrieval, mean_row
    from xlsent.evaluation.triplet import evaluate_triplets

    held = load_pairs(e["pairs"], dedupe=False, sample=e["sample"], seed=seed).dataset
    other_col, en_col = english_side(held)
    src, tgt = list(held["src"]), list(held["tgt"])
    sl, tl = side_langs(held)
    other_lang = sl if other_col == "src" else tl
    # paper 004's negatives (another section of the same document) where the pool has sections
    trip, _ = build_triplets(held, "section" if section_keys(held) is not None else "random", seed)
    out = HeldOut({"pairs": e["pairs"], "n": len(src), "sample_seed": seed})
    udhr = None
    pool = e.get("udhr_pool") or "udhr"
    if e.get("udhr"):  # read once for every model
        udhr = {k: Pool(list(p["src"]), list(p["tgt"]), p["src_lang"][0], p["tgt_lang"][0])
                for k, p in split_by_language(load_bundled(pool)).items()}
    for name, enc in encoders.items():
        if on_note is not None:
            on_note(f"evaluating {name}…")
        m = ModelMetrics(
            evaluate_retrieval(src, tgt, enc, name, e["similarity"], dataset=e["pairs"], src_lang=sl,
                               tgt_lang=tl).to_dict(),
            evaluate_triplets(trip["anchor"], trip["positive"], trip["negative"], enc, name, e["pairs"],
                              anchor_lang=other_lang or None).to_dict())
        if teacher is not None and enc.dimension == teacher.dimension:
            m.mse = evaluate_mse(list(held[en_col]), list(held[other_col]), enc, teacher, name,
                                 dataset=e["pairs"], tgt_lang=other_lang or None).to_dict()
        if udhr is not None:
            res = evaluate_many(udhr, enc, name, e["similarity"], 1000, seed, 4, pool)
            profile_languages(res, udhr, enc)
            m.udhr = {"mean": mean_row(res), "languages": [x.to_dict() for x in res]}
            if bundled_spec(pool).summary:
                m.udhr["summary"] = summarize(res)
        out.models[name] = m
    return out
