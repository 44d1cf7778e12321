"""``xlsent export``: a model → an ONNX folder (fp32, int8, trimmed vocabulary) that ``--backend onnx`` runs."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from xlsent.cli.common import console, err_console
from xlsent.exporter.quantize import PARTS


def export_command(
    model: str = typer.Argument(..., help="registered name, a model folder a recipe wrote, or any local "
                                "sentence-transformers / Hugging Face folder"),
    output: Path = typer.Option(..., "--output", "-o", help="the folder to write (model.onnx, tokenizer, manifest)"),
    int8: bool = typer.Option(False, "--int8", help="quantise to int8 (the settings below; defaults keep "
                              "low-resource quality, see docs/results.md)"),
    smooth: float = typer.Option(None, help="int8: SmoothQuant α (0 = off; default: the measured best)"),
    fp32_parts: str = typer.Option(None, help="int8: comma-separated parts kept fp32 in every layer "
                                   f"({', '.join(PARTS)}) or in one as PART@LAYER (ffn_out@4) (default: the measured best)"),
    fp32_layers: str = typer.Option("", help="int8: comma-separated 0-based layers kept entirely fp32"),
    attention: bool = typer.Option(False, "--int8-attention", help="int8: also quantise the attention "
                                   "score and value MatMuls (fastest, loses the most)"),
    embeddings: bool = typer.Option(False, "--int8-embeddings", help="int8: also quantise the token table (smaller "
                                    "file, no speed gain)"),
    per_channel: bool = typer.Option(True, help="int8: one weight scale per output channel"),
    reduce_range: bool = typer.Option(False, help="int8: 7-bit weights (CPUs without VNNI)"),
    calibration: str = typer.Option("bible-en-ny:train", help="int8 smoothing: calibration text — a bundled pair set "
                                    "or a file, one text a line (never test data)"),
    keep_vocab: int = typer.Option(None, "--keep-vocab", help="trim the vocabulary: keep the N highest-scoring "
                                   "pieces, plus every single character, special token and piece --vocab-texts uses"),
    vocab_texts: str = typer.Option("bible-en-ny:train", help="with --keep-vocab: keep every piece these texts use "
                                    "(a bundled pair set or a file, one text a line; 'none' = no texts)"),
    tail_rank: int = typer.Option(0, "--tail-rank", help="with --keep-vocab: keep the other pieces too, their rows "
                                  "stored at this rank (truncated SVD) — nothing re-segmented; 0 = remove them"),
    tail_pq: int = typer.Option(0, "--tail-pq", help="with --keep-vocab: keep the other pieces too, each row stored "
                                "as M uint8 product-quantisation codes (M divides the width) — fits the rows far "
                                "better than --tail-rank M at the same parameter count; 0 = off"),
    keep_fp32: bool = typer.Option(False, help="with --int8: keep the fp32 graph too (model.fp32.onnx)"),
) -> None:
    """Export a model to ONNX: the whole sentence-transformers pipeline in one graph, checked against the model."""
    from xlsent.api.exporting import export

    manifest = export(model, output, int8=int8, smooth=smooth, fp32_parts=fp32_parts, fp32_layers=fp32_layers,
                      int8_attention=attention, int8_embeddings=embeddings, per_channel=per_channel,
                      reduce_range=reduce_range, calibration=calibration, keep_vocab=keep_vocab, vocab_texts=vocab_texts,
                      tail_rank=tail_rank, tail_pq=tail_pq, keep_fp32=keep_fp32,
                      on_note=lambda m: err_console.print(escape(m), style="dim")).manifest
    c = manifest.checks
    console.print(f"wrote {output} ({c['size_bytes'] / 2**20:.0f} MiB, {'int8' if int8 else 'fp32'}"
                  f"{', vocabulary ' + format(manifest.vocab['kept'], ',') if manifest.vocab else ''}"
                  f"{_tail_note(manifest.vocab, tail_rank, tail_pq)}"
                  f"): cosine to "
                  f"{model} on {c['texts']} texts min {c['min_cosine_to_source']:.5f}, mean {c['mean_cosine_to_source']:.5f}")


def _tail_note(vocab: dict | None, tail_rank: int, tail_pq: int) -> str:
    if not (vocab and (tail_rank or tail_pq)):
        return ""
    how = f"{tail_pq} codes a row" if tail_pq else f"rank {tail_rank}"
    return f" ({vocab.get('low_rank_rows', 0):,} at {how})"
