"""``xlsent export``: a model → an ONNX folder (fp32, int8, trimmed vocabulary) that ``--backend onnx`` runs."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from xlsent.cli.common import at_least, console, err_console
from xlsent.export.quantize import PARTS
from xlsent.utils.errors import XlsentError


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
    from xlsent.export.folder import export_model, is_export_folder
    from xlsent.export.quantize import Int8Settings, default_int8
    from xlsent.export.vocab import VocabSettings

    if output.exists() and not output.is_dir():
        raise XlsentError(f"--output {output}: exists and is a file — give a folder")
    if output.is_dir() and any(output.iterdir()) and not is_export_folder(output):
        raise XlsentError(f"--output {output}: a folder that is not an export — choose an empty or new folder")
    int8_options = (smooth, fp32_parts, fp32_layers, attention, embeddings, reduce_range)
    if not int8 and any(x not in (None, "", False) for x in int8_options):
        raise XlsentError("--smooth, --fp32-parts, --fp32-layers, --int8-attention, --int8-embeddings "
                          "and --reduce-range apply to --int8 only — add --int8")
    settings = None
    if int8:
        base = default_int8()
        try:
            layers = [int(x) for x in fp32_layers.split(",") if x.strip()]
        except ValueError:
            raise XlsentError(f"--fp32-layers {fp32_layers!r}: give comma-separated layer numbers, e.g. 0,11") from None
        settings = Int8Settings(
            per_channel=per_channel, reduce_range=reduce_range, attention=attention, embeddings=embeddings,
            fp32_parts=base.fp32_parts if fp32_parts is None else _parts(fp32_parts),
            fp32_layers=layers, smooth=base.smooth if smooth is None else smooth, calibration=calibration)
        if settings.smooth > 0:
            _check_text_source(calibration, "--calibration")
    vocab = None
    if (tail_rank or tail_pq) and keep_vocab is None:
        raise XlsentError(f"{'--tail-rank' if tail_rank else '--tail-pq'} applies to --keep-vocab only — add "
                          "--keep-vocab N (the pieces that keep full rows)")
    if keep_vocab is not None:
        at_least(keep_vocab, 0, "--keep-vocab")
        at_least(tail_rank, 0, "--tail-rank")
        at_least(tail_pq, 0, "--tail-pq")
        texts = None if vocab_texts.lower() == "none" else vocab_texts
        if texts:
            _check_text_source(texts, "--vocab-texts")
        vocab = VocabSettings(top=keep_vocab, texts=texts, tail_rank=tail_rank, tail_pq=tail_pq)
        _check_tail_pq(model, tail_pq)
    manifest = export_model(model, output, int8=settings, keep_vocab=vocab, keep_fp32=keep_fp32,
                            log=lambda m: err_console.print(escape(m), style="dim"))
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


def _check_tail_pq(model: str, slots: int) -> None:
    """--tail-pq must divide the model's width: said before the model loads, when its config can be read."""
    if not slots:
        return
    import json

    from xlsent.models.registry import REGISTRY

    if model in REGISTRY:
        width = REGISTRY[model].width
    else:
        try:  # a local folder's config; anything else is checked by the export itself, after loading
            config = json.loads((Path(model) / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        width = config.get("hidden_size") or config.get("d_model")
    if width:
        from xlsent.export.tail_embedding import check_slots

        check_slots(int(width), slots)


def _parts(option: str) -> list[str]:
    return [] if option.strip().lower() == "none" else [p.strip() for p in option.split(",") if p.strip()]


def _check_text_source(spec: str, option: str) -> None:
    from xlsent.data.bundled import is_bundled

    if not is_bundled(spec) and not Path(spec).is_file():
        raise XlsentError(f"{option} {spec}: neither a bundled pair set (xlsent data list) nor a file")
