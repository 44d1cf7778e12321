"""``xlsent eval``: evaluations that write JSON and print a table."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from xlsent.api.evaluation import TASKS
from xlsent.cli.common import (beside_table, check_dimensions, console, err_console, main_score_line, output_file,
                               retrieval_table, show_note, table)
from xlsent.cli.options import (RUNTIME, ChunkWords, Dimensions, JsonOutput, K, Margin, MatchMode, Model, Negatives,
                                OnBadLines, Resamples, Runs, Similarity, StoredPrecision, declared, takes,
                                task_option)
from xlsent.cli.spans import eval_spans
from xlsent.cli.tagging import eval_adversarial, eval_ner, eval_pos, eval_titles
from xlsent.evaluation.tasks.mining import MiningTask
from xlsent.evaluation.tasks.retrieval import RetrievalTask
from xlsent.evaluation.tasks.triplet import TripletTask
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_json_atomic

app = typer.Typer(help="Evaluate models.", no_args_is_help=True)


def retrieval_rows(results) -> list[dict]:
    rows = []
    for r in results:
        d = r.to_dict()
        d["pool"] = r.tgt_lang or r.dataset
        if r.pieces_per_word is not None:  # one pool per language: its script and how the tokenizer splits it
            d["script"], d["pieces/word"], d["unk"] = r.script, f"{r.pieces_per_word:.2f}", f"{r.unk_rate:.1%}"
        rows.append(d)
    return rows


def language_summary_table(summary: dict, title: str):
    """The languages grouped by script, pieces per word and unknown-piece rate: languages and mean P@1 each way
    (and centered CSLS's, where it was reported beside)."""
    groups = [("script", g["script"], g) for g in summary.get("by_script", [])]
    groups += [("pieces/word", g["bin"], g) for g in summary.get("by_pieces_per_word", [])]
    groups += [("unk rate", g["bin"], g) for g in summary.get("by_unk_rate", [])]
    csls = any("center+csls" in g.get("beside", {}) for _, _, g in groups)
    t = table(title, ("by", "group", "languages", "src→tgt P@1", "tgt→src P@1",
                      *(("center+csls src→tgt", "center+csls tgt→src") if csls else ())), left=2)
    for by, label, g in groups:
        cells = [by, label, str(g["languages"]), f"{g['p@1']['src2tgt']:.3f}", f"{g['p@1']['tgt2src']:.3f}"]
        if csls:
            b = g.get("beside", {}).get("center+csls")
            cells += [f"{b['src2tgt']:.3f}", f"{b['tgt2src']:.3f}"] if b else ["", ""]
        t.add_row(*cells)
    return t


@app.command("retrieval")
@takes(*RUNTIME)
def retrieval(
    model: str = typer.Option(..., "--model", "-m", help="registered name or local model folder"),
    pairs: str = typer.Option(None, "--pairs", help="pairs file: TSV, JSONL, or Moses A,B"),
    dataset: str = typer.Option(None, "--dataset", help="bundled dataset, e.g. bible-en-ny:test, udhr, udhr:nya, "
                                "udhr-all:test"),
    similarity: Similarity = task_option(RetrievalTask, "similarity"),
    center: bool = task_option(RetrievalTask, "center", "--center"),
    beside: bool = task_option(RetrievalTask, "beside"),
    k: K = 4,
    resamples: Resamples = 1000,
    seed: int = task_option(RetrievalTask, "seed"),
    sample: int = task_option(RetrievalTask, "sample"),
    by_language: bool = task_option(RetrievalTask, "by_language"),
    on_bad_lines: OnBadLines = "error",
    output: JsonOutput = None,
    chunk_words: ChunkWords = 0,
    queries: int = task_option(RetrievalTask, "queries"),
    src_distractors: Path = task_option(RetrievalTask, "src_distractors", default=None),
    tgt_distractors: Path = task_option(RetrievalTask, "tgt_distractors", default=None),
    dimensions: Dimensions = None,
    plot: Path = typer.Option(None, help="one pool per language: write the plot of each language's P@1 against the "
                              "tokenizer's pieces per word and unknown-piece rate, one colour per script (PNG) here"),
    run: dict = None,
) -> None:
    """P@1/5/10 both directions over the whole pool, tie-aware, with bootstrap CIs.

    With ``--queries N`` (Mao et al. 2021: 2,000 queries among 200k sentences), N pairs are drawn and each
    query is searched among all of the pool's other-side sentences and the distractor files' lines.

    With one pool per language, each language's row also shows the script of its text and how the model's
    tokenizer splits it (pieces per word, unknown-piece rate); over ``udhr-all`` (``:dev``, ``:test``) the JSON
    adds a summary by script, pieces per word and unknown-piece rate, and ``--plot`` draws P@1 against them."""
    output_file(output)
    if bool(pairs) == bool(dataset):
        raise XlsentError("give exactly one of --pairs FILE or --dataset NAME")
    check_dimensions(model, dimensions)
    if plot is not None:
        output_file(plot)
        from xlsent.data.sets.registry import selects_language

        if by_language is False or (dataset and selects_language(dataset, "pairs")):  # NAME:CODE
            raise XlsentError("--plot draws one point a language: give a dataset of several languages (e.g. "
                              "--dataset udhr-all:test), with one pool per language")
    if resamples < 1000:
        err_console.print(f"[yellow]note: {resamples} bootstrap resamples (< 1,000) give rough CIs[/yellow]")
    ev = _evaluate(model, "retrieval", run, pairs=pairs, dataset=dataset, chunk_words=chunk_words,
                   truncate_dim=dimensions, similarity=similarity, center=center, beside=beside, k=k,
                   resamples=resamples, seed=seed, sample=sample, by_language=by_language, on_bad_lines=on_bad_lines,
                   queries=queries, src_distractors=src_distractors or (), tgt_distractors=tgt_distractors or ())
    from xlsent.evaluation.retrieval import mean_row

    results, source = ev.results, pairs or dataset
    summary = ev.details.get("summary") if isinstance(ev.details, dict) and "languages" in ev.details else None
    rows = retrieval_rows(results)
    pool = (f"{queries} queries among all {results[0].candidates['src2tgt']:,} / {results[0].candidates['tgt2src']:,} "
            "candidates, " if queries else "")
    scoring = (f"centered {similarity}" if center else similarity) + (f", {dimensions} dimensions" if dimensions else "")
    extra = ("script", "pieces/word", "unk") if rows and "pieces/word" in rows[0] else ()
    table = retrieval_table(rows, f"{model} on {source} ({pool}{scoring})", extra)
    m = mean_row(results) if len(results) > 1 else None
    if m:
        table.add_row("mean", str(sum(r.n for r in results)), *[""] * len(extra), *[
            f"{m[d][f'p@{k}']:.3f}" for d in ("src2tgt", "tgt2src") for k in (1, 5, 10)
        ])
    console.print(table)
    side = beside_table(rows, m, f"beside it: P@1 of other scorings (center = each side's pool mean; k = {k})")
    if side is not None:
        console.print(side)
    if summary:
        console.print(language_summary_table(summary, f"{len(results)} languages by script, tokenizer pieces per "
                                             f"word and unknown-piece rate (mean P@1, {scoring})"))
    if plot is not None:
        profiled = [d for d in ev.results if d.pieces_per_word is not None]
        if len(profiled) < 2:
            raise XlsentError(f"--plot draws one point a language: {source} gave {len(profiled)} language(s) with "
                              "tokenizer figures — give a dataset of several languages (e.g. udhr-all:test)")
        from xlsent.report.plots import language_tail_png

        _write_png(plot, language_tail_png([r.to_dict() for r in profiled], f"{model} on {source} ({scoring})"))
    _write(ev.details, output)


def _write(payload, output: Path | None) -> None:
    if output:
        write_json_atomic(output, payload)
        console.print(f"wrote {output}")
    else:
        err_console.print("[dim](pass --output FILE.json to save the JSON)[/dim]")


def _evaluate(model, task: str, run: dict, *, on_note=None, **kw):
    """``xlsent.evaluate`` with the command's backend, threads, device and dtype, notes shown dimmed; the task's
    main score said in one line (the same figure wherever the task runs)."""
    from xlsent.api.evaluation import evaluate

    result = evaluate(model, task, **run, show_progress_bar=True, on_note=on_note or show_note, **kw)
    main_score_line(result.main_score_name, result.main_score, result.model)
    return result


def _write_png(path: Path, png: bytes) -> None:
    from xlsent.utils.io import write_bytes_atomic

    write_bytes_atomic(path, png)
    console.print(f"wrote {path}")


@app.command("sts")
@takes(*RUNTIME)
def sts(
    model: Model,
    data: Path = typer.Option(..., "--data", "-d", help="STS2017-format TSV: sentence1<TAB>sentence2<TAB>score (0–5)"),
    chunk_words: ChunkWords = 0,
    resamples: Resamples = 1000,
    seed: int = typer.Option(0, help="bootstrap seed"),
    on_bad_lines: OnBadLines = "error",
    output: JsonOutput = None,
    dimensions: Dimensions = None,
    run: dict = None,
) -> None:
    """Pearson and Spearman correlation with gold scores for cosine, Euclidean, Manhattan and dot."""
    from xlsent.evaluation.sts import STS_SIMILARITIES

    output_file(output)
    res = _evaluate(model, "sts", run, data=data, chunk_words=chunk_words, truncate_dim=dimensions, resamples=resamples,
                    seed=seed, on_bad_lines=on_bad_lines).results[0]
    t = table(f"{model} on {data} (n = {res.n})", ("similarity", "Spearman ρ [95% CI]", "Pearson r"))
    for k in STS_SIMILARITIES:
        r = res.by_similarity[k]
        t.add_row(k, f"{r.spearman:.4f} [{r.spearman_ci[0]:.3f}, {r.spearman_ci[1]:.3f}]", f"{r.pearson:.4f}")
    console.print(t)
    _write(res.to_dict(), output)


@app.command("triplet")
@takes(*RUNTIME)
def triplet(
    models: list[str] = typer.Option(..., "--model", "-m", help="model name or folder; repeat to compare models"),
    triplets: Path = typer.Option(None, "--triplets", help="TSV of anchor<TAB>positive<TAB>negative"),
    dataset: str = typer.Option(None, "--dataset", help="build triplets from parallel data, e.g. bible-en-ny:test"),
    negatives: Optional[Negatives] = task_option(TripletTask, "negatives"),
    teacher: str = task_option(TripletTask, "teacher"),
    sample: int = task_option(TripletTask, "sample"),
    chunk_words: ChunkWords = 0,
    resamples: Resamples = 1000,
    seed: int = task_option(TripletTask, "seed"),
    on_bad_lines: OnBadLines = "error",
    plot: Path = typer.Option(None, help="write the length-difference plot (PNG) here"),
    output: JsonOutput = None,
    dimensions: Dimensions = None,
    run: dict = None,
) -> None:
    """Triplet accuracy (cosine, dot, Manhattan, Euclidean, max), cosine mean/std, and by length difference."""
    from xlsent.evaluation.triplet import TRIPLET_SIMILARITIES

    output_file(output)
    for m in models:
        check_dimensions(m, dimensions)
    notes = [show_note] + [lambda line: None] * (len(models) - 1)  # the data's notes once
    results = [_evaluate(m, "triplet", run, data=triplets, dataset=dataset, chunk_words=chunk_words,
                         truncate_dim=dimensions, on_note=note, negatives=negatives, teacher=teacher, sample=sample,
                         resamples=resamples, seed=seed, on_bad_lines=on_bad_lines).results[0]
               for m, note in zip(models, notes)]
    source, n = str(triplets or dataset), results[0].n
    t = table(f"triplet accuracy on {source} (n = {n})",
              ("model", *TRIPLET_SIMILARITIES, "max", "cos(a,p) mean±std", "cos(a,n) mean±std"))
    for r in results:
        a = r.accuracy
        t.add_row(escape(r.model), *[f"{a[k].accuracy:.4f}" for k in TRIPLET_SIMILARITIES],
                  f"{a[r.best].accuracy:.4f} ({r.best})",
                  f"{r.cosine_positive['mean']:.3f}±{r.cosine_positive['std']:.3f}",
                  f"{r.cosine_negative['mean']:.3f}±{r.cosine_negative['std']:.3f}")
    console.print(t)
    b = table("by |length(anchor) − length(positive)| in words: cosine accuracy / mean cos(a,p)",
              ("bin", *[escape(r.model) for r in results]))
    for i, first in enumerate(results[0].by_length_difference):
        b.add_row(f"{first.bin} (n={first.n})", *[f"{r.by_length_difference[i].accuracy_cosine:.3f} / "
                                                   f"{r.by_length_difference[i].mean_cosine_positive:.3f}"
                                                   for r in results])
    console.print(b)
    dicts = [r.to_dict() for r in results]
    if plot:
        from xlsent.report.plots import length_difference_png

        _write_png(plot, length_difference_png({d["model"]: d["by_length_difference"] for d in dicts}, source))
    _write(dicts[0] if len(dicts) == 1 else dicts, output)


@app.command("mse")
@takes(*RUNTIME)
def mse(
    model: Model,
    teacher: str = typer.Option("minilm-en", "--teacher", "-t", help="teacher model name or folder"),
    pairs: str = typer.Option(None, "--pairs", help="held-out English–xx pairs file"),
    dataset: str = typer.Option(None, "--dataset", help="bundled held-out pairs, e.g. bible-en-ny:test"),
    sample: int = typer.Option(1000, help="pairs drawn at random (0 = all)"),
    seed: int = typer.Option(0, help="sampling seed"),
    chunk_words: ChunkWords = 0,
    on_bad_lines: OnBadLines = "error",
    output: JsonOutput = None,
    run: dict = None,
) -> None:
    """MSE of the student (both sides) to the teacher's embedding of the English side."""
    output_file(output)
    res = _evaluate(model, "mse", run, pairs=pairs, dataset=dataset, chunk_words=chunk_words, teacher=teacher,
                    sample=sample, seed=seed, on_bad_lines=on_bad_lines).results[0]
    console.print(f"{model} vs teacher {teacher} on {pairs or dataset} (n = {res.n}): "
                  f"MSE×100 en {100 * res.mse_src:.4f}, xx {100 * res.mse_tgt:.4f}; "
                  f"cos(S(xx), T(en)) {res.cosine_tgt_to_teacher['mean']:.3f}")
    _write(res.to_dict(), output)


@app.command("mining")
@takes(*RUNTIME)
def mining(
    model: Model,
    dataset: str = typer.Option(None, "--dataset", help="bundled comparable corpus: bible (en–ny), udhr:CODE or "
                                 "udhr-dev:CODE (a development language)"),
    dev: str = typer.Option(None, "--dev", help="BUCC-style dev prefix: PREFIX.SRC, PREFIX.TGT, PREFIX.gold"),
    test: str = typer.Option(None, "--test", help="BUCC-style test prefix (same layout)"),
    src_lang: str = task_option(MiningTask, "src_lang"),
    tgt_lang: str = task_option(MiningTask, "tgt_lang"),
    n_gold: int = task_option(MiningTask, "n_gold"),
    n_distractors: int = task_option(MiningTask, "n_distractors"),
    mode: MatchMode = "max",
    margin: Margin = task_option(MiningTask, "margin"),
    k: K = 4,
    center: bool = task_option(MiningTask, "center"),
    precision: StoredPrecision = task_option(MiningTask, "precision", "--precision"),
    seed: int = task_option(MiningTask, "seed"),
    output: JsonOutput = None,
    dimensions: Dimensions = None,
    run: dict = None,
) -> None:
    """BUCC-style mining P/R/F1: threshold tuned on dev, applied to test (+ MTEB's top-1 figure, kept apart)."""
    output_file(output)
    if bool(dev) != bool(test) or bool(dataset) == bool(dev):
        raise XlsentError("give either --dataset (bible, udhr:CODE) or --dev PREFIX and --test PREFIX")
    res = _evaluate(model, "mining", run, dataset=dataset, truncate_dim=dimensions, data=dev and f"{dev},{test}",
                    src_lang=src_lang, tgt_lang=tgt_lang, n_gold=n_gold, n_distractors=n_distractors, mode=mode,
                    margin=margin, k=k, center=center, precision=precision, seed=seed).results[0]
    c, t, a = res.test_corpus, res.test, res.auto_test
    console.print(f"{model}{f' at {dimensions} dimensions' if dimensions else ''} on {res.dataset} "
                  f"({c['gold_pairs']} gold in {c['src_sentences']} × "
                  f"{c['tgt_sentences']}): F1 {t.f1:.3f} (P {t.precision:.3f}, R {t.recall:.3f}) at the dev "
                  f"threshold {res.threshold:.4f} ({margin} margin, {mode} mode); "
                  f"MTEB-style top-1 on gold sources {res.top1_gold_sources:.3f}")
    cut = res.auto["threshold"]
    console.print("auto threshold (xlsent mine's default, from the test scores alone): "
                  + (f"{cut:.4f}" if cut is not None else "none (all kept)")
                  + f" → F1 {a.f1:.3f} (P {a.precision:.3f}, R {a.recall:.3f})")
    _write(res.to_dict(), output)


@app.command("documents")
@takes(*RUNTIME)
def documents(
    model: Model,
    dataset: str = typer.Option(None, "--dataset", help="bible-chapters | udhr-articles:CODE | SRC.jsonl,TGT.jsonl"),
    pairs: str = typer.Option(None, "--pairs", help="pairs file whose lines are paragraphs or documents"),
    chunk_words: ChunkWords = 20,
    similarity: Similarity = "cosine",
    resamples: Resamples = 1000,
    seed: int = typer.Option(0, help="bootstrap seed"),
    on_bad_lines: OnBadLines = "error",
    output: JsonOutput = None,
    dimensions: Dimensions = None,
    run: dict = None,
) -> None:
    """Paragraph / document matching P@1 and P@5 with chunked pooling (Huang et al. 2023 Table 12)."""
    output_file(output)
    res = _evaluate(model, "documents", run, pairs=pairs, dataset=dataset, chunk_words=chunk_words,
                    truncate_dim=dimensions, similarity=similarity, resamples=resamples, seed=seed,
                    on_bad_lines=on_bad_lines).results[0]
    d = {**res.to_dict(), "chunk_words": chunk_words}
    console.print(retrieval_table([{**d, "pool": dataset or pairs}], f"{model}: document matching ({similarity}, "
                                  f"chunks of ≤ {chunk_words} words)" if chunk_words else f"{model}: document matching"))
    _write(d, output)


@app.command("classify")
@takes(*RUNTIME)
def classify(
    model: Model,
    dataset: str = typer.Option(None, "--dataset", help="bundled task: bible-genre (English → Chichewa, split by book)"),
    train: Path = typer.Option(None, "--train", help="labelled source-language texts: label<TAB>text a line"),
    test: Path = typer.Option(None, "--test", help="labelled target-language texts: label<TAB>text a line"),
    train_target: Path = typer.Option(None, "--train-target", help="labelled target-language training texts: the "
                                                                  "in-language upper bound"),
    train_lang: str = typer.Option("", help="language code of --train (a word-gloss model glosses non-English)"),
    test_lang: str = typer.Option("", help="language code of --test and --train-target"),
    per_class: int = typer.Option(500, help="bible-genre: verses per class and side (seeded; 0 = all)"),
    seeds: int = typer.Option(5, help="validation splits (C chosen on each); mean and spread are reported"),
    resamples: Resamples = 1000,
    plot: Path = typer.Option(None, "--plot", help="write the transfer confusion matrix here (PNG)"),
    output: JsonOutput = None,
    chunk_words: ChunkWords = 0,
    dimensions: Dimensions = None,
    run: dict = None,
) -> None:
    """Zero-shot classification transfer: a linear classifier on frozen embeddings of source-language texts,
    tested on target-language texts (MLDoc-style); accuracy and macro-F1 with CIs, per class, confusion."""
    output_file(output)
    output_file(plot, "--plot")
    if bool(dataset) == bool(train or test) or bool(train) != bool(test):
        raise XlsentError("give --dataset bible-genre, or --train FILE and --test FILE")
    files = ",".join(str(f) for f in (train, test, train_target) if f) or None
    res = _evaluate(model, "classification", run, dataset=dataset, data=files, chunk_words=chunk_words,
                    truncate_dim=dimensions, train_lang=train_lang, test_lang=test_lang,
                    per_class=per_class, seeds=seeds, resamples=resamples).results[0]
    t = table(f"{model}: {res['train']} → {res['test']} ({seeds} seeds)",
              ("condition", "accuracy [95% CI]", "± seeds", "macro-F1 [95% CI]", "± seeds"))
    for name, r in (("transfer", res["transfer"]), ("in-language", res["in_language"])):
        if r:
            t.add_row(name, f"{r['accuracy']:.3f} [{r['accuracy_ci95'][0]:.3f}, {r['accuracy_ci95'][1]:.3f}]",
                      f"{r['accuracy_std']:.3f}", f"{r['macro_f1']:.3f} [{r['macro_f1_ci95'][0]:.3f}, "
                      f"{r['macro_f1_ci95'][1]:.3f}]", f"{r['macro_f1_std']:.3f}")
    console.print(t)
    per = table("transfer: F1 per class", ("class", "F1"))
    for k, v in res["transfer"]["per_class_f1"].items():
        per.add_row(k, f"{v:.3f}")
    console.print(per)
    if plot:
        from xlsent.report.plots import confusion_png

        tr = res["transfer"]
        _write_png(plot, confusion_png(tr["confusion"], tr["labels"], f"{model}: transfer (seed 0)"))
    _write(res, output)




# the token-level and span commands live beside their recipes' other commands; registered here, after
# the sentence-level ones
for name, command in (("ner", eval_ner), ("pos", eval_pos), ("adversarial", eval_adversarial),
                      ("titles", eval_titles), ("spans", eval_spans)):
    app.command(name)(command)


@app.command("align")
@takes(*RUNTIME)
def align(
    gold: Path = typer.Option(None, "--gold", help="gold alignment: a file (TSV or vecalign format) or a folder of them"),
    pred: Path = typer.Option(None, "--pred", help="predicted alignment, the same shape as --gold (a folder's files "
                              "are matched by name)"),
    dataset: str = typer.Option(None, "--dataset", help="bundled gold, aligned here with --model: bible-align "
                                "(split verses) | bible-align:deletions (5% of verses on one side only) | "
                                "bible-align:dev | bible-align:dev-deletions (the development books)"),
    model: str = typer.Option(None, "--model", "-m", help="--dataset: registered name or local model folder"),
    max_overlap: int = typer.Option(3, "--max-overlap", help="as xlsent align"),
    deletion_quantile: float = typer.Option(0.02, help="as xlsent align"),
    plain: bool = typer.Option(False, "--plain", help="as xlsent align: the 1-1 cosine baseline"),
    runs: Runs = typer.Option("mean", "--runs", help="as xlsent align: mean | concat"),
    length_weight: float = typer.Option(0.1, "--length-weight", help="as xlsent align (0: no length cost)"),
    output: JsonOutput = None,
    run: dict = None,
) -> None:
    """Sentence-alignment strict and lax precision, recall and F1 (Vecalign's scorer, micro-averaged)."""
    output_file(output)
    if bool(dataset) == bool(gold or pred) or bool(gold) != bool(pred):
        raise XlsentError("give either --gold GOLD --pred PRED, or --dataset bible-align with --model")
    if dataset and model is None:
        raise XlsentError("--dataset aligns its documents with a model: give --model (e.g. e5-small)")
    res = _evaluate(model, "alignment", run, dataset=dataset, data=gold and f"{gold},{pred}",
                    max_overlap=max_overlap, deletion_quantile=deletion_quantile, plain=plain, runs=runs,
                    length_weight=length_weight).details
    label = f"{model} on {dataset} ({res['documents']} chapters)" if dataset else f"{pred} against {gold}"
    console.print(f"{label}: strict F1 {res['strict_f1']:.3f} (P {res['strict_precision']:.3f}, R "
                  f"{res['strict_recall']:.3f}); lax F1 {res['lax_f1']:.3f} (P {res['lax_precision']:.3f}, R "
                  f"{res['lax_recall']:.3f}); {res['predicted_blocks']} predicted, {res['gold_blocks']} gold blocks")
    _write(res, output)


@app.command("run")
@takes(*RUNTIME)
def run_tasks(
    model: str = declared(TASKS["model"], "--model", "-m"),
    tasks: str = declared(TASKS["tasks"], "--tasks", "-t"),
    output: Path = declared(TASKS["output"], "--output", "-o"),
    option: list[str] = declared(TASKS["options"], "--option"),
    list_: bool = typer.Option(False, "--list", help="list the named tasks and suites, and exit"),
    dimensions: Dimensions = None,
    run: dict = None,
) -> None:
    """Run declared tasks and suites; each result file is MTEB's format (mteb.TaskResult.from_disk reads it)."""
    from xlsent.api.evaluation import evaluate_tasks
    from xlsent.evaluation.tasks import SUITES, TYPES, declare, names

    if list_:
        t = table("tasks (TYPE:DATASET; a file works too: retrieval:PAIRS, sts:FILE)",
                  ("task", "main score", "labels", "languages"), left=4)
        for n in names():
            d = declare(n.replace(":CODE", ":nya"))
            t.add_row(n, d.main_score, d.labels, d.languages if ":CODE" not in n else "eng, CODE")
        console.print(t)
        for s, members in SUITES.items():
            console.print(f"suite [bold]{s}[/bold]: {', '.join(members)}", highlight=False, soft_wrap=True)
        return
    if not model or not tasks:
        raise XlsentError("give --model MODEL and --tasks TASK[,TASK…] (or a suite: lite, dev, test); --list shows "
                          "them")
    runs = evaluate_tasks(model, tasks, output, options=option, **run, truncate_dim=dimensions, on_note=show_note)
    t = table(f"{model}: {len(runs)} task(s)", ("task", "main score", "", "subsets", "seconds"))
    for r in runs:
        t.add_row(escape(r.task), f"{r.main_score:.4f}", r.main_score_name, str(len(r.scores)),
                  f"{r.evaluation_time:.0f}")
    t.caption = ", ".join(f"{k}: {v[1]}" for k, v in TYPES.items() if any(r.declaration.type == k for r in runs))
    console.print(t)
    if output is not None:
        console.print(f"wrote {len(runs)} file(s) to {output}")
