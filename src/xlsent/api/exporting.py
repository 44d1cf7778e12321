"""ONNX export of a model's whole sentence-transformers pipeline (``xlsent export``): fp32, int8, a trimmed
vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlsent.api._common import Note, check_options, writes
from xlsent.utils.errors import XlsentError, named
from xlsent.utils.options import Option, at_least

#: :func:`export`'s options, each declared once (``xlsent export``'s built from them)
EXPORT: dict[str, Option] = {
    "keep_vocab": at_least(0, None, "trim the vocabulary: keep the N highest-scoring pieces, plus every single "
                           "character, special token and piece --vocab-texts uses"),
    "tail_rank": at_least(0, 0, "with --keep-vocab: keep the other pieces too, their rows stored at this rank "
                          "(truncated SVD) — nothing re-segmented; 0 = remove them"),
    "tail_pq": at_least(0, 0, "with --keep-vocab: keep the other pieces too, each row stored as M uint8 "
                        "product-quantisation codes (M divides the width) — fits the rows far better than "
                        "--tail-rank M at the same parameter count; 0 = off"),
    "int8": Option(False, help="quantise to int8 (the settings below; defaults keep low-resource quality, see "
                               "docs/results.md)"),
    "smooth": Option(None, help="int8: SmoothQuant α (0 = off; default: the measured best)"),
    "fp32_layers": Option("", help="int8: comma-separated 0-based layers kept entirely fp32"),
    "int8_attention": Option(False, help="int8: also quantise the attention score and value MatMuls (fastest, loses "
                                         "the most)"),
    "int8_embeddings": Option(False, help="int8: also quantise the token table (smaller file, no speed gain)"),
    "per_channel": Option(True, help="int8: one weight scale per output channel"),
    "reduce_range": Option(False, help="int8: 7-bit weights (CPUs without VNNI)"),
    "calibration": Option("bible-en-ny:train", help="int8 smoothing: calibration text — a bundled pair set or a "
                                                    "file, one text a line (never test data)"),
    "vocab_texts": Option("bible-en-ny:train", help="with --keep-vocab: keep every piece these texts use (a bundled "
                                                    "pair set or a file, one text a line; 'none' = no texts)"),
    "keep_fp32": Option(False, help="with --int8: keep the fp32 graph too (model.fp32.onnx)"),
}


@dataclass
class ExportResult:
    """An exported folder (``model.onnx``, tokenizer, ``xlsent_onnx.json``) and its manifest."""

    output: Path
    manifest: Any  # xlsent.exporter.folder's manifest: checks (cosine to the source model, size), vocab, settings

    @property
    def checks(self) -> dict:
        return self.manifest.checks

    def to_dict(self) -> dict:
        """The folder and its manifest (``xlsent_onnx.json``)."""
        from dataclasses import asdict

        return {"output": str(self.output), "manifest": asdict(self.manifest)}


@writes("output")
def export(model: str | Path, output: str | Path, *, int8: bool = False, smooth: float | None = None,
           fp32_parts: str | None = None, fp32_layers: str = "", int8_attention: bool = False,
           int8_embeddings: bool = False, per_channel: bool = True, reduce_range: bool = False,
           calibration: str = "bible-en-ny:train", keep_vocab: int | None = None,
           vocab_texts: str = "bible-en-ny:train", tail_rank: int = 0, tail_pq: int = 0, keep_fp32: bool = False,
           on_note: Note = None) -> ExportResult:
    """Export a model to ONNX: the whole sentence-transformers pipeline in one graph (transformer, pooling, every
    Dense / Normalize / centering module; the prompt and truncation in the manifest), checked against
    ``SentenceTransformer(model).encode`` (fp32: cosine ≥ 0.99999 or it fails). The folder runs with
    ``backend="onnx"`` (or ``auto``) in :func:`xlsent.embed`, :func:`xlsent.evaluate`, ``xlsent serve``.

    Args:
        model: a registered name, a model folder a recipe wrote, or any local sentence-transformers / Hugging Face
            folder.
        output: the folder to write (new or empty, or an earlier export).
        int8: quantise to int8 (weight MatMuls per channel; the attention products and token table stay fp32).
        smooth: int8: SmoothQuant α (0 = off; default: the measured best, on the results page).
        fp32_parts: int8: comma-separated parts kept fp32 in every layer, or in one as ``PART@LAYER``.
        fp32_layers: int8: comma-separated 0-based layers kept entirely fp32.
        int8_attention: int8: also quantise the attention score and value MatMuls.
        int8_embeddings: int8: also quantise the token table.
        per_channel: int8: one weight scale per output channel.
        reduce_range: int8: 7-bit weights (CPUs without VNNI).
        calibration: int8 smoothing's calibration text: a bundled pair set or a file, one text a line.
        keep_vocab: trim the vocabulary: keep the N highest-scoring pieces, every single character, special token
            and piece ``vocab_texts`` uses.
        vocab_texts: with ``keep_vocab``: keep every piece these texts use (``"none"``: no texts).
        tail_rank: with ``keep_vocab``: keep the other pieces too, their rows at this rank (truncated SVD).
        tail_pq: with ``keep_vocab``: keep the other pieces too, each row as M uint8 product-quantisation codes.
        keep_fp32: with ``int8``: keep the fp32 graph too (``model.fp32.onnx``).
        on_note: called with each step the export reports.

    Returns:
        The folder and its manifest (``checks``: the cosine to the source model, the size).

    Example:
        >>> import tempfile, xlsent
        >>> out = xlsent.export("e5-small", tempfile.mkdtemp() + "/e5-onnx")
        >>> out.checks["min_cosine_to_source"] > 0.9999
        True
    """
    from xlsent.exporter.folder import export_model, is_export_folder
    from xlsent.exporter.quantize import Int8Settings, default_int8
    from xlsent.models.vocab.trim import VocabSettings

    output = Path(output)
    if output.exists() and not output.is_dir():
        raise XlsentError(f"{named('output', str(output))}: exists and is a file — give a folder")
    if output.is_dir() and any(output.iterdir()) and not is_export_folder(output):
        raise XlsentError(f"{named('output', str(output))}: a folder that is not an export — choose an empty or new "
                          "folder")
    int8_options = (smooth, fp32_parts, fp32_layers, int8_attention, int8_embeddings, reduce_range)
    if not int8 and any(x not in (None, "", False) for x in int8_options):
        raise XlsentError("smooth=, fp32_parts=, fp32_layers=, int8_attention=, int8_embeddings= and reduce_range= "
                          "apply to int8= only — add int8=")
    settings = None
    if int8:
        base = default_int8()
        try:
            layers = [int(x) for x in fp32_layers.split(",") if x.strip()]
        except ValueError:
            raise XlsentError(f"{named('fp32_layers', fp32_layers)}: give comma-separated layer numbers, e.g. 0,11"
                              ) from None
        settings = Int8Settings(
            per_channel=per_channel, reduce_range=reduce_range, attention=int8_attention, embeddings=int8_embeddings,
            fp32_parts=base.fp32_parts if fp32_parts is None else _parts(fp32_parts),
            fp32_layers=layers, smooth=base.smooth if smooth is None else smooth, calibration=calibration)
        if settings.smooth > 0:
            _check_text_source(calibration, "calibration")
    vocab = None
    if (tail_rank or tail_pq) and keep_vocab is None:
        raise XlsentError(f"{'tail_rank=' if tail_rank else 'tail_pq='} applies to keep_vocab= only — add "
                          "keep_vocab=N (the pieces that keep full rows)")
    if keep_vocab is not None:
        check_options(EXPORT, {"keep_vocab": keep_vocab, "tail_rank": tail_rank, "tail_pq": tail_pq})
        texts = None if vocab_texts.lower() == "none" else vocab_texts
        if texts:
            _check_text_source(texts, "vocab_texts")
        vocab = VocabSettings(top=keep_vocab, texts=texts, tail_rank=tail_rank, tail_pq=tail_pq)
        _check_tail_pq(str(model), tail_pq)
    manifest = export_model(str(model), output, int8=settings, keep_vocab=vocab, keep_fp32=keep_fp32,
                            log=on_note or (lambda m: None))
    return ExportResult(output, manifest)


def _check_tail_pq(model: str, slots: int) -> None:
    """``tail_pq`` must divide the model's width: said before the model loads, when its config can be read."""
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
        from xlsent.models.vocab.tail_embedding import check_slots

        check_slots(int(width), slots)


def _parts(option: str) -> list[str]:
    return [] if option.strip().lower() == "none" else [p.strip() for p in option.split(",") if p.strip()]


def _check_text_source(spec: str, option: str) -> None:
    from xlsent.data.sets.bundled import is_bundled

    if not is_bundled(spec) and not Path(spec).is_file():
        raise XlsentError(f"{named(option, spec)}: neither a bundled pair set (xlsent data list) nor a file")
