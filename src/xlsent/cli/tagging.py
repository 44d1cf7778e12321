"""Token-level commands: ``xlsent eval ner`` / ``eval pos`` / ``eval adversarial`` / ``eval titles`` (the tagger and
title selector train as registered recipes: ``xlsent train tagger|titles``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

import typer
from rich.table import Table

from xlsent.api._common import writes
from xlsent.cli.common import at_least, console, main_score_line, output_file, output_folder, show_note, table, with_device
from xlsent.cli.options import JsonOutput, Resamples, TrainDevice, takes
from xlsent.data.formats.conll import SCHEMES
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_json_atomic


def scores_table(rows: list[tuple[str, object]], task: str, title: str) -> Table:
    cols = ("micro_f1", "macro_f1") if task == "ner" else ("accuracy",)
    t = table(title, ("model", *(c.replace("_", " ") + " [95% CI]" for c in cols)))
    for name, s in rows:
        t.add_row(name, *(f"{s.metrics[c]['value']:.3f} [{s.metrics[c]['ci95'][0]:.3f}, {s.metrics[c]['ci95'][1]:.3f}]"
                          if s.metrics[c]["ci95"] else f"{s.metrics[c]['value']:.3f}" for c in cols))
    return t


def per_label_table(s, task: str) -> Table:
    keys = ("precision", "recall", "f1", "support") if task == "ner" else ("accuracy", "support")
    t = table("per label", ("label", *keys))
    for lab, d in s.per_label.items():
        t.add_row(lab, *(str(d[k]) if k == "support" else f"{d[k]:.3f}" for k in keys))
    return t


def _eval(task: str, models: list[str], test: str, sample: int, seed: int, resamples: int, scheme: str | None,
          strict: bool, tag_column: int, max_length: int, output: Path | None, compare: list[str] = ()) -> None:
    from xlsent.api.evaluation import evaluate_taggers
    from xlsent.evaluation.tagging import over_seeds

    output_file(output)
    res = evaluate_taggers(models, test, task, compare=compare, sample=sample, seed=seed, resamples=resamples,
                           scheme=scheme, strict=strict, tag_column=tag_column, max_length=max_length,
                           on_note=show_note)
    from xlsent.evaluation.tasks import TASK_TYPES

    scored, n = res.pop("scored"), len(res.pop("corpus"))
    for name, s in scored:  # each tagger's main score, as every path that runs the task gives it
        main_score_line(TASK_TYPES[task].main_score, float(s.main()), name)
    console.print(scores_table(scored, task, f"{task.upper()} on {test} — {n} sentences, {res['labels']} labels"))
    if len(scored) == 1:
        console.print(per_label_table(scored[0][1], task))
    for label, group in (("--model", scored[: len(models)]), ("--compare", scored[len(models):])):
        if len(group) > 1:
            m, sd = over_seeds([s.main() for _, s in group])
            console.print(f"mean over {len(group)} {label} taggers (seeds): {m:.3f} ± {sd:.3f} (sd)")
    p = res["paired"]
    if p:
        console.print(f"--compare − --model, {'micro F1' if task == 'ner' else 'accuracy'} ×100, seed-averaged: Δ "
                      f"{100 * p['delta']:+.2f} [{100 * p['ci95'][0]:+.2f}, {100 * p['ci95'][1]:+.2f}] (paired "
                      f"bootstrap over {n} sentences, p {p['p']:.3f}); per seed "
                      + ", ".join(f"{100 * x:+.2f}" for x in p["per_seed"]))
    if output is not None:
        write_json_atomic(output, res)
        console.print(f"written: {output}")


_MODEL = typer.Option([], "--model", "-m", help="tagger folder from `xlsent train tagger` (repeat for seeds)")
_SAMPLE = typer.Option(0, help="score a seeded sample of N test sentences (0 = all)")
_SEED = typer.Option(0, help="seed for the sample and the bootstrap")
_SCHEME = typer.Option(None, help="the tag scheme (default: iob2 for NER, plain for POS)")
_STRICT = typer.Option(False, "--strict", help="an I- tag after O is an error instead of a counted repair")
_COL = typer.Option(-1, help="column of the tag (the token is column 0; -1 = the last)")
_MAXLEN = typer.Option(128, help="pieces per sentence (words past it count as missed)")
_COMPARE = typer.Option([], "--compare", help="taggers to compare with the --model ones, seed i against seed i "
                        "(e.g. the same tagger over another encoder): seed-averaged Δ with a paired bootstrap")


@takes("device")
def eval_ner(model: list[str] = _MODEL, test: str = typer.Option(..., "--test", help="CoNLL file or bundled set "
             "(silver-ner:ny:test, gold-ner:ja …)"), sample: int = _SAMPLE, seed: int = _SEED, resamples: Resamples = 1000,
             scheme: Optional[Literal[SCHEMES]] = _SCHEME, strict: bool = _STRICT, tag_column: int = _COL,
             max_length: int = _MAXLEN, output: JsonOutput = None, compare: list[str] = _COMPARE, run: dict = None) -> None:
    """Entity-level micro/macro F1 (seqeval), per-label F1, bootstrap CIs; mean and spread over several models."""
    _eval("ner", model, test, sample, seed, resamples, scheme, strict, tag_column, max_length, output, compare)


@takes("device")
def eval_pos(model: list[str] = _MODEL, test: str = typer.Option(..., "--test", help="CoNLL file or bundled set "
             "(silver-pos:ny:test …)"), sample: int = _SAMPLE, seed: int = _SEED, resamples: Resamples = 1000,
             scheme: Optional[Literal[SCHEMES]] = _SCHEME, tag_column: int = _COL, max_length: int = _MAXLEN,
             output: JsonOutput = None, compare: list[str] = _COMPARE, run: dict = None) -> None:
    """POS accuracy over labelled tokens ('_' = unlabelled is skipped), per-tag accuracy, bootstrap CIs."""
    _eval("pos", model, test, sample, seed, resamples, scheme, False, tag_column, max_length, output, compare)


def effects_table(effs: list[dict], task: str) -> Table:
    metric = "ΔF1" if task == "ner" else "Δacc"
    conds = list(dict.fromkeys(e["condition"] for e in effs))
    t = table(f"Table 3.6-style: mean {metric} (points) and paired tests",
              ("perturbation", *(x for c in conds for x in (f"{c}: t-test p", f"{c}: {metric} [bootstrap 95%]"))))
    for p in dict.fromkeys(e["perturbation"] for e in effs):
        cells = []
        for c in conds:
            e = next((e for e in effs if e["condition"] == c and e["perturbation"] == p), None)
            if e is None:
                cells += ["—", "—"]
                continue
            tp = "—" if e["t_p"] is None else ("< 0.0001" if e["t_p"] < 1e-4 else f"{e['t_p']:.4f}")
            ci = f" [{e['boot_ci'][0]:+.2f}, {e['boot_ci'][1]:+.2f}]" if e["boot_ci"] else ""
            cells += [tp, f"{e['delta']:+.2f}{ci}"]
        t.add_row(p, *cells)
    return t


@writes("output")
def eval_adversarial(
    output: Path = typer.Option(..., "--output", "-o", help="folder: taggers, perturbed files + logs, "
                                "adversarial.json, adversarial.png"),
    pair: list[str] = typer.Option([], "--pair", help="L1-L2=L1_TRAIN,L2_TRAIN,L2_TEST, repeatable (default: "
                                   "en-ny=silver-TASK:en:train,silver-TASK:ny:train,silver-TASK:ny:test)"),
    seeds: int = typer.Option(3, help="training seeds per condition (0..N-1)"),
    perturbations: str = typer.Option(None, help="comma-separated subset of P1,P2,P3,P4,P5,P4-random "
                                      "(default: all for NER, P4,P4-random for POS)"),
    config: Path = typer.Option(None, "--config", "-c", help="tagger config YAML overriding the defaults"),
    set_: list[str] = typer.Option([], "--set", help="tagger config override key=value, repeatable"),
    preset: str = typer.Option(None, "--preset", "-p", help="tagger preset ('paper': every layer, GPU-sized; "
                               "default: the measured CPU setting)"),
    test_sample: int = typer.Option(None, help="test sentences per pair (default: the config's eval.sample; 0 = all)"),
    resamples: Resamples = 1000,
    names: Path = typer.Option(None, help="given names for P1, one per line (default: the L2 training file's PER "
                               "entities)"),
    places: Path = typer.Option(None, help="place names for P2 (default: the L2 training file's LOC entities)"),
    stopwords: Path = typer.Option(None, help="stop words for P4 (default: stopwords-iso, or frequency-derived)"),
    device: TrainDevice = None,
) -> None:
    """Base vs P1–P5 over seeds × {native, transfer} (Manafi 2025 §3.1): mean ΔF1, paired t-test over runs ×
    pairs, paired bootstrap over sentences, Table 3.6-style table and a bar plot."""
    from xlsent.recipes.adversarial import parse_pair, read_list, read_places, run_adversarial
    from xlsent.perturbations.suite import KINDS
    from xlsent.recipes.config import load_config

    output_folder(output)
    at_least(seeds, 1, "--seeds")
    at_least(resamples, 0, "--resamples")
    perts = [p.strip() for p in (perturbations or "").split(",") if p.strip()]
    for p in perts:
        if p not in KINDS:
            raise XlsentError(f"--perturbations: unknown {p!r}: use a comma-separated subset of {', '.join(KINDS)}")
    cfg = load_config("tagger", config, with_device(set_, device), preset or None)
    t = cfg.tagger.task
    specs = [parse_pair(p) for p in pair] or [
        parse_pair(f"en-ny=silver-{t}:en:train,silver-{t}:ny:train,silver-{t}:ny:test")]
    perts = perts or (["P1", "P2", "P3", "P4", "P5", "P4-random"] if t == "ner" else ["P4", "P4-random"])
    if cfg.tagger.task != "ner" and any(p != "P4" and p != "P4-random" for p in perts):
        raise XlsentError("P1, P2, P3 and P5 change entities: with tagger.task=pos use --perturbations P4,P4-random")
    n = cfg.eval.sample if test_sample is None else test_sample
    at_least(n, 0, "--test-sample")
    place_rows = read_places(places)
    from xlsent.recipes.config import dump_config
    from xlsent.utils.io import write_text_atomic

    output.mkdir(parents=True, exist_ok=True)
    write_text_atomic(output / "config.yaml", dump_config(cfg))
    report = run_adversarial(cfg, specs, list(range(seeds)), perts, output, n, resamples,
                             read_list(names, "given name"), place_rows, stopwords, show_note)
    console.print(effects_table(report["effects"], cfg.tagger.task))
    for k, v in report["overlap"].items():
        console.print(f"entity overlap {k}: {100 * v['entity_token_overlap']:.1f}% of test entity tokens, "
                      f"{100 * v['distinct_entities_shared']:.1f}% of distinct test entities")
    console.print(f"labels: {report['labels']}; written: {output / 'adversarial.json'}, {output / 'adversarial.png'}")


@takes("device")
def eval_titles(
    model: str = typer.Option(..., "--model", "-m", help="title selector folder (run folder or its model/)"),
    test: Path = typer.Option(..., "--test", help="text<TAB>gold<TAB>distractor… file"),
    train: Path = typer.Option(None, "--train", help="the model's training file: with it, P4 and its random "
                               "control are applied to the test texts and the word overlap is reported"),
    lang: str = typer.Option("", help="test language code for the stop words of P4"),
    stopwords: Path = typer.Option(None, help="stop words for P4, one per line"),
    embed_model: str = typer.Option("e5-small", help="model that embeds words for P4"),
    seed: int = typer.Option(0, help="seed of the candidates' order, P4-random and the bootstrap"),
    resamples: Resamples = 1000,
    max_length: int = typer.Option(128, help="pieces of section text read"),
    output: JsonOutput = None,
    run: dict = None,
) -> None:
    """Title-selection accuracy with a bootstrap CI; with --train, also under P4 and P4-random (paired bootstrap)
    and the test/train word overlap under the model's tokenizer (Manafi 2025 Table 3.4)."""
    from xlsent.data.formats.multiple_choice import read_choices
    from xlsent.recipes.titles import evaluate_titles

    output_file(output)
    at_least(resamples, 0, "--resamples")
    data = read_choices(test)
    tr = read_choices(train) if train is not None else None
    p = Path(model).expanduser()
    p = p / "model" if (p / "model" / "config.json").exists() else p
    sw: frozenset[str] = frozenset()
    if tr is not None:
        from xlsent.data.text.stopwords import read_stopword_file, stopwords_for

        if stopwords is not None:
            sw = read_stopword_file(str(stopwords))
        else:
            from xlsent.data.derived.projection import tokenize_words

            if not lang:
                raise XlsentError("give --lang CODE (for the stop words of P4) or --stopwords FILE")
            sw, n = stopwords_for(lang, [tokenize_words(t) for t in data.texts])
            show_note(n)
    res = evaluate_titles(p, data, str(test), tr, sw, embed_model, seed, resamples, max_length)
    t = table(f"title selection on {test} ({res.n} examples, {res.n_choices} candidates)",
              ("test set", "accuracy", "Δ vs base [95% CI]", "p"), left=0)
    ci = res.ci95
    t.add_row("base", f"{res.accuracy:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""), "", "")
    for name, e in res.perturbed.items():
        d = e.delta_ci95
        t.add_row(name, f"{e.value:.3f}", f"{e.delta:+.3f}" + (f" [{d[0]:+.3f}, {d[1]:+.3f}]" if d else ""),
                  f"{e.p:.4f}" if e.p is not None else "")
    console.print(t)
    if res.word_overlap is not None:
        console.print(f"word overlap (first {max_length} pieces): {100 * res.word_overlap['piece_overlap']:.1f}% "
                      "of test pieces occur in the training texts")
    if output is not None:
        write_json_atomic(output, res.to_dict())
        console.print(f"written: {output}")
