"""``xlsent align``: sentence alignment of translated documents (Vecalign on any model)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from xlsent.cli.common import console
from xlsent.cli.options import RUNTIME, Model, Runs, takes
from xlsent.data.alignment import FORMATS
from xlsent.models.registry import DEFAULT_MODEL


@takes(*RUNTIME)
def align_command(
    src: Path = typer.Argument(None, help="source document: one sentence a line (or raw text with --split)"),
    tgt: Path = typer.Argument(None, help="target document, the same"),
    output: Path = typer.Option(..., "--output", "-o", help="the alignment file (a folder with --batch); a summary "
                                "JSON is written beside it"),
    batch: Path = typer.Option(None, "--batch", help="a list of document pairs, 'SRC<TAB>TGT' a line: every pair "
                               "aligned with the model loaded once, one file each in the --output folder"),
    pairs_out: Path = typer.Option(None, "--pairs", help="also write the aligned blocks (deletions left out) as a "
                                   "pairs file, src<TAB>tgt, with a language header when --split names the "
                                   "languages: ready for xlsent data filter-pairs and xlsent train"),
    split: str = typer.Option("", "--split", help="SRC_LANG,TGT_LANG: the documents are raw text, split into "
                              "sentences first with xlsent's splitter"),
    fmt: Literal[FORMATS] = typer.Option("tsv", "--format", help="tsv: src_ids, tgt_ids, score, src_text, "
                                         "tgt_text; vecalign: [0, 1]:[2]:0.231"),
    model: Model = DEFAULT_MODEL,
    max_overlap: int = typer.Option(3, "--max-overlap", help="the most sentences on one side of a block: steps "
                                    "a-b with a + b ≤ this + 1 (3: 1-1, 1-2, 2-1, 1-3, 2-2, 3-1)"),
    deletion_quantile: float = typer.Option(0.02, help="a deleted sentence costs this quantile of random sentence "
                                            "pairs' costs (higher: fewer deletions; measured: "
                                            "docs/experiments/alignment-and-filters.md, 'Deletion penalty')"),
    length_weight: float = typer.Option(0.1, "--length-weight", help="weight of Gale–Church's length cost added to "
                                        "each block's (0: Vecalign's cosine cost alone; measured effect: "
                                        "docs/experiments/alignment-and-filters.md, 'Length cost')"),
    search_buffer: int = typer.Option(5, help="coarse-to-fine search: nodes on each side of the coarse path"),
    plain: bool = typer.Option(False, "--plain", help="the baseline: 1-1 steps and deletions, cost 1 − cosine (no "
                               "overlaps, no normalisation)"),
    runs: Runs = typer.Option("mean", "--runs", help="mean: only the sentences embedded, a run's vector their "
                              "normalised sum (--max-overlap times fewer texts); concat: each run embedded as its joined "
                              "text (Vecalign); measured: docs/experiments/alignment-and-filters.md, 'Run vectors'"),
    max_length_ratio: float = typer.Option(4.0, "--max-length-ratio", help="refuse a document pair whose sentence "
                                           "counts differ by more than this factor (it is probably not a translation "
                                           "of the same text)"),
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
