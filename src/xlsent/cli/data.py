"""``xlsent data``: bundled datasets and corpus statistics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, Optional

import typer
from rich.markup import escape
from rich.table import Table

from xlsent.api._common import writes
from xlsent.api.data import DOCUMENTS, LANGID, OVERLAP, STRUCTURAL, TRIPLETS
from xlsent.api.mining import FILTER, FILTER_PRESETS
from xlsent.cli.common import console, output_file, show_lines, show_note, table
from xlsent.cli.options import Learn, Negatives, OnBadLines, PrintJson, declared, takes
from xlsent.data.filters.pair_filter import RANK_BY
from xlsent.data.sets.bundled import data_dir
from xlsent.data.sets.registry import KINDS, rows as dataset_rows
from xlsent.data.text.splitting import SPLITTERS
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_text_atomic

app = typer.Typer(help="Bundled datasets and corpus statistics.", no_args_is_help=True)


@app.command("list")
def list_data(
    kind: Optional[Literal[KINDS]] = typer.Option(None, "--kind", help="only this kind"),
    as_json: bool = typer.Option(False, "--json", help="print JSON: one object a set, with the files it reads"),
) -> None:
    """Every dataset shipped with xlsent, from the one registry (xlsent.data.registry): name, kind, languages,
    splits, licence and what its labels are (gold, silver = projected, substitute). NAME:CODE selects one language
    of a set marked so."""
    found = dataset_rows(kind)
    if as_json:
        console.print_json(json.dumps(found))
        return
    wide = console.width >= 150  # a narrow terminal: the columns that decide a choice, whole
    cols = ("name", "kind", "languages", "splits", "labels") + (("licence", "description") if wide else ())
    t = Table(title=f"bundled datasets ({data_dir()})",
              caption=None if wide else "licence and description: a wider terminal, or --json")
    for c in cols:
        t.add_column(c, no_wrap=c in ("name", "kind"), overflow="fold", min_width=9 if c == "languages" else None)
    for r in found:
        t.add_row(*(escape(r[c]) for c in cols))
    console.print(t)


@app.command("stats")
def stats(
    source: str = typer.Argument(..., help="dataset name (e.g. udhr, bible-en-ny:train) or pairs file"),
    model: str = typer.Option(None, "--model", "-m", help="also report this model's tokenizer: unk rate, pieces/word"),
    on_bad_lines: OnBadLines = "error",
    as_json: PrintJson = False,
) -> None:
    """Pairs, languages, length distribution; with --model, tokenizer coverage per language."""
    from xlsent.api.data import corpus_stats

    result = corpus_stats(source, model, on_bad_lines=on_bad_lines)
    if as_json:
        console.print_json(json.dumps(result))
        return
    show_lines(result["notes"])
    t = table(f"{source}: {result['pairs']} pairs", ["language", "sentences", "unique", "words min", "median", "mean",
                                                     "p95", "max", *(["unk rate", "pieces/word"] if model else [])])
    for lang, e in result["languages"].items():
        w = e["words"]
        row = [lang, str(e["sentences"]), str(e["unique"]), str(w["min"]), f"{w['median']:.0f}", f"{w['mean']:.1f}",
               f"{w['p95']:.0f}", str(w["max"])]
        if model:
            row += [f"{e['unk_rate']:.4f}", f"{e['pieces_per_word']:.2f}"]
        t.add_row(*row)
    console.print(t)


@app.command("triplets")
def triplets(
    source: str = typer.Argument(..., help="bundled dataset (e.g. bible-en-ny:train, udhr) or a pairs file"),
    output: str = typer.Option(..., "--output", "-o", help="TSV to write: anchor<TAB>positive<TAB>negative"),
    negatives: Negatives = declared(TRIPLETS["negatives"]),
    teacher: str = declared(TRIPLETS["teacher"]),
    relative_margin: float = declared(TRIPLETS["relative_margin"]),
    seed: int = declared(TRIPLETS["seed"]),
    on_bad_lines: OnBadLines = "error",
) -> None:
    """Cross-lingual triplets from parallel data: anchor = low-resource side, positive = its English translation."""
    from xlsent.api.data import triplets as build

    clean = build(source, output, negatives=negatives, teacher=teacher, relative_margin=relative_margin, seed=seed,
                  on_bad_lines=on_bad_lines, on_note=lambda line: show_lines([line]))
    console.print(f"wrote {output} ({len(clean)} triplets, '{negatives}' negatives)")


@app.command("pairs-from-documents")
@takes("device", "dtype")
def pairs_from_documents_command(
    src: str = typer.Argument(..., help="low-resource documents: JSONL file or bundled (bible:nya, udhr:zul)"),
    tgt: str = typer.Argument(..., help="English documents: JSONL file or bundled (bible:eng, udhr:eng)"),
    output: str = typer.Option(..., "--output", "-o", help="TSV: anchor<TAB>positive<TAB>negative (+ OUTPUT.json)"),
    model: str = declared(DOCUMENTS["model"], "--model", "-m"),
    title_threshold: float = declared(DOCUMENTS["title_threshold"]),
    min_section_chars: int = declared(DOCUMENTS["min_section_chars"]),
    max_short_words: int = declared(DOCUMENTS["max_short_words"]),
    strip_chars: str = declared(DOCUMENTS["strip_chars"]),
    splitter: Literal[SPLITTERS] = declared(DOCUMENTS["splitter"]),
    seed: int = declared(DOCUMENTS["seed"]),
    run: dict = None,
) -> None:
    """Sentence pairs and triplets from comparable documents with titled sections (Manafi 2025 §3.2.1)."""
    from xlsent.api.data import pairs_from_documents

    res = pairs_from_documents(src, tgt, model, title_threshold=title_threshold, min_section_chars=min_section_chars,
                               max_short_words=max_short_words, strip_chars=strip_chars, splitter=splitter, seed=seed,
                               **run, output=output, on_note=lambda line: show_lines([line]))  # run: --device, --dtype
    rows = res.triplets
    console.print(f"wrote {output} ({len(rows)} pairs; {sum(1 for r in rows if not r[2])} without a negative)")


@app.command("filter-pairs")
@takes("device", "dtype")
def filter_pairs_command(
    source: str = typer.Argument(..., help="candidate pairs: a pairs file, or a mined TSV (score<TAB>src<TAB>tgt)"),
    output: str = typer.Option(..., "--output", "-o", help="TSV to write: score<TAB>src<TAB>tgt, best first"),
    preset: Optional[Literal[tuple(p for p in FILTER_PRESETS if p)]] = declared(FILTER["preset"], "--preset", "-p"),
    min_words: int = declared(FILTER["min_words"]),
    special_pattern: str = declared(FILTER["special_pattern"]),
    no_special: bool = typer.Option(False, "--no-special", help="no pattern filter (neither markup nor special "
                                    "characters)"),
    top: int = declared(FILTER["top"]),
    rank_by: Literal[RANK_BY] = declared(FILTER["rank_by"]),
    center: bool = declared(FILTER["center"]),
    model: str = declared(FILTER["model"], "--model", "-m"),
    filters: str = declared(FILTER["filters"], "--filters"),
    src_lang: str = declared(FILTER["src_lang"], "--src-lang"),
    tgt_lang: str = declared(FILTER["tgt_lang"], "--tgt-lang"),
    max_z: float = declared(FILTER["max_z"], "--max-length-z"),
    threshold: str = declared(FILTER["threshold"]),
    on_bad_lines: OnBadLines = "error",
    learn: Learn = [],
    run: dict = None,
) -> None:
    """Clean pairs, keeping every clean pair of a translation: normalisation, empty sides, markup, duplicates and the
    noise filters, each counted (with examples) in OUTPUT.json; ranked by similarity. --preset paper: Huang et al.
    2023 §4.1's filter of mined candidates (top 2,016)."""
    from xlsent.api.mining import filter_pairs
    from xlsent.data.langid.ngram import parse_learn

    res = filter_pairs(source, output, model=model, preset=preset, min_words=min_words, special_pattern=special_pattern,
                       special=not no_special, top=top, rank_by=rank_by, center=center, filters=filters,
                       src_lang=src_lang, tgt_lang=tgt_lang, max_z=max_z, threshold=threshold,
                       on_bad_lines=on_bad_lines, learn=parse_learn(learn) or None, **run)
    show_lines(res.about["read"] + res.notes)
    n_in = res.report.rows_in
    console.print(f"the filters removed {n_in - res.screened} of {n_in} pairs ({res.removed_share:.1%})")
    console.print(f"wrote {output} ({len(res.pairs)} of {n_in} pairs, ranked by {rank_by}) and {output}.json")


@app.command("langid")
@writes("output")
def langid_command(
    file: Path = typer.Argument(..., metavar="FILE", help="a UTF-8 text file, one text a line"),
    output: Optional[Path] = declared(LANGID["output"], "--output", "-o"),
    languages: str = declared(LANGID["languages"], "--languages"),
    learn: Learn = [],
) -> None:
    """The language of each line (ISO 639-3, its macrolanguage, a score: the n-gram model's probability, low for a
    line too short to tell; CLD2's share of the line for a language only CLD2 knows), among every udhr-all
    language, English and CLD2's languages, or among --languages (xlsent.identify)."""
    from xlsent.api.data import identify_file
    from xlsent.data.langid.ngram import parse_learn

    if not file.is_file():
        raise XlsentError(f"{file}: no such file — give a text file, one text a line")
    teach = parse_learn(learn)
    out = output_file(output) if output else None
    lines, found = identify_file(file, languages=[x for x in languages.split(",") if x.strip()] or None,
                                 learn=teach or None)
    # a line of the file is a row of the output: a character Python takes for a line break (\r, U+2028…) is a space
    rows = "".join(f"{x.lang or ''}\t{x.macrolanguage or ''}\t{x.score:.3f}\t{' '.join(t.splitlines())}\n"
                   for x, t in zip(found, lines))
    if out is None:
        typer.echo(rows, nl=False)  # tab-separated, as written to a file: for a pipe
        return
    write_text_atomic(out, rows)
    from collections import Counter

    top = Counter(x.lang or "(none)" for x in found).most_common(8)
    console.print(f"{len(lines)} lines: " + ", ".join(f"{lang} {n}" for lang, n in top) + f" — wrote {out}")


@app.command("overlap")
def overlap(
    train: str = declared(OVERLAP["train"], "--train"),
    test: str = declared(OVERLAP["test"], "--test"),
    model: str = declared(OVERLAP["model"], "--model", "-m"),
    text: bool = declared(OVERLAP["text"], "--text"),
    max_pieces: int = declared(OVERLAP["max_pieces"]),
    as_json: PrintJson = False,
) -> None:
    """How much a test file shares with a training file (Manafi 2025): entity overlap (Table 3.3) and word overlap
    under a model's tokenizer (Table 3.4)."""
    from xlsent.api.data import overlap as measure

    out = measure(train, test, model, text, max_pieces)
    if as_json:
        console.print_json(json.dumps(out))
        return
    if "entity" in out:
        e = out["entity"]
        console.print(f"entity overlap (Table 3.3): {100 * e['entity_token_overlap']:.2f}% of {e['entity_tokens']} test "
                      f"entity tokens occur in training with the same label ({100 * e['of_all_test_tokens']:.2f}% of "
                      f"all test tokens); {100 * e['distinct_entities_shared']:.1f}% of distinct test entities")
    w = out["word"]
    console.print(f"word overlap (Table 3.4, {model}, first {max_pieces} pieces): {100 * w['piece_overlap']:.2f}% of "
                  f"test pieces, {100 * w['distinct_piece_overlap']:.1f}% of distinct ones")


@app.command("structural-words")
def structural_words(
    pairs: str = typer.Argument(..., help="parallel pairs: a dataset name (bible-en-ny:train) or a pairs file with "
                                "an English side"),
    output: Path = typer.Option(..., "--output", "-o", help="SPANS.jsonl[.gz] (+ SPANS.jsonl.meta.json: counts, "
                                "model, prompt)"),
    model: str = declared(STRUCTURAL["model"], "--model", "-m"),
    types: str = declared(STRUCTURAL["types"]),
    object_deps: str = declared(STRUCTURAL["object_deps"]),
    sample: int = declared(STRUCTURAL["sample"]),
    seed: int = declared(STRUCTURAL["seed"]),
    on_bad_lines: OnBadLines = "error",
) -> None:
    """Subject, verb, object and entity spans of the English side, aligned to the other side (Chen et al. 2023 §3.1):
    spaCy + the paper's filters + eflomal; every filter and drop counted."""
    from rich.progress import Progress

    from xlsent.api.data import structural_words as build

    with Progress(transient=True) as bar:
        task = bar.add_task("spaCy parse (English side)", total=None)
        meta = build(pairs, output, model, [t.strip() for t in types.split(",") if t.strip()],
                     [d.strip() for d in object_deps.split(",") if d.strip()], sample, seed, on_bad_lines, show_note,
                     lambda stage, done, total: bar.update(task, completed=done, total=total))
    console.print(f"wrote {output} ({meta['records']} pairs, {meta['spans']} spans) and {meta['meta_path']}")
