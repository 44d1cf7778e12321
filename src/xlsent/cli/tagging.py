"""Token-level commands: ``xlsent eval ner`` / ``eval pos`` / ``eval adversarial`` / ``eval titles`` (the tagger and
title selector train as registered recipes: ``xlsent train tagger|titles``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

import typer
from rich.table import Table

from xlsent.cli.common import console, main_score_line, output_file, show_note, table, with_device
from xlsent.api.evaluation import ADVERSARIAL, TITLES
from xlsent.cli.options import JsonOutput, Resamples, TrainDevice, declared, takes
from xlsent.data.formats.conll import SCHEMES
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


def eval_adversarial(
    output: Path = declared(ADVERSARIAL["output"], "--output", "-o"),
    pair: list[str] = declared(ADVERSARIAL["pairs"], "--pair"),
    seeds: int = declared(ADVERSARIAL["seeds"]),
    perturbations: str = declared(ADVERSARIAL["perturbations"]),
    config: Path = declared(ADVERSARIAL["config"], "--config", "-c"),
    set_: list[str] = declared(ADVERSARIAL["settings"], "--set"),
    preset: str = declared(ADVERSARIAL["preset"], "--preset", "-p"),
    test_sample: int = declared(ADVERSARIAL["test_sample"]),
    resamples: Resamples = 1000,
    names: Path = declared(ADVERSARIAL["names"]),
    places: Path = declared(ADVERSARIAL["places"]),
    stopwords: Path = declared(ADVERSARIAL["stopwords"]),
    device: TrainDevice = None,
) -> None:
    """Base vs P1–P5 over seeds × {native, transfer} (Manafi 2025 §3.1): mean ΔF1, paired t-test over runs ×
    pairs, paired bootstrap over sentences, Table 3.6-style table and a bar plot."""
    from xlsent.api.evaluation import evaluate_adversarial

    report, cfg = evaluate_adversarial(output, pairs=pair, seeds=seeds, perturbations=perturbations, config=config,
                                       settings=with_device(set_, device), preset=preset, test_sample=test_sample,
                                       resamples=resamples, names=names, places=places, stopwords=stopwords,
                                       on_note=show_note)
    console.print(effects_table(report["effects"], cfg.tagger.task))
    for k, v in report["overlap"].items():
        console.print(f"entity overlap {k}: {100 * v['entity_token_overlap']:.1f}% of test entity tokens, "
                      f"{100 * v['distinct_entities_shared']:.1f}% of distinct test entities")
    console.print(f"labels: {report['labels']}; written: {output / 'adversarial.json'}, {output / 'adversarial.png'}")


@takes("device")
def eval_titles(
    model: str = declared(TITLES["model"], "--model", "-m"),
    test: Path = declared(TITLES["test"], "--test"),
    train: Path = declared(TITLES["train"], "--train"),
    lang: str = declared(TITLES["lang"]),
    stopwords: Path = declared(TITLES["stopwords"]),
    embed_model: str = declared(TITLES["embed_model"]),
    seed: int = declared(TITLES["seed"]),
    resamples: Resamples = 1000,
    max_length: int = declared(TITLES["max_length"]),
    output: JsonOutput = None,
    run: dict = None,
) -> None:
    """Title-selection accuracy with a bootstrap CI; with --train, also under P4 and P4-random (paired bootstrap)
    and the test/train word overlap under the model's tokenizer (Manafi 2025 Table 3.4)."""
    from xlsent.api.evaluation import evaluate_title_selection

    output_file(output)
    res = evaluate_title_selection(model, test, train=train, lang=lang, stopwords=stopwords, embed_model=embed_model,
                                   seed=seed, resamples=resamples, max_length=max_length, on_note=show_note)
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
