"""``xlsent export``: a model → an ONNX folder (fp32, int8, trimmed vocabulary) that ``--backend onnx`` runs."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from xlsent.api.exporting import EXPORT
from xlsent.cli.common import console, err_console
from xlsent.cli.options import declared
from xlsent.exporter.quantize import PARTS


def export_command(
    model: str = typer.Argument(..., help="registered name, a model folder a recipe wrote, or any local "
                                "sentence-transformers / Hugging Face folder"),
    output: Path = typer.Option(..., "--output", "-o", help="the folder to write (model.onnx, tokenizer, manifest)"),
    int8: bool = declared(EXPORT["int8"], "--int8"),
    smooth: float = declared(EXPORT["smooth"]),
    fp32_parts: str = typer.Option(None, help="int8: comma-separated parts kept fp32 in every layer "
                                   f"({', '.join(PARTS)}) or in one as PART@LAYER (ffn_out@4) (default: the measured best)"),
    fp32_layers: str = declared(EXPORT["fp32_layers"]),
    attention: bool = declared(EXPORT["int8_attention"], "--int8-attention"),
    embeddings: bool = declared(EXPORT["int8_embeddings"], "--int8-embeddings"),
    per_channel: bool = declared(EXPORT["per_channel"]),
    reduce_range: bool = declared(EXPORT["reduce_range"]),
    calibration: str = declared(EXPORT["calibration"]),
    keep_vocab: int = declared(EXPORT["keep_vocab"], "--keep-vocab"),
    vocab_texts: str = declared(EXPORT["vocab_texts"]),
    tail_rank: int = declared(EXPORT["tail_rank"], "--tail-rank"),
    tail_pq: int = declared(EXPORT["tail_pq"], "--tail-pq"),
    keep_fp32: bool = declared(EXPORT["keep_fp32"]),
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
