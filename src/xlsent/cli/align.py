"""``xlsent align``: sentence alignment of translated documents (Vecalign on any model)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from xlsent.api.alignment import ALIGN
from xlsent.cli.common import console
from xlsent.cli.options import RUNTIME, Model, Runs, declared, takes
from xlsent.data.formats.alignment import FORMATS
from xlsent.models.registry import DEFAULT_MODEL


@takes(*RUNTIME)
def align_command(
    src: Path = typer.Argument(None, help="source document: one sentence a line (or raw text with --split)"),
    tgt: Path = typer.Argument(None, help="target document, the same"),
    output: Path = typer.Option(..., "--output", "-o", help="the alignment file (a folder with --batch); a summary "
                                "JSON is written beside it"),
    batch: Path = declared(ALIGN["batch"], "--batch"),
    pairs_out: Path = declared(ALIGN["pairs_out"], "--pairs"),
    split: str = declared(ALIGN["split"], "--split"),
    fmt: Literal[FORMATS] = declared(ALIGN["fmt"], "--format"),
    model: Model = DEFAULT_MODEL,
    max_overlap: int = declared(ALIGN["max_overlap"], "--max-overlap"),
    deletion_quantile: float = declared(ALIGN["deletion_quantile"]),
    length_weight: float = declared(ALIGN["length_weight"], "--length-weight"),
    search_buffer: int = declared(ALIGN["search_buffer"]),
    plain: bool = declared(ALIGN["plain"], "--plain"),
    runs: Runs = declared(ALIGN["runs"], "--runs"),
    max_length_ratio: float = declared(ALIGN["max_length_ratio"], "--max-length-ratio"),
    run: dict = None,
) -> None:
    """Align the sentences of two translated documents (Thompson & Koehn 2019, Vecalign): 1-1, 1-N, N-1 and
    N-M blocks and deletions, in time and memory linear in the documents' length."""
    from xlsent.api.alignment import align_files

    report = align_files(src, tgt, output, batch=batch, pairs_out=pairs_out, split=split, fmt=fmt, model=model,
                         max_overlap=max_overlap, deletion_quantile=deletion_quantile, length_weight=length_weight,
                         search_buffer=search_buffer, plain=plain, runs=runs, max_length_ratio=max_length_ratio, **run)
    types = ", ".join(f"{k} {v}" for k, v in report["by_type"].items())
    console.print(f"aligned {report['documents']} document pair(s), {report['src_sentences']} × "
                  f"{report['tgt_sentences']} sentences in {report['seconds']:.1f} s: {report['alignments']} blocks "
                  f"({types}); mean score {report['mean_score']}")
    console.print(f"wrote {output} and {report['summary_path']}" + (f"; pairs: {pairs_out}" if pairs_out else ""))
