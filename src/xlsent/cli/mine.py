"""``xlsent mine``: margin-scored bitext mining of two monolingual files."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

import typer
from rich.markup import escape

from xlsent.api.mining import INDEXES
from xlsent.cli.common import console, err_console
from xlsent.cli.options import RAY, RUNTIME, Dimensions, K, Learn, Margin, MatchMode, Model, StoredPrecision, takes
from xlsent.data.splitting import SPLITTERS
from xlsent.models.registry import DEFAULT_MODEL


@takes(*RUNTIME, *RAY)
def mine_command(
    src: Path = typer.Argument(..., help="source-language file: one sentence per line; with --documents one "
                               "document per line, a document JSONL, or bundled documents (bible:eng, udhr:eng)"),
    tgt: Path = typer.Argument(..., help="target-language file, as SRC (bundled: bible:nya, udhr:CODE)"),
    output: Path = typer.Option(..., "--output", "-o", help="TSV of score<TAB>src<TAB>tgt, best first (+ OUTPUT.json)"),
    model: Model = DEFAULT_MODEL,
    workdir: Path = typer.Option(None, "--workdir", help="embeddings, indexes, search shards (default OUTPUT.work); "
                                 "a killed run resumes from it"),
    k: K = 4,
    mode: MatchMode = "max",
    margin: Margin = typer.Option("ratio", help="absolute: plain cosine"),
    threshold: str = typer.Option("auto", help="auto: a cut estimated from the score distribution (printed and "
                                  "stored in OUTPUT.json) | none: every one-to-one candidate | a number: keep pairs "
                                  "scoring at least this"),
    known: Optional[Path] = typer.Option(None, "--known", help="pairs known to translate each other (TSV "
                                         "src<TAB>tgt or JSONL, at least 10 the model retrieves; e.g. seed pairs it did not train "
                                         "on): --threshold auto is anchored on where they score in this pool"),
    dedupe: bool = typer.Option(True, help="forward/backward: each sentence in at most one pair"),
    center: bool = typer.Option(False, help="per-language centering: subtract each side's mean vector before "
                                "search and margins. Off by default: it lowered mining F1 on development data — a side's "
                                "mean also holds its topics (measured effect: docs/results.md, 'Centering and CSLS')"),
    index: Literal[INDEXES] = typer.Option("auto", help="the faiss index searched"),
    nprobe: int = typer.Option(64, help="IVF cells visited per query"),
    nlist: int = typer.Option(0, help="IVF cells (0 = 4·√n)"),
    shard_size: int = typer.Option(50_000, help="sentences per shard (the unit of resume)"),
    precision: StoredPrecision = typer.Option("float16", "--precision", help="how the embeddings are stored; int8: 1 "
                                              "byte + a scale per sentence; ubinary: stored as int8, searched by sign "
                                              "bits (each coordinate against the searched side's mean; d/8 bytes a "
                                              "sentence in the index), the candidates re-scored with the int8 vectors; "
                                              "mining F1 of each: docs/results.md, 'Bitext mining'"),
    rescore: int = typer.Option(10, help="ubinary: k × this many candidates by Hamming distance are re-scored with "
                                "the int8 vectors"),
    search_dimensions: Optional[int] = typer.Option(None, "--search-dimensions", help="ubinary: the index keeps the "
                                                    "sign bits of the first N coordinates only (N/8 bytes a sentence; "
                                                    "a multiple of 8); the candidates are re-scored with every "
                                                    "coordinate — for a model trained with Matryoshka widths"),
    index_groups: int = typer.Option(1, "--index-groups", help="IVF: split each side's sub-indexes into G search "
                                     "groups; a worker holds one group at a time (about a side's index ÷ G in "
                                     "memory) and the groups' k nearest are merged; exact search ignores it"),
    memory_gib: float = typer.Option(4.0, help="memory budget of encoding and search: bounds the shard size and picks ivf vs "
                                    "ivfpq (the final selection's memory comes on top: docs/experiments/bitext-mining.md, "
                                    "'Selection memory')"),
    batch_size: int = typer.Option(64, help="sentences per encoding batch"),
    documents: bool = typer.Option(False, "--documents", help="split into sentences: each line of a text file, "
                                   "or each section of a document JSONL / bundled documents"),
    src_lang: str = typer.Option("", help="source language (ISO 639-1 or 639-3, e.g. ny, eng): for --documents "
                                 "splitting (document JSONL: default its 'lang') and the language filter (default: "
                                 "detected from the pairs)"),
    tgt_lang: str = typer.Option("", help="target language, the same"),
    filters: str = typer.Option("default", "--filters", help="noise filters on the mined pairs, as xlsent data "
                                "filter-pairs: language, copy, near-duplicate, length-ratio, numbers | default (all "
                                "five) | none; each counted, with examples, in OUTPUT.json"),
    splitter: Literal[SPLITTERS] = typer.Option("auto", help="the sentence splitter of --documents"),
    overwrite: bool = typer.Option(False, help="discard a work folder left by another job"),
    learn: Learn = [],
    dimensions: Dimensions = None,
    run: dict = None,
) -> None:
    """Mine parallel sentences from two monolingual files (LASER margin scoring, faiss search, resumable)."""
    from xlsent.api.mining import mine
    from xlsent.data.langid.ngram import parse_learn

    result = mine(src, tgt, model=model, threshold=threshold, output=output, workdir=workdir, k=k, mode=mode,
                  margin=margin, dedupe=dedupe, center=center, index=index, nprobe=nprobe, nlist=nlist,
                  shard_size=shard_size, precision=precision, memory_gib=memory_gib, batch_size=batch_size,
                  documents=documents, src_lang=src_lang, tgt_lang=tgt_lang, filters=filters, splitter=splitter,
                  overwrite=overwrite, learn=parse_learn(learn) or None, truncate_dim=dimensions, rescore=rescore, search_dimensions=search_dimensions,
                  index_groups=index_groups, known_pairs=known, **run, on_note=lambda line: err_console.print(f"[dim]{line}[/dim]"), console=err_console,
                  show_progress_bar=True)
    summary = output.with_name(output.name + ".json")
    s = result.summary
    sel = s["selection"]
    if "auto_threshold" in sel:
        a = sel["auto_threshold"]
        if a["threshold"] is None:
            err_console.print(f"[yellow]threshold auto: {escape(a['note'])}[/yellow]")
        else:
            err_console.print(f"threshold auto: {a['threshold']:.4f} (expected precision {a['expected_precision']:.2f}, "
                              f"recall {a['expected_recall']:.2f}; {a['share_translations']:.0%} of the candidates "
                              "look like translations) — --threshold none keeps all, a number fixes the cut")
            if "known_pairs" in sel:
                err_console.print(f"[dim]threshold auto: {escape(a['note'])}[/dim]")
    if "removed_below_threshold" in sel:
        shown = f"{sel['auto_threshold']['threshold']:.4f}" if "auto_threshold" in sel else threshold
        err_console.print(f"[dim]threshold {shown}: removed {sel['removed_below_threshold']} of "
                          f"{sel['candidates']} candidate pairs[/dim]")
    noise = s.get("noise_filters")
    if noise:
        for line in noise["notes"] + [f"filter {f['filter']} removed {f['removed']} ({f['why']})"
                                      for f in noise["filters"]]:
            err_console.print(f"[dim]{escape(line)}[/dim]")
    if "removed_sentence_already_paired" in sel:
        err_console.print(f"[dim]one-to-one: removed {sel['removed_sentence_already_paired']} candidate pairs "
                          "whose source or target was already in a better-scored pair[/dim]")
    console.print(f"{s['pairs']} pairs from {s['sentences']['src']} × {s['sentences']['tgt']} sentences "
                  f"(index {s['index']['fwd']}/{s['index']['bwd']}; search {s['timings_s']['search_s']:.1f} s, "
                  f"encode {s['timings_s']['encode_s']:.1f} s; peak {s['peak_rss_gib']:.2f} GiB)")
    console.print(f"pairs: {output}\nsummary: {summary}")
