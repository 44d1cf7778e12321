"""``xlsent mine``: margin-scored bitext mining of two monolingual files."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

import typer
from rich.markup import escape

from xlsent.api.mining import INDEXES, MINE
from xlsent.cli.common import console, err_console
from xlsent.cli.options import (RAY, RUNTIME, Dimensions, K, Learn, Margin, MatchMode, Model, StoredPrecision, declared,
                                takes)
from xlsent.data.text.splitting import SPLITTERS
from xlsent.models.registry import DEFAULT_MODEL


@takes(*RUNTIME, *RAY)
def mine_command(
    src: Path = typer.Argument(..., help="source-language file: one sentence per line; with --documents one "
                               "document per line, a document JSONL, or bundled documents (bible:eng, udhr:eng)"),
    tgt: Path = typer.Argument(..., help="target-language file, as SRC (bundled: bible:nya, udhr:CODE)"),
    output: Path = typer.Option(..., "--output", "-o", help="TSV of score<TAB>src<TAB>tgt, best first (+ OUTPUT.json)"),
    model: Model = DEFAULT_MODEL,
    workdir: Path = declared(MINE["workdir"], "--workdir"),
    k: K = 4,
    mode: MatchMode = "max",
    margin: Margin = declared(MINE["margin"]),
    threshold: str = declared(MINE["threshold"]),
    known: Optional[Path] = declared(MINE["known_pairs"], "--known"),
    dedupe: bool = declared(MINE["dedupe"]),
    center: bool = declared(MINE["center"]),
    index: Literal[INDEXES] = declared(MINE["index"]),
    nprobe: int = declared(MINE["nprobe"]),
    nlist: int = declared(MINE["nlist"]),
    shard_size: int = declared(MINE["shard_size"]),
    precision: StoredPrecision = declared(MINE["precision"], "--precision"),
    rescore: int = declared(MINE["rescore"]),
    search_dimensions: Optional[int] = declared(MINE["search_dimensions"], "--search-dimensions"),
    index_groups: int = declared(MINE["index_groups"], "--index-groups"),
    memory_gib: float = declared(MINE["memory_gib"]),
    batch_size: int = declared(MINE["batch_size"]),
    documents: bool = declared(MINE["documents"], "--documents"),
    src_lang: str = declared(MINE["src_lang"]),
    tgt_lang: str = declared(MINE["tgt_lang"]),
    filters: str = declared(MINE["filters"], "--filters"),
    splitter: Literal[SPLITTERS] = declared(MINE["splitter"]),
    overwrite: bool = declared(MINE["overwrite"]),
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
