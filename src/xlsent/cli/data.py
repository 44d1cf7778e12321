"""``xlsent data``: bundled datasets and corpus statistics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, Optional

import typer
from rich.markup import escape
from rich.table import Table

from xlsent.api._common import writes
from xlsent.api.mining import FILTER_PRESETS
from xlsent.cli.common import console, output_file, show_lines, show_note, table
from xlsent.cli.options import Learn, Negatives, OnBadLines, PrintJson, takes
from xlsent.data.bundled import data_dir
from xlsent.data.pair_filter import RANK_BY
from xlsent.data.noise_filters import MAX_Z as NOISE_MAX_Z
from xlsent.data.pairs import load_pairs
from xlsent.data.registry import KINDS, rows as dataset_rows
from xlsent.data.splitting import SPLITTERS
from xlsent.data.structural import TYPES
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_json_atomic, write_text_atomic

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
    from xlsent.data.stats import corpus_stats

    from xlsent.models.handle import load_model

    loaded = load_pairs(source, on_bad_lines=on_bad_lines, dedupe=False)
    tokenizer = load_model(model).model.tokenizer if model else None
    result = {**corpus_stats(loaded.dataset, tokenizer), "source": source, "notes": loaded.notes()}
    if as_json:
        console.print_json(json.dumps(result))
        return
    show_lines(loaded.notes())
    t = table(f"{source}: {result['pairs']} pairs", ["language", "sentences", "unique", "words min", "median", "mean",
                                                     "p95", "max", *(["unk rate", "pieces/word"] if tokenizer else [])])
    for lang, e in result["languages"].items():
        w = e["words"]
        row = [lang, str(e["sentences"]), str(e["unique"]), str(w["min"]), f"{w['median']:.0f}", f"{w['mean']:.1f}",
               f"{w['p95']:.0f}", str(w["max"])]
        if tokenizer is not None:
            row += [f"{e['unk_rate']:.4f}", f"{e['pieces_per_word']:.2f}"]
        t.add_row(*row)
    console.print(t)


@app.command("triplets")
@writes("output")
def triplets(
    source: str = typer.Argument(..., help="bundled dataset (e.g. bible-en-ny:train, udhr) or a pairs file"),
    output: str = typer.Option(..., "--output", "-o", help="TSV to write: anchor<TAB>positive<TAB>negative"),
    negatives: Negatives = typer.Option("section", help="section: another section of the same document; "
                                                  "hard: mined by --teacher"),
    teacher: str = typer.Option("minilm-en", help="model that mines hard negatives"),
    relative_margin: float = typer.Option(0.05, help="hard mining: skip candidates within this share of the positive's score"),
    seed: int = typer.Option(0, help="seed for negative sampling"),
    on_bad_lines: OnBadLines = "error",
) -> None:
    """Cross-lingual triplets from parallel data: anchor = low-resource side, positive = its English translation."""
    output_file(output)
    from xlsent.data.triplets import build_triplets

    from xlsent.models.handle import load_model

    loaded = load_pairs(source, on_bad_lines=on_bad_lines, dedupe=False)
    model = load_model(teacher).model if negatives == "hard" else None
    ds, report = build_triplets(loaded.dataset, negatives, seed, teacher=model, relative_margin=relative_margin)
    show_lines(loaded.notes() + report.lines())
    clean = list(zip(ds["anchor"], ds["positive"], ds["negative"]))
    _write_triplets(output, clean, "the corpus")
    console.print(f"wrote {output} ({len(clean)} triplets, '{negatives}' negatives)")


@app.command("pairs-from-documents")
@takes("device", "dtype")
@writes("output")
def pairs_from_documents_command(
    src: str = typer.Argument(..., help="low-resource documents: JSONL file or bundled (bible:nya, udhr:zul)"),
    tgt: str = typer.Argument(..., help="English documents: JSONL file or bundled (bible:eng, udhr:eng)"),
    output: str = typer.Option(..., "--output", "-o", help="TSV: anchor<TAB>positive<TAB>negative (+ OUTPUT.json)"),
    model: str = typer.Option("e5-small", "--model", "-m", help="model that embeds the section titles"),
    title_threshold: float = typer.Option(0.7, help="title cosine needed to match two sections"),
    min_section_chars: int = typer.Option(200, help="keep matched sections whose texts both exceed this length"),
    max_short_words: int = typer.Option(10, help="drop sentence pairs with a side of this many words or fewer"),
    strip_chars: str = typer.Option("\u200c", help="characters removed from titles and texts (default U+200C ZWNJ)"),
    splitter: Literal[SPLITTERS] = typer.Option("auto", help="sentence splitter"),
    seed: int = typer.Option(0, help="seed for the negatives"),
    run: dict = None,
) -> None:
    """Sentence pairs and triplets from comparable documents with titled sections (Manafi 2025 §3.2.1)."""
    output_file(output)
    from xlsent.api.data import pairs_from_documents

    res = pairs_from_documents(src, tgt, model, title_threshold=title_threshold, min_section_chars=min_section_chars,
                               max_short_words=max_short_words, strip_chars=strip_chars, splitter=splitter, seed=seed,
                               **run)  # run: --device, --dtype
    show_lines(res.lines())
    rows = [(a, p, n or "") for a, p, n in res.triplets]
    _write_triplets(output, rows, "the documents")
    write_json_atomic(Path(output + ".json"), {"src": src, "tgt": tgt, "model": model, "counts": dict(res.counts),
                                                "sections": [list(x) for x in dict.fromkeys(res.sources)]})
    console.print(f"wrote {output} ({len(rows)} pairs; {sum(1 for r in rows if not r[2])} without a negative)")


def _write_triplets(output: str, rows: list[tuple], source: str) -> None:
    bad = sum(any("\t" in x or "\n" in x for x in row) for row in rows)
    if bad:
        raise XlsentError(f"{bad} sentence(s) contain tabs or newlines and cannot be written as TSV — clean {source} "
                          "first")
    write_text_atomic(Path(output), "anchor\tpositive\tnegative\n" + "".join("\t".join(r) + "\n" for r in rows))


FILTERS = typer.Option("default", "--filters", help="noise filters, comma-separated: language (each side against "
                       "its language: CLD2, and xlsent's n-gram identifier where CLD2 cannot judge), copy, near-duplicate, length-ratio, numbers | default (all five) | none")
MAX_Z = typer.Option(NOISE_MAX_Z, "--max-length-z", help="length-ratio filter: remove pairs whose log length ratio lies "
                     "further than this many robust standard deviations from the file's median")


@app.command("filter-pairs")
@takes("device", "dtype")
def filter_pairs_command(
    source: str = typer.Argument(..., help="candidate pairs: a pairs file, or a mined TSV (score<TAB>src<TAB>tgt)"),
    output: str = typer.Option(..., "--output", "-o", help="TSV to write: score<TAB>src<TAB>tgt, best first"),
    preset: Optional[Literal[tuple(p for p in FILTER_PRESETS if p)]] = typer.Option(None, "--preset", "-p", help="paper: Huang et al. 2023 §4.1's cleaning of web-mined "
                               "candidates, exactly — sides under 5 words and any special character ([ ] { } * …) "
                               "removed, the top 2,016 kept; meant for mined candidates, it removes real pairs of a "
                               "translation (default: keep every clean pair)"),
    min_words: int = typer.Option(None, help="drop pairs with a side of fewer words than this (default 0 = off; "
                                  "paper 5)"),
    special_pattern: str = typer.Option(None, help="drop pairs matching this regex (default: markup — an HTML/XML "
                                        "tag, a URL, wiki or table syntax, never punctuation; paper: its special "
                                        "characters)"),
    no_special: bool = typer.Option(False, "--no-special", help="no pattern filter (neither markup nor special "
                                    "characters)"),
    top: int = typer.Option(None, help="keep the N best pairs (default 0 = all; paper 2,016)"),
    rank_by: Literal[RANK_BY] = typer.Option("cosine", help="score: a mined file's score"),
    center: bool = typer.Option(False, help="subtract each side's (language's) mean vector over the candidates "
                                "before cosine / margin / csls. Off by default, as in xlsent mine, where it lowered "
                                "mining F1 (docs/results.md, 'Centering and CSLS'); filtering itself was not measured"),
    model: str = typer.Option("e5-small", "--model", "-m", help="model for cosine / margin / csls ranking"),
    filters: str = FILTERS,
    src_lang: str = typer.Option("", "--src-lang", help="the source side's language (ISO 639-1 or 639-3) for the "
                                 "language filter; default: the file's codes, else detected"),
    tgt_lang: str = typer.Option("", "--tgt-lang", help="the target side's language, the same"),
    max_z: float = MAX_Z,
    threshold: str = typer.Option("none", help="none | auto (xlsent mine's automatic cut on the --rank-by scores; "
                                  "meant for margin) | a number: keep pairs scoring at least this"),
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
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="write lang<TAB>macrolanguage<TAB>score<TAB>"
                                          "text a line here (default: print it)"),
    languages: str = typer.Option("", "--languages", help="candidate codes, comma-separated (default: every "
                                  "language the identifier knows)"),
    learn: Learn = [],
) -> None:
    """The language of each line (ISO 639-3, its macrolanguage, a score: the n-gram model's probability, low for a
    line too short to tell; CLD2's share of the line for a language only CLD2 knows), among every udhr-all
    language, English and CLD2's languages, or among --languages (xlsent.identify)."""
    from xlsent.api.data import identify
    from xlsent.data.langid.ngram import parse_learn

    if not file.is_file():
        raise XlsentError(f"{file}: no such file — give a text file, one text a line")
    teach = parse_learn(learn)
    out = output_file(output) if output else None
    from xlsent.data.text_source import decode_line

    raw = file.read_bytes().split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    lines = [decode_line(file, line, i) for i, line in enumerate(raw, 1)]  # bad UTF-8: the file and line, one line
    found = identify(lines, languages=[x for x in languages.split(",") if x.strip()] or None, learn=teach or None)
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
    train: str = typer.Option(..., "--train", help="training file: BIO (or a bundled tagged set), or with --text "
                              "one text per line"),
    test: str = typer.Option(..., "--test", help="test file of the same kind"),
    model: str = typer.Option("e5-small", "--model", "-m", help="tokenizer for the word overlap (Table 3.4)"),
    text: bool = typer.Option(False, "--text", help="plain text / title-selection files: word overlap only"),
    max_pieces: int = typer.Option(128, help="first N pieces of each text (Table 3.4 uses 128)"),
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
    model: str = typer.Option("e5-small", "--model", "-m", help="model whose sub-token offsets are stored (the one "
                              "`xlsent train scp` will train; another model's are recomputed there, not re-aligned)"),
    types: str = typer.Option(",".join(TYPES), help="structural types to keep"),
    object_deps: str = typer.Option("dobj", help="dependency labels read as objects (add attr,pobj,dative …)"),
    sample: int = typer.Option(0, help="seeded sample of N pairs (0 = all)"),
    seed: int = typer.Option(0, help="sample seed"),
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
