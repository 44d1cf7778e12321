"""``xlsent align``: sentence alignment of translated documents (Vecalign on any model)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

import typer

from xlsent.cli.common import console, output_file
from xlsent.cli.options import RUNTIME, Model, Runs, takes
from xlsent.data.alignment import FORMATS
from xlsent.models.registry import DEFAULT_MODEL
from xlsent.utils.errors import XlsentError


def summary(docs: list[tuple[str, int, int]], alignments: list, seconds: float) -> dict:
    from collections import Counter

    types: Counter = Counter()
    scores = []
    for a in alignments:
        types.update(a.types())
        scores += [c for s, t, c in zip(a.src, a.tgt, a.score) if s and t]
    return {"documents": len(docs), "src_sentences": sum(d[1] for d in docs),
            "tgt_sentences": sum(d[2] for d in docs), "alignments": sum(types.values()),
            "by_type": dict(types.most_common()),
            "mean_score": round(sum(scores) / len(scores), 6) if scores else None,
            "score": "normalised cost of a block (0 identical, about 1 as unlike as random sentences); deletions 0",
            "seconds": round(seconds, 2), "files": [d[0] for d in docs]}


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
    from xlsent.aligner.vecalign import EMBED_BATCH
    from xlsent.api._common import encoder_for
    from xlsent.api.alignment import align, align_config, check_lengths
    from xlsent.data.alignment import read_batch, read_document, read_raw_document, write_alignment
    from xlsent.data.readers import LANG_CODE
    from xlsent.utils.io import write_json_atomic

    cfg = align_config(max_overlap, deletion_quantile, search_buffer, plain, runs, length_weight)
    if batch is not None:
        if src is not None or tgt is not None:
            raise XlsentError("give either SRC TGT or --batch LIST, not both")
        pairs = read_batch(batch)
        if output.exists() and not output.is_dir():
            raise XlsentError(f"{output}: exists and is a file — --batch writes a folder of alignments")
    elif src is None or tgt is None:
        raise XlsentError("give two documents (SRC TGT) or --batch LIST")
    else:
        pairs = [(src, tgt)]
        output_file(output)
    langs = split.split(",") if split else []
    if split and (len(langs) != 2 or not all(LANG_CODE.match(x) for x in langs)):
        raise XlsentError(f"--split takes two language codes, SRC_LANG,TGT_LANG (e.g. en,ny or eng,nya), not '{split}'")
    src_lang, tgt_lang = langs or (None, None)
    docs = []  # every document read and checked before the model loads
    for s, t in pairs:
        s_sents = read_raw_document(s, langs[0]) if langs else read_document(s)
        t_sents = read_raw_document(t, langs[1]) if langs else read_document(t)
        check_lengths(f"{s} / {t}", len(s_sents), len(t_sents), max_length_ratio)
        docs.append((s, t, s_sents, t_sents))
    if pairs_out is not None:
        output_file(pairs_out, "--pairs")
    t0 = time.perf_counter()
    encoder = encoder_for(model, backend=run["backend"], threads=run["threads"], normalize=True, batch_size=EMBED_BATCH)
    alignments, written = [], []
    if batch is not None:
        output.mkdir(parents=True, exist_ok=True)
    for n, (s, t, s_sents, t_sents) in enumerate(docs):  # each pair is xlsent.align's, with the model loaded once
        a = align(s_sents, t_sents, model=encoder, max_overlap=max_overlap, deletion_quantile=deletion_quantile,
                  length_weight=length_weight, search_buffer=search_buffer, runs=runs, plain=plain,
                  max_length_ratio=max_length_ratio, src_lang=src_lang, tgt_lang=tgt_lang,
                  **run).alignment
        path = output / f"{n:05d}-{Path(s).stem}.{fmt}" if batch is not None else output
        write_alignment(path, a, s_sents, t_sents, fmt)
        alignments.append(a)
        written.append((str(path), len(s_sents), len(t_sents)))
    if pairs_out is not None:
        from xlsent.utils.io import write_text_atomic

        rows = [(" ".join(d[2][i] for i in s_ids).replace("\t", " "), " ".join(d[3][j] for j in t_ids).replace("\t", " "))
                for d, a in zip(docs, alignments) for s_ids, t_ids in zip(a.src, a.tgt) if s_ids and t_ids]
        header = f"{langs[0]}\t{langs[1]}\n" if langs else ""
        write_text_atomic(pairs_out, header + "".join(f"{x}\t{y}\n" for x, y in rows))
    report = summary(written, alignments, time.perf_counter() - t0)
    report.update(model=model, config=vars(cfg))
    summary_path = output / "summary.json" if batch is not None else output.with_name(output.name + ".summary.json")
    write_json_atomic(summary_path, report)
    types = ", ".join(f"{k} {v}" for k, v in report["by_type"].items())
    console.print(f"aligned {report['documents']} document pair(s), {report['src_sentences']} × "
                  f"{report['tgt_sentences']} sentences in {report['seconds']:.1f} s: {report['alignments']} blocks "
                  f"({types}); mean score {report['mean_score']}")
    console.print(f"wrote {output} and {summary_path}" + (f"; pairs: {pairs_out}" if pairs_out else ""))
