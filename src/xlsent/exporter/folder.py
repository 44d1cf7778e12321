"""The exported folder and :func:`export_model`, what ``xlsent export`` runs.

An exported folder holds:

* ``model.onnx`` — the whole pipeline (:mod:`xlsent.exporter.graph`), fp32 or int8;
* ``tokenizer.json`` (+ the Hugging Face tokenizer files) — the model's fast tokenizer, trimmed with the
  vocabulary when ``keep_vocab`` is given;
* ``xlsent_onnx.json`` — the manifest: the model's prompt, maximum length, lower-casing, pad id,
  dimension, whether rows come out unit-length, the source model and its fingerprint, the int8 and
  vocabulary settings, and the export checks (cosine to ``SentenceTransformer(source).encode``);
* a word-gloss model's dictionary (``gloss_dictionary.tsv`` + ``xlsent_gloss.json``), copied, so the
  encoder glosses non-English text as it does for the torch model.

Everything is written into a temporary folder beside the target and moved into place at the end.
"""

from __future__ import annotations

import json
import shutil
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

from xlsent.encoding.onnx_folder import MANIFEST, ExportManifest, is_export_folder
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import Replacing, atomic_path, check_space, write_json_atomic

FP32_MIN_COSINE = 0.99999  # an fp32 export must reproduce the torch model at least this closely


def check_texts() -> list[str]:
    """A multilingual sample for the export checks: bundled English–Chichewa training verses plus a fixed
    set of sentences in other scripts and a long text that reaches the truncation limit."""
    from xlsent.data.sets.pairs import load_pairs

    ds = load_pairs("bible-en-ny:train", sample=48, seed=7).dataset
    extra = ["東京は日本の首都です。", "Hà Nội là thủ đô của Việt Nam.", "Москва — столица России.",
             "القاهرة هي عاصمة مصر.", "नई दिल्ली भारत की राजधानी है।", "Nairobi ni mji mkuu wa Kenya.",
             "x", " ".join(["long"] * 1000)]
    return list(ds["src"]) + list(ds["tgt"]) + extra


def _cosines(a, b):
    import numpy as np

    n = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return (a * b).sum(1) / np.maximum(n, 1e-12)


def export_model(source: str | Path, output: str | Path, *, int8=None, keep_vocab=None,
                 texts: Sequence[str] | None = None, keep_fp32: bool = False, log=print) -> ExportManifest:
    """Export ``source`` (a registered name or model folder) to the ONNX folder ``output``.

    Args:
        int8: :class:`xlsent.exporter.quantize.Int8Settings`, or None for fp32.
        keep_vocab: :class:`xlsent.models.vocab.trim.VocabSettings`, or None to keep the whole vocabulary.
        texts: texts for the export checks (default :func:`check_texts`).
        keep_fp32: with ``int8``, also keep the fp32 graph as ``model.fp32.onnx``.
    """
    import numpy as np

    from xlsent.encoding.chunked import model_normalizes
    from xlsent.encoding.onnx_backend import OnnxBackend
    from xlsent.exporter.graph import export_graph
    from xlsent.models.gloss import GLOSS_META, load_gloss
    from xlsent.models.handle import load_model, model_prompt
    from xlsent.utils.device import EXPORT_DEVICE

    output = Path(output)
    if output.exists() and not (output.is_dir() and (is_export_folder(output) or not any(output.iterdir()))):
        raise XlsentError(f"{output}: exists and is not an exported model folder — choose another --output")
    handle = load_model(source, device=EXPORT_DEVICE)  # traced and quantised on the CPU; the graph runs anywhere
    model = handle.model
    texts = list(texts) if texts is not None else check_texts()
    reference = model.encode(list(texts), convert_to_numpy=True, batch_size=32)
    vocab_info = None
    if keep_vocab is not None:
        from xlsent.models.vocab.trim import trim_vocabulary

        vocab_info = trim_vocabulary(model, keep_vocab, log=log)
    prompt = model_prompt(model)
    tok = model.tokenizer
    manifest = ExportManifest(
        name=output.name, source=str(source), source_fingerprint=handle.fingerprint,
        dimension=int(model.get_embedding_dimension()), normalizes=model_normalizes(model), prompt=prompt,
        max_seq_length=int(model.max_seq_length), lowercase=bool(getattr(model[0], "do_lower_case", False)),
        pad_id=int(tok.pad_token_id if tok.pad_token_id is not None else 0), vocab=vocab_info,
    )
    # the graph holds the weights; int8 adds a quarter of them beside the fp32 graph it is made from
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    weights += weights // 4 if int8 is not None else 0
    check_space(output, weights, "the exported model")
    if output.is_dir() and any(output.iterdir()):
        warnings.warn(f"{output}: an earlier export — replaced when this one is complete", Replacing, stacklevel=3)
    with atomic_path(output, "the exported model", need=weights) as tmp:
        tmp.mkdir(parents=True)
        fp32 = tmp / ("model.fp32.onnx" if int8 is not None else "model.onnx")
        log(f"exporting the graph ({', '.join(type(m).__name__ for m in model)})")
        export_graph(model, fp32, where=str(source))
        tok.save_pretrained(str(tmp))
        if load_gloss(handle.path) is not None:
            gloss_meta = json.loads((handle.path / GLOSS_META).read_text(encoding="utf-8"))
            shutil.copy2(handle.path / GLOSS_META, tmp / GLOSS_META)
            shutil.copy2(handle.path / gloss_meta["dictionary"], tmp / gloss_meta["dictionary"])
        from xlsent.models.language_means import MEANS_FILE

        if (handle.path / MEANS_FILE).is_file():  # calibrated language means travel with the model
            shutil.copy2(handle.path / MEANS_FILE, tmp / MEANS_FILE)
        from xlsent.models.widths import WIDTHS_FILE

        if (handle.path / WIDTHS_FILE).is_file():  # and so do the Matryoshka widths it was trained for
            shutil.copy2(handle.path / WIDTHS_FILE, tmp / WIDTHS_FILE)
        manifest.model_file = fp32.name
        write_json_atomic(tmp / MANIFEST, asdict(manifest))
        exported = OnnxBackend(tmp).embed(list(texts), batch_size=32)
        ours = model.encode(list(texts), convert_to_numpy=True, batch_size=32) if vocab_info is not None else reference
        cos = _cosines(exported, ours)
        manifest.checks["fp32_min_cosine"] = float(cos.min())
        if cos.min() < FP32_MIN_COSINE:
            worst = int(np.argmin(cos))
            raise XlsentError(f"{source}: the fp32 graph does not reproduce the model (cosine {cos.min():.6f} on "
                              f"{texts[worst][:60]!r}, need ≥ {FP32_MIN_COSINE}) — please report this model")
        if int8 is not None:
            from xlsent.exporter.quantize import quantize

            manifest.int8 = quantize(fp32, tmp / "model.onnx", int8, model=model, log=log)
            manifest.model_file = "model.onnx"
            if keep_fp32:
                manifest.checks["fp32_file"] = fp32.name
            else:
                fp32.unlink()
            write_json_atomic(tmp / MANIFEST, asdict(manifest))
        final = OnnxBackend(tmp).embed(list(texts), batch_size=32)
        cos = _cosines(final, reference)
        manifest.checks.update({"texts": len(texts), "min_cosine_to_source": float(cos.min()),
                                "mean_cosine_to_source": float(cos.mean())})
        manifest.checks["size_bytes"] = sum(f.stat().st_size for f in tmp.iterdir() if f.is_file())
        write_json_atomic(tmp / MANIFEST, asdict(manifest))
    return manifest
