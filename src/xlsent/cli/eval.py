"""``xlsent eval``: evaluations that write JSON and print a table."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from xlsent.api._common import place
from xlsent.cli.common import (at_least, beside_table, check_backend,
                               check_dimensions, choice, console, err_console, output_file, retrieval_table)
from xlsent.cli.options import (Backend, ChunkWords, Device, Dimensions, Dtype, JsonOutput, K, Margin, MatchMode, Model,
                                Negatives, OnBadLines, Resamples, Runs, Similarity, StoredPrecision, Threads)
from xlsent.evaluation.retrieval import SIMILARITIES
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


def language_summary_table(summary: dict, title: str) -> Table:
    """The languages grouped by script, pieces per word and unknown-piece rate: languages and mean P@1 each way
    (and centered CSLS's, where it was reported beside)."""
    groups = [("script", g["script"], g) for g in summary.get("by_script", [])]
    groups += [("pieces/word", g["bin"], g) for g in summary.get("by_pieces_per_word", [])]
    groups += [("unk rate", g["bin"], g) for g in summary.get("by_unk_rate", [])]
    csls = any("center+csls" in g.get("beside", {}) for _, _, g in groups)
    t = Table(title=title)
    for c in ("by", "group", "languages", "src→tgt P@1", "tgt→src P@1",
              *(("center+csls src→tgt", "center+csls tgt→src") if csls else ())):
        t.add_column(c, justify="left" if c in ("by", "group") else "right")
    for by, label, g in groups:
        cells = [by, label, str(g["languages"]), f"{g['p@1']['src2tgt']:.3f}", f"{g['p@1']['tgt2src']:.3f}"]
        if csls:
            b = g.get("beside", {}).get("center+csls")
            cells += [f"{b['src2tgt']:.3f}", f"{b['tgt2src']:.3f}"] if b else ["", ""]
        t.add_row(*cells)
    return t


@app.command("retrieval")
def retrieval(
    model: str = typer.Option(..., "--model", "-m", help="registered name or local model folder"),
    pairs: str = typer.Option(None, "--pairs", help="pairs file: TSV, JSONL, or Moses A,B"),
    dataset: str = typer.Option(None, "--dataset", help="bundled dataset, e.g. bible-en-ny:test, udhr, udhr:nya, "
                                "udhr-all:test"),
    similarity: Similarity = typer.Option("cosine", help=f"{' | '.join(SIMILARITIES)} (the main figure: plain cosine by "
                                   "default, the literature's; the others are reported beside it)"),
    center: bool = typer.Option(False, "--center", help="subtract each side's (language's) mean vector over the "
                                "pool before scoring the main figure (the main figure stays plain cosine by default, "
                                "the literature's; measured effect: docs/experiments/centering-and-csls.md)"),
    beside: bool = typer.Option(True, help="also report P@1 with centering, CSLS and both, beside the main figure"),
    k: K = 4,
    resamples: Resamples = 1000,
    seed: int = typer.Option(0, help="seed for sampling and the bootstrap"),
    sample: int = typer.Option(0, help="evaluate on this many pairs drawn at random (0 = all)"),
    by_language: bool = typer.Option(None, help="one pool per target language (default: on for multi-language data)"),
    on_bad_lines: OnBadLines = "error",
    output: JsonOutput = None,
    chunk_words: ChunkWords = 0,
    queries: int = typer.Option(0, help="large-pool mode: N queries (seeded) searched among every sentence of the "
                                        "other side of the pool, plus distractors (0 = off: each pair's pool)"),
    src_distractors: Path = typer.Option(None, help="large-pool mode: extra source-language candidates, one a line"),
    tgt_distractors: Path = typer.Option(None, help="large-pool mode: extra target-language candidates, one a line"),
    dimensions: Dimensions = None,
    plot: Path = typer.Option(None, help="one pool per language: write the plot of each language's P@1 against the "
                              "tokenizer's pieces per word and unknown-piece rate, one colour per script (PNG) here"),
    backend: Backend = "auto",
    threads: Threads = 0,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """P@1/5/10 both directions over the whole pool, tie-aware, with bootstrap CIs.

    With ``--queries N`` (Mao et al. 2021: 2,000 queries among 200k sentences), N pairs are drawn and each
    query is searched among all of the pool's other-side sentences and the distractor files' lines.

    With one pool per language, each language's row also shows the script of its text and how the model's
    tokenizer splits it (pieces per word, unknown-piece rate); over ``udhr-all`` (``:dev``, ``:test``) the JSON
    adds a summary by script, pieces per word and unknown-piece rate, and ``--plot`` draws P@1 against them."""
    place(device, dtype)  # a device that is not there: one line, before any model loads
    from xlsent.api.evaluation import evaluate

    output_file(output)
    check_dimensions(model, dimensions)
    if plot is not None:
        output_file(plot)
        from xlsent.data.registry import selects_language

        if by_language is False or (dataset and selects_language(dataset, "pairs")):  # NAME:CODE
            raise XlsentError("--plot draws one point a language: give a dataset of several languages (e.g. "
                              "--dataset udhr-all:test), with one pool per language")
    if (src_distractors or tgt_distractors) and not queries:  # before any file is read
        raise XlsentError("--src-distractors / --tgt-distractors need --queries N (the large-pool mode)")
    if resamples < 1000:
        err_console.print(f"[yellow]note: {resamples} bootstrap resamples (< 1,000) give rough CIs[/yellow]")
    extra = {side: _distractors(path, option) for side, path, option in (
        ("src", src_distractors, "--src-distractors"), ("tgt", tgt_distractors, "--tgt-distractors")) if path}
    ev = evaluate(model, "retrieval", pairs=pairs, dataset=dataset, backend=backend, threads=threads, device=device,
                  dtype=dtype, chunk_words=chunk_words, dimensions=dimensions, show_progress=True,
                  on_note=lambda line: err_console.print(f"[dim]{escape(line)}[/dim]"), similarity=similarity,
                  center=center, beside=beside, k_nn=k, resamples=resamples, seed=seed, sample=sample,
                  by_language=by_language, on_bad_lines=on_bad_lines, queries=queries,
                  src_distractors=extra.get("src", ()), tgt_distractors=extra.get("tgt", ()))
    results, source = ev.results, pairs or dataset
    rows = retrieval_rows(results)
    pool = (f"{queries} queries among all {results[0].candidates['src2tgt']:,} / {results[0].candidates['tgt2src']:,} "
            "candidates, " if queries else "")
    scoring = (f"centered {similarity}" if center else similarity) + (f", {dimensions} dimensions" if dimensions else "")
    extra = ("script", "pieces/word", "unk") if rows and "pieces/word" in rows[0] else ()
    table = retrieval_table(rows, f"{model} on {source} ({pool}{scoring})", extra)
    m = ev.mean()
    if m:
        table.add_row("mean", str(sum(r.n for r in results)), *[""] * len(extra), *[
            f"{m[d][f'p@{k}']:.3f}" for d in ("src2tgt", "tgt2src") for k in (1, 5, 10)
        ])
    console.print(table)
    side = beside_table(rows, m, f"beside it: P@1 of other scorings (center = each side's pool mean; k = {k})")
    if side is not None:
        console.print(side)
    if ev.summary:
        console.print(language_summary_table(ev.summary, f"{len(results)} languages by script, tokenizer pieces per "
                                             f"word and unknown-piece rate (mean P@1, {scoring})"))
    if plot is not None:
        profiled = [d for d in ev.results if d.pieces_per_word is not None]
        if len(profiled) < 2:
            raise XlsentError(f"--plot draws one point a language: {source} gave {len(profiled)} language(s) with "
                              "tokenizer figures — give a dataset of several languages (e.g. udhr-all:test)")
        from xlsent.report.plots import language_tail_png
        from xlsent.utils.io import atomic_path

        png = language_tail_png([r.to_dict() for r in profiled], f"{model} on {source} ({scoring})")
        with atomic_path(plot) as tmp:
            tmp.write_bytes(png)
        console.print(f"wrote {plot}")
    _write(ev.to_dict(), output)


def _distractors(path: Path, option: str) -> list[str]:
    """Distractor sentences, one a line; blank lines are skipped and counted."""
    from xlsent.data.readers import read_lines

    lines = read_lines(Path(path))
    kept = [x.strip() for x in lines if x.strip()]
    if len(kept) < len(lines):
        err_console.print(f"[dim]{escape(str(path))}: {len(lines) - len(kept)} blank line(s) skipped[/dim]")
    err_console.print(f"[dim]{escape(str(path))}: {len(kept)} distractors ({option})[/dim]")
    return kept


def _write(payload, output: Path | None) -> None:
    if output:
        write_json_atomic(output, payload)
        console.print(f"wrote {output}")
    else:
        err_console.print("[dim](pass --output FILE.json to save the JSON)[/dim]")


def _encoder(model: str, chunk_words: int, backend: str = "auto", threads: int = 0, dimensions: int | None = None):
    """The model's encoder on the chosen backend (a word-gloss model glosses non-English text itself), its vectors
    cut to ``dimensions`` (checked before the model loads)."""
    from xlsent.exporter.load import load_encoder

    dimensions = check_dimensions(model, dimensions)
    return load_encoder(model, backend=backend, threads=threads, chunk_words=chunk_words, show_progress=True,
                        memo=True, dimensions=dimensions)


@app.command("sts")
def sts(
    model: Model,
    data: Path = typer.Option(..., "--data", "-d", help="STS2017-format TSV: sentence1<TAB>sentence2<TAB>score (0–5)"),
    chunk_words: ChunkWords = 0,
    resamples: Resamples = 1000,
    seed: int = typer.Option(0, help="bootstrap seed"),
    on_bad_lines: OnBadLines = "error",
    output: JsonOutput = None,
    dimensions: Dimensions = None,
    backend: Backend = "auto",
    threads: Threads = 0,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """Pearson and Spearman correlation with gold scores for cosine, Euclidean, Manhattan and dot."""
    place(device, dtype)  # a device that is not there: one line, before any model loads
    output_file(output)
    from rich.table import Table

    from xlsent.api.evaluation import evaluate
    from xlsent.evaluation.sts import STS_SIMILARITIES

    res = evaluate(model, "sts", data=data, backend=backend, threads=threads, device=device, dtype=dtype,
                   chunk_words=chunk_words, dimensions=dimensions, show_progress=True, resamples=resamples, seed=seed,
                   on_bad_lines=on_bad_lines,
                   on_note=lambda line: err_console.print(f"[dim]{escape(line)}[/dim]")).results[0]
    t = Table(title=f"{model} on {data} (n = {res.n})")
    for c in ("similarity", "Spearman ρ [95% CI]", "Pearson r"):
        t.add_column(c, justify="left" if c == "similarity" else "right")
    for k in STS_SIMILARITIES:
        r = res.by_similarity[k]
        t.add_row(k, f"{r.spearman:.4f} [{r.spearman_ci[0]:.3f}, {r.spearman_ci[1]:.3f}]", f"{r.pearson:.4f}")
    console.print(t)
    _write(res.to_dict(), output)


@app.command("triplet")
def triplet(
    models: list[str] = typer.Option(..., "--model", "-m", help="model name or folder; repeat to compare models"),
    triplets: Path = typer.Option(None, "--triplets", help="TSV of anchor<TAB>positive<TAB>negative"),
    dataset: str = typer.Option(None, "--dataset", help="build triplets from parallel data, e.g. bible-en-ny:test"),
    negatives: Negatives = typer.Option("section", help="for --dataset: section | random | hard (mined by --teacher)"),
    teacher: str = typer.Option("minilm-en", help="for --negatives hard: the model that mines them"),
    sample: int = typer.Option(0, help="use this many triplets drawn at random (0 = all)"),
    chunk_words: ChunkWords = 0,
    resamples: Resamples = 1000,
    seed: int = typer.Option(0, help="seed for sampling, negatives and the bootstrap"),
    on_bad_lines: OnBadLines = "error",
    plot: Path = typer.Option(None, help="write the length-difference plot (PNG) here"),
    output: JsonOutput = None,
    dimensions: Dimensions = None,
    backend: Backend = "auto",
    threads: Threads = 0,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """Triplet accuracy (cosine, dot, Manhattan, Euclidean, max), cosine mean/std, and by length difference."""
    place(device, dtype)  # a device that is not there: one line, before any model loads
    check_backend(backend, threads)
    output_file(output)
    for m in models:
        check_dimensions(m, dimensions)
    from rich.table import Table

    from xlsent.data.pairs import english_side, load_pairs, side_langs
    from xlsent.data.triplets import build_triplets, read_triplets
    from xlsent.evaluation.triplet import TRIPLET_SIMILARITIES, evaluate_triplets

    choice(negatives, ("section", "random", "hard"), "--negatives")
    if bool(triplets) == bool(dataset):
        raise XlsentError("give exactly one of --triplets FILE or --dataset NAME")
    anchor_lang = None  # a triplet file's anchors: the low-resource side, language not given
    if triplets:
        ds, report = read_triplets(triplets, on_bad_lines)
        notes = report.lines()
    else:
        loaded = load_pairs(dataset, on_bad_lines=on_bad_lines, dedupe=False)
        miner = None
        if negatives == "hard":
            from xlsent.models.handle import load_model

            miner = load_model(teacher).model
        ds, rep = build_triplets(loaded.dataset, negatives, seed, teacher=miner)
        notes = loaded.notes() + rep.lines()
        langs = side_langs(loaded.dataset)
        anchor_lang = langs[0 if english_side(loaded.dataset)[0] == "src" else 1] or None
    if sample and sample < len(ds):
        ds = ds.shuffle(seed=seed).select(range(sample))
        notes.append(f"sampled {sample} triplets (seed {seed})")
    for line in notes:
        err_console.print(f"[dim]{escape(line)}[/dim]")
    source = str(triplets or dataset)
    results = [evaluate_triplets(ds["anchor"], ds["positive"], ds["negative"], _encoder(m, chunk_words, backend, threads, dimensions), m, source,
                                 resamples, seed, anchor_lang=anchor_lang) for m in models]
    t = Table(title=f"triplet accuracy on {source} (n = {len(ds)})")
    for c in ("model", *TRIPLET_SIMILARITIES, "max", "cos(a,p) mean±std", "cos(a,n) mean±std"):
        t.add_column(c, justify="left" if c == "model" else "right")
    for r in results:
        a = r.accuracy
        t.add_row(escape(r.model), *[f"{a[k].accuracy:.4f}" for k in TRIPLET_SIMILARITIES],
                  f"{a[r.best].accuracy:.4f} ({r.best})",
                  f"{r.cosine_positive['mean']:.3f}±{r.cosine_positive['std']:.3f}",
                  f"{r.cosine_negative['mean']:.3f}±{r.cosine_negative['std']:.3f}")
    console.print(t)
    b = Table(title="by |length(anchor) − length(positive)| in words: cosine accuracy / mean cos(a,p)")
    b.add_column("bin")
    for r in results:
        b.add_column(escape(r.model), justify="right")
    for i, first in enumerate(results[0].by_length_difference):
        cells = [f"{r.by_length_difference[i].accuracy_cosine:.3f} / {r.by_length_difference[i].mean_cosine_positive:.3f}"
                 for r in results]
        b.add_row(f"{first.bin} (n={first.n})", *cells)
    console.print(b)
    dicts = [r.to_dict() for r in results]
    if plot:
        from xlsent.report.plots import length_difference_png
        from xlsent.utils.io import atomic_path

        png = length_difference_png({d["model"]: d["by_length_difference"] for d in dicts}, source)
        with atomic_path(plot) as tmp:
            tmp.write_bytes(png)
        console.print(f"wrote {plot}")
    _write(dicts[0] if len(dicts) == 1 else dicts, output)


@app.command("mse")
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
    backend: Backend = "auto",
    threads: Threads = 0,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """MSE of the student (both sides) to the teacher's embedding of the English side."""
    place(device, dtype)  # a device that is not there: one line, before any model loads
    check_backend(backend, threads)
    output_file(output)
    from xlsent.data.pairs import english_side, load_pairs, side_langs
    from xlsent.evaluation.mse import evaluate_mse

    if bool(pairs) == bool(dataset):
        raise XlsentError("give exactly one of --pairs FILE or --dataset NAME")
    source = pairs or dataset
    loaded = load_pairs(source, on_bad_lines=on_bad_lines, dedupe=False, sample=sample, seed=seed)
    for line in loaded.notes():
        err_console.print(f"[dim]{escape(line)}[/dim]")
    other, en = english_side(loaded.dataset)
    other_lang = side_langs(loaded.dataset)[0 if other == "src" else 1]
    res = evaluate_mse(loaded.dataset[en], loaded.dataset[other], _encoder(model, chunk_words, backend, threads),
                       _encoder(teacher, chunk_words, backend, threads), model, teacher, source, tgt_lang=other_lang or None)
    console.print(f"{model} vs teacher {teacher} on {source} (n = {res.n}): "
                  f"MSE×100 en {100 * res.mse_src:.4f}, xx {100 * res.mse_tgt:.4f}; "
                  f"cos(S(xx), T(en)) {res.cosine_tgt_to_teacher['mean']:.3f}")
    _write(res.to_dict(), output)


@app.command("mining")
def mining(
    model: Model,
    dataset: str = typer.Option(None, "--dataset", help="bundled comparable corpus: bible (en–ny), udhr:CODE or "
                                 "udhr-dev:CODE (a development language)"),
    dev: str = typer.Option(None, "--dev", help="BUCC-style dev prefix: PREFIX.SRC, PREFIX.TGT, PREFIX.gold"),
    test: str = typer.Option(None, "--test", help="BUCC-style test prefix (same layout)"),
    src_lang: str = typer.Option("", help="source suffix of the BUCC files (e.g. de)"),
    tgt_lang: str = typer.Option("", help="target suffix of the BUCC files (e.g. en)"),
    n_gold: int = typer.Option(1000, help="bible: gold pairs per split"),
    n_distractors: int = typer.Option(7000, help="bible / udhr: unrelated sentences per side"),
    mode: MatchMode = "max",
    margin: Margin = typer.Option("ratio", help="ratio | distance | absolute"),
    k: K = 4,
    center: bool = typer.Option(False, help="per-language centering: subtract each side's mean vector before "
                                "search and margins (as xlsent mine --center)"),
    precision: StoredPrecision = typer.Option("float16", "--precision", help="how the embeddings are stored and searched, "
                                  "as xlsent mine --precision: float32 | float16 | int8 | ubinary"),
    seed: int = typer.Option(0, help="seed of the bundled corpora"),
    output: JsonOutput = None,
    dimensions: Dimensions = None,
    backend: Backend = "auto",
    threads: Threads = 0,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """BUCC-style mining P/R/F1: threshold tuned on dev, applied to test (+ MTEB's top-1 figure, kept apart)."""
    place(device, dtype)  # a device that is not there: one line, before any model loads
    check_backend(backend, threads)
    output_file(output)
    from xlsent.data.comparable import read_bucc
    from xlsent.data.registry import find
    from xlsent.evaluation.mining import evaluate_mining
    from xlsent.mining.job import MineConfig
    from xlsent.mining.store import DTYPES
    from xlsent.exporter.load import load_encoder

    choice(mode, ("forward", "backward", "intersect", "max"), "--mode")
    choice(margin, ("ratio", "distance", "absolute"), "--margin")
    choice(precision, DTYPES, "--precision")
    dimensions = check_dimensions(model, dimensions)
    if bool(dataset) == bool(dev or test):
        raise XlsentError("give either --dataset (bible, udhr:CODE) or --dev PREFIX and --test PREFIX")
    if dataset:
        bundled = find(dataset, "mining")
        if bundled is None or (bundled.entry.by_language and not bundled.lang):
            raise XlsentError(f"unknown comparable corpus '{dataset}': use bible, udhr:CODE or udhr-dev:CODE")
        corpora = bundled.load(n_gold=n_gold, n_distractors=n_distractors, seed=seed)
    else:
        if not (dev and test and src_lang and tgt_lang):
            raise XlsentError("BUCC files need --dev PREFIX --test PREFIX --src-lang X --tgt-lang Y")
        corpora = [read_bucc(p, src_lang, tgt_lang) for p in (dev, test)]
    cfg = MineConfig(k=k, mode=mode, margin=margin, center=center, dtype=precision)
    res = evaluate_mining(load_encoder(model, backend=backend, threads=threads, dimensions=dimensions), corpora[0],
                          corpora[1], cfg, model)
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
def documents(
    model: Model,
    dataset: str = typer.Option(None, "--dataset", help="bible-chapters | udhr-articles:CODE | SRC.jsonl,TGT.jsonl"),
    pairs: str = typer.Option(None, "--pairs", help="pairs file whose lines are paragraphs or documents"),
    chunk_words: ChunkWords = 20,
    similarity: Similarity = typer.Option("cosine", help=f"{' | '.join(SIMILARITIES)}"),
    resamples: Resamples = 1000,
    seed: int = typer.Option(0, help="bootstrap seed"),
    on_bad_lines: OnBadLines = "error",
    output: JsonOutput = None,
    dimensions: Dimensions = None,
    backend: Backend = "auto",
    threads: Threads = 0,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """Paragraph / document matching P@1 and P@5 with chunked pooling (Huang et al. 2023 Table 12)."""
    place(device, dtype)  # a device that is not there: one line, before any model loads
    check_backend(backend, threads)
    output_file(output)
    from xlsent.evaluation.documents import document_units
    from xlsent.evaluation.retrieval import evaluate_retrieval

    choice(similarity, SIMILARITIES, "--similarity")
    check_dimensions(model, dimensions)
    if bool(pairs) == bool(dataset):
        raise XlsentError("give exactly one of --dataset NAME or --pairs FILE")
    if dataset:
        src, tgt, sl, tl = document_units(dataset)
    else:
        from xlsent.data.pairs import load_pairs, side_langs

        ds = load_pairs(pairs, on_bad_lines=on_bad_lines, dedupe=False).dataset
        src, tgt = list(ds["src"]), list(ds["tgt"])
        sl, tl = side_langs(ds)
    res = evaluate_retrieval(src, tgt, _encoder(model, chunk_words, backend, threads, dimensions), model, similarity, resamples, seed, 4, sl, tl,
                             dataset or pairs)
    d = res.to_dict()
    d["chunk_words"] = chunk_words
    console.print(retrieval_table([{**d, "pool": dataset or pairs}], f"{model}: document matching ({similarity}, "
                                  f"chunks of ≤ {chunk_words} words)" if chunk_words else f"{model}: document matching"))
    _write(d, output)


@app.command("classify")
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
    backend: Backend = "auto",
    threads: Threads = 0,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """Zero-shot classification transfer: a linear classifier on frozen embeddings of source-language texts,
    tested on target-language texts (MLDoc-style); accuracy and macro-F1 with CIs, per class, confusion."""
    place(device, dtype)  # a device that is not there: one line, before any model loads
    check_backend(backend, threads)
    output_file(output)
    output_file(plot, "--plot")
    check_dimensions(model, dimensions)
    from xlsent.data.labelled import read_labelled
    from xlsent.data.registry import find

    for value, minimum, option in ((seeds, 1, "--seeds"), (resamples, 1, "--resamples"), (per_class, 0, "--per-class")):
        at_least(value, minimum, option)
    if bool(dataset) == bool(train or test):
        raise XlsentError("give --dataset bible-genre, or --train FILE and --test FILE")
    if dataset:
        bundled = find(dataset, "labelled")
        if bundled is None:
            raise XlsentError(f"unknown classification task '{dataset}' — the bundled one is bible-genre")
        task = bundled.load(per_class=per_class)
        tr, te, tt = task["train"], task["test"], task["train_target"]
    else:
        if not (train and test):
            raise XlsentError("give both --train FILE and --test FILE")
        tr, te = read_labelled(train), read_labelled(test)
        tt = read_labelled(train_target) if train_target else None
        tr.lang, te.lang = train_lang, test_lang
        if tt is not None:
            tt.lang = test_lang
    unseen = sorted(set(te.labels) - set(tr.labels))
    if unseen:
        raise XlsentError(f"{te.source}: label(s) {', '.join(unseen)} never occur in {tr.source} — the classifier "
                          "cannot predict them; give training texts for every test label")
    if len(set(tr.labels)) < 2:
        raise XlsentError(f"{tr.source}: a classifier needs at least 2 labels")
    err_console.print(f"[dim]train {len(tr.texts)} ({tr.source}), test {len(te.texts)} ({te.source})"
                      + (f", in-language train {len(tt.texts)} ({tt.source})" if tt else "") + "[/dim]")
    from xlsent.evaluation.classify import evaluate_classification

    res = evaluate_classification(_encoder(model, chunk_words, backend, threads, dimensions), tr, te, tt, seeds, resamples)
    from rich.table import Table

    table = Table(title=f"{model}: {tr.source} → {te.source} ({seeds} seeds)")
    for col in ("condition", "accuracy [95% CI]", "± seeds", "macro-F1 [95% CI]", "± seeds"):
        table.add_column(col)
    for name, r in (("transfer", res["transfer"]), ("in-language", res["in_language"])):
        if r:
            table.add_row(name, f"{r['accuracy']:.3f} [{r['accuracy_ci95'][0]:.3f}, {r['accuracy_ci95'][1]:.3f}]",
                          f"{r['accuracy_std']:.3f}", f"{r['macro_f1']:.3f} [{r['macro_f1_ci95'][0]:.3f}, "
                          f"{r['macro_f1_ci95'][1]:.3f}]", f"{r['macro_f1_std']:.3f}")
    console.print(table)
    per = Table(title="transfer: F1 per class")
    per.add_column("class")
    per.add_column("F1")
    for k, v in res["transfer"]["per_class_f1"].items():
        per.add_row(k, f"{v:.3f}")
    console.print(per)
    if plot:
        from xlsent.report.plots import confusion_png
        from xlsent.utils.io import write_bytes_atomic

        t = res["transfer"]
        write_bytes_atomic(plot, confusion_png(t["confusion"], t["labels"], f"{model}: transfer (seed 0)"))
        console.print(f"wrote {plot}")
    _write({"model": model, "train": tr.source, "test": te.source, **res}, output)


from xlsent.cli.tagging import eval_ner, eval_pos  # noqa: E402

app.command("ner")(eval_ner)
app.command("pos")(eval_pos)
from xlsent.cli.tagging import eval_adversarial  # noqa: E402

app.command("adversarial")(eval_adversarial)
from xlsent.cli.tagging import eval_titles  # noqa: E402

app.command("titles")(eval_titles)
from xlsent.cli.spans import eval_spans  # noqa: E402

app.command("spans")(eval_spans)


@app.command("align")
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
    backend: Backend = "auto",
    threads: Threads = 0,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """Sentence-alignment strict and lax precision, recall and F1 (Vecalign's scorer, micro-averaged)."""
    place(device, dtype)  # a device that is not there: one line, before any model loads
    from xlsent.api.alignment import align_config
    from xlsent.data.alignment import read_alignment
    from xlsent.data.registry import entries, load
    from xlsent.evaluation.alignment import evaluate_alignment, score_alignments

    output_file(output)
    if bool(dataset) == bool(gold or pred):
        raise XlsentError("give either --gold GOLD --pred PRED, or --dataset bible-align with --model")
    if dataset:
        choice(dataset, [e.name for e in entries("alignment")], "--dataset")
        if not model:
            raise XlsentError("--dataset aligns its documents with a model: give --model (e.g. e5-small)")
        check_backend(backend, threads)
        cfg = align_config(max_overlap, deletion_quantile, 5, plain, runs, length_weight)
        from xlsent.aligner.vecalign import EMBED_BATCH, align_documents
        from xlsent.exporter.load import load_encoder

        docs = load(dataset, "alignment")
        encoder = load_encoder(model, backend=backend, threads=threads, normalize=True, batch_size=EMBED_BATCH)
        scores, _ = evaluate_alignment(docs, lambda d: align_documents(d.src, d.tgt, encoder.encode,
                                                                       encoder.dimension, cfg, ("en", "ny")))
        name = f"{model} on {dataset} ({len(docs)} chapters)"
    else:
        if not (gold and pred):
            raise XlsentError("give both --gold and --pred")
        for p, opt in ((gold, "--gold"), (pred, "--pred")):
            if not p.exists():
                raise XlsentError(f"{p}: no such file or folder ({opt})")
        if gold.is_dir() != pred.is_dir():
            raise XlsentError("--gold and --pred must both be files or both be folders")
        if gold.is_dir():
            names = sorted(p.name for p in gold.iterdir() if p.is_file() and not p.name.endswith(".json"))
            missing = [n for n in names if not (pred / n).is_file()]
            if missing:
                raise XlsentError(f"{pred}: no prediction for {missing[0]} (and {len(missing) - 1} more) — files "
                                  "are matched by name")
            pairs = [(gold / n, pred / n) for n in names]
        else:
            pairs = [(gold, pred)]
        scores = score_alignments([read_alignment(g) for g, _ in pairs], [read_alignment(p) for _, p in pairs])
        name = f"{pred} against {gold}"
    s = scores
    console.print(f"{name}: strict F1 {s.strict_f1:.3f} (P {s.strict_precision:.3f}, R {s.strict_recall:.3f}); "
                  f"lax F1 {s.lax_f1:.3f} (P {s.lax_precision:.3f}, R {s.lax_recall:.3f}); "
                  f"{s.predicted_blocks} predicted, {s.gold_blocks} gold blocks")
    _write({"dataset": dataset, "model": model, **s.to_dict()}, output)


@app.command("run")
def run(
    model: str = typer.Option(None, "--model", "-m", help="registered name or local model folder (a tagger "
                              "folder for ner:/pos: tasks)"),
    tasks: str = typer.Option(None, "--tasks", "-t", help="TASK[,TASK…] (TYPE:DATASET, e.g. "
                              "retrieval:bible-en-ny:dev, mining:udhr:zul, sts:FILE) or a suite: lite | dev | test"),
    output: Path = typer.Option(None, "--output", "-o", help="folder: one result file a task, in MTEB's format"),
    option: list[str] = typer.Option([], "--option", help="a task option KEY=VALUE, repeatable: sample, seed, "
                                     "resamples, similarity, k, chunk_words, teacher, per_class, seeds, n_gold, "
                                     "n_distractors"),
    list_: bool = typer.Option(False, "--list", help="list the named tasks and suites, and exit"),
    dimensions: Dimensions = None,
    backend: Backend = "auto",
    threads: Threads = 0,
    device: Device = "auto",
    dtype: Dtype = "auto",
) -> None:
    """Run declared tasks and suites; each result file is MTEB's format (mteb.TaskResult.from_disk reads it)."""
    from xlsent.api.evaluation import evaluate_tasks
    from xlsent.cli.common import show_note
    from xlsent.evaluation.tasks import SUITES, TYPES, declare, names

    if list_:
        t = Table(title="tasks (TYPE:DATASET; a file works too: retrieval:PAIRS, sts:FILE)")
        for c in ("task", "main score", "labels", "languages"):
            t.add_column(c)
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
    opts = {}
    for o in option:
        key, sep, value = o.partition("=")
        if not sep:
            raise XlsentError(f"--option {o}: write KEY=VALUE (e.g. --option sample=500)")
        opts[key.strip()] = value.strip()
    runs = evaluate_tasks(model, tasks, output, options=opts, backend=backend, threads=threads, device=device,
                          dtype=dtype, dimensions=dimensions, on_note=show_note)
    t = Table(title=f"{model}: {len(runs)} task(s)")
    for c in ("task", "main score", "", "subsets", "seconds"):
        t.add_column(c, justify="left" if c in ("task", "") else "right")
    for r in runs:
        t.add_row(escape(r.task), f"{r.main_score:.4f}", r.main_score_name, str(len(r.scores)),
                  f"{r.evaluation_time:.0f}")
    t.caption = ", ".join(f"{k}: {v[1]}" for k, v in TYPES.items() if any(r.declaration.type == k for r in runs))
    console.print(t)
    if output is not None:
        console.print(f"wrote {len(runs)} file(s) to {output}")
