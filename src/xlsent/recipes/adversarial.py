"""``xlsent eval adversarial``: train native and transfer taggers per seed, perturb, score (Manafi 2025 §3.1).

For every language pair (L1 training file, L2 training file, L2 test file) and seed, a tagger is
trained in each condition — **native** (L2 train → L2 test) and **transfer** (L1 train → L2 test) —
with the tagger recipe's config (resumable: finished runs are skipped). The test file is perturbed
per condition against that condition's training file ("L1-train" in the paper means the model's own
training file: the native hi→hi P3 drop against the unchanged ar→hi shows it) and every tagger is
scored on the base and each perturbed file; :mod:`xlsent.evaluation.adversarial` computes the
statistics and draws the plot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xlsent.evaluation.adversarial import RunScores, effects, plot_effects
from xlsent.utils.errors import XlsentError, named


@dataclass
class PairSpec:
    """One language pair: the L1 (high-resource) training file, the L2 training and test files, L2's code."""

    name: str
    l1_train: str
    l2_train: str
    l2_test: str
    lang: str


def parse_pair(text: str) -> PairSpec:
    """``NAME=L1_TRAIN,L2_TRAIN,L2_TEST`` (NAME like ``en-ny``: L2's code is the part after the last '-')."""
    from xlsent.utils.errors import XlsentError

    name, eq, files = text.partition("=")
    parts = [x.strip() for x in files.split(",")]
    if not eq or len(parts) != 3 or not all(parts) or "-" not in name:
        raise XlsentError(f"{named('pair', text)}: expected L1-L2=L1_TRAIN,L2_TRAIN,L2_TEST "
                          "(e.g. en-ny=silver-ner:en:train,silver-ner:ny:train,silver-ner:ny:test)")
    return PairSpec(name.strip(), *parts, name.strip().rsplit("-", 1)[1])


def run_adversarial(cfg, pairs: list[PairSpec], seeds: list[int], perturbations: list[str], output, test_sample: int,
                    bootstrap: int = 1000, names=None, places=None, stopwords=None, on_note=None,
                    progress: bool = True) -> dict:
    """Train (or reuse) every tagger, perturb every test file, score all, and return the report (see module doc)."""
    import copy
    import json
    from pathlib import Path

    from xlsent.data.formats.tagging import load_tagged
    from xlsent.data.text.stopwords import read_stopword_file, stopwords_for
    from xlsent.evaluation.tagging import evaluate_tagger, sample_corpus, score
    from xlsent.models.tagger import load_tagger
    from xlsent.perturbations.overlap import entity_overlap
    from xlsent.perturbations.suite import PerturbInputs, perturb, write_perturbed
    from xlsent.recipes.tagger import read_training, scheme_of, train_tagger
    from xlsent.utils.io import write_json_atomic

    note = on_note or (lambda s: None)
    output = Path(output)
    task = cfg.tagger.task
    plans = []  # (pair, condition, seed, cfg, (training corpus, notes))
    tests, inputs = {}, {}
    for pair in pairs:  # read every file before any model loads
        test = sample_corpus(load_tagged(pair.l2_test, scheme_of(cfg), strict=cfg.train.strict, task=task),
                             test_sample, 0)
        tests[pair.name] = test
        target_train = load_tagged(pair.l2_train, scheme_of(cfg), strict=cfg.train.strict, task=task)
        for condition, train_file in (("native", pair.l2_train), ("transfer", pair.l1_train)):
            c = copy.deepcopy(cfg)
            c.train.data = train_file
            training = read_training(c)
            train_c = training[0]
            if stopwords is not None:
                sw, sw_note = read_stopword_file(str(stopwords)), f"stop words: {stopwords}"
            else:
                sw, sw_note = stopwords_for(pair.lang, [*test.tokens, *target_train.tokens])
            inputs[(pair.name, condition)] = PerturbInputs(test, train_c, target_train, names, places, sw, sw_note,
                                                           cfg.models.base, only_o=task == "ner")
            for s in seeds:
                cs = copy.deepcopy(c)
                cs.optim.seed = s
                cs.eval.test = ""
                plans.append((pair, condition, s, cs, training))
    files: dict[tuple[str, str], dict[str, object]] = {}
    overlaps = {}
    for (pname, condition), inp in inputs.items():
        folder = output / pname / condition / "perturbed"
        folder.mkdir(parents=True, exist_ok=True)
        variants = {"base": tests[pname]}
        for p in perturbations:
            out = perturb(p, inp, 0)
            write_perturbed(out, folder / f"{p}.conll", inp, 0)
            variants[p] = out.corpus(str(folder / f"{p}.conll"))
            note(f"{pname} {condition} {p}: {len(out.replacements)} replacement(s) ({folder / (p + '.conll')}.json)")
        files[(pname, condition)] = variants
        if task == "ner":
            overlaps[f"{pname} {condition}"] = entity_overlap(inp.train, tests[pname])
    runs = []
    per_run = []
    for pair, condition, s, c, training in plans:
        run_dir = output / pair.name / condition / f"seed-{s}"
        result = train_tagger(c, run_dir, note, progress, training=training)
        model, tok = load_tagger(result.model_path)
        gold, pred, f1 = {}, {}, {}
        for vname, corpus in files[(pair.name, condition)].items():
            sc = evaluate_tagger(model, tok, corpus, task, 0, 0, c.models.max_seq_length)
            gold[vname], pred[vname] = corpus.tags, sc.predictions
            f1[vname] = sc.main()
        write_json_atomic(run_dir / "adversarial_scores.json", {"pair": pair.name, "condition": condition,
                                                                 "seed": s, "scores": f1})
        runs.append(RunScores(pair.name, condition, s, gold, pred))
        per_run.append({"pair": pair.name, "condition": condition, "seed": s, **f1})
        note(f"{pair.name} {condition} seed {s}: " + ", ".join(f"{k} {v:.3f}" for k, v in f1.items()))
    effs = effects(runs, task, bootstrap)
    base_ci = {}
    for pname, test in tests.items():
        for condition in ("native", "transfer"):
            rs = [r for r in runs if r.pair == pname and r.condition == condition]
            if rs:
                base_ci[f"{pname} {condition}"] = score(task, rs[0].gold["base"], rs[0].pred["base"], bootstrap).metrics
    report = {"schema": "xlsent.adversarial/1", "task": task, "pairs": [p.__dict__ for p in pairs], "seeds": seeds,
              "perturbations": perturbations, "test_sentences": {k: len(v) for k, v in tests.items()},
              "labels": "silver" if any(str(p.l2_test).startswith("silver-") for p in pairs) else "as given",
              "runs": per_run, "effects": [e.to_dict() for e in effs], "overlap": overlaps,
              "base_seed0_ci": base_ci, "config": json.loads(json.dumps(cfg.to_dict()))}
    write_json_atomic(output / "adversarial.json", report)
    plot_effects(effs, output / "adversarial.png", f"{task.upper()} ΔF1 under perturbation "
                 f"({', '.join(p.name for p in pairs)}; {len(seeds)} seed(s); bootstrap 95%)")
    return report


def read_list(path: Path | None, what: str) -> list[str] | None:
    """One entry per line (``#`` comments and blank lines skipped); a clear error for a missing or empty file."""
    if path is None:
        return None
    p = Path(path).expanduser()
    if not p.is_file():
        raise XlsentError(f"{p}: no such {what} file — check the path")
    rows = [x.strip() for x in p.read_text(encoding="utf-8").splitlines() if x.strip() and not x.startswith("#")]
    if not rows:
        raise XlsentError(f"{p}: no {what} in the file — one per line")
    return rows


def read_places(path: Path | None) -> list[list[str]] | None:
    """Place names for P2, one a line, each as its words."""
    rows = read_list(path, "place name")
    return [r.split() for r in rows] if rows else None


def load_inputs(test: str, train: str, target_train: str | None, lang: str, names: Path | None,
                places: Path | None, stopwords: Path | None, model: str, strict: bool = False, sample: int = 0,
                seed: int = 0, need_stopwords: bool = True):
    """Read every file a perturbation (``xlsent perturb``) needs, before any model loads. Stop words are read only
    when ``need_stopwords`` (P4, P5 and P4-random replace context words; P1–P3 only entities)."""
    from xlsent.data.formats.tagging import language_of, load_tagged
    from xlsent.data.text.stopwords import read_stopword_file, stopwords_for
    from xlsent.evaluation.tagging import sample_corpus
    from xlsent.perturbations.suite import PerturbInputs

    test_c = sample_corpus(load_tagged(test, "iob2", strict=strict), sample, seed)
    train_c = load_tagged(train, "iob2", strict=strict)
    tgt_c = load_tagged(target_train, "iob2", strict=strict) if target_train else None
    lang = lang or language_of(test)
    if not need_stopwords:
        sw, note = frozenset(), ""
    elif stopwords is not None:
        sw, note = read_stopword_file(str(stopwords)), f"stop words: {stopwords}"
    else:
        if not lang:
            raise XlsentError("give lang=CODE (for the stop words) or stopwords=FILE")
        sw, note = stopwords_for(lang, [*test_c.tokens, *(tgt_c.tokens if tgt_c else [])])
    return PerturbInputs(test_c, train_c, tgt_c, read_list(names, "given name"), read_places(places), sw, note, model)
