#!/usr/bin/env python3
"""Quantisation-aware self-distillation: teach the model to give its own fp32 vectors *after* int8 rounding.

Post-training int8 loses quality everywhere a little (every part of every layer contributes; see
``docs/results.md``), and the low-resource direction pays most. This pass fine-tunes the model's
linear layers for a few hundred steps so that the int8 model's sentence vectors match the original fp32
model's, before the graph is exported and quantised:

* **simulated int8** — every linear layer the int8 pass will quantise (the same :class:`Int8Settings`
  selection: parts and layers kept fp32 are not simulated) runs with fake quantisation that copies
  onnxruntime's dynamic scheme: weights symmetric int8 per output channel (or per tensor), activations
  asymmetric uint8 per tensor with the range of the whole batch (symmetric per token for the parts
  ``Int8Experiment.per_token`` names, ``int8_options.per_token_activations``), straight-through gradients;
  with ``Int8Settings.smooth`` > 0, SmoothQuant's division of the input and multiplication of the weight
  columns by ``s`` (one ``s`` for query, key and value, as the export does), ``s`` calibrated once on the
  undistilled model with :func:`xlsent.exporter.quantize.smooth_scale` on the same calibration texts, one
  text at a time (no padding). The export recalibrates ``s`` on the distilled model. Fp32 outlier channels
  (``Int8Experiment.outliers``) are not simulated;
* **teacher** — the unchanged fp32 model; its vectors for the training texts are computed once;
* **loss** — 1 − cosine between the student's simulated-int8 vector and the teacher's (retrieval ranks
  by cosine), averaged over the batch;
* **data** — ``texts``: bundled *training* text by default (Old-Testament verses, English and Chichewa),
  never a test set; shuffled with ``seed``; cut to ``max_length`` pieces;
* **what trains** — every layer's weights and biases and LayerNorms; the token table stays frozen (it is
  not quantised, and it is 82% of e5-small's parameters).

It trains through the one loop (:mod:`xlsent.training.loop`): batches drawn without replacement in a per-epoch
order, gradients clipped at norm 1, fp32, no dropout, checkpoints every fifth of the steps.

Decisions where the method is open: AdamW at a small constant learning rate after a 10% warm-up (a
larger one moves the model away from its teacher faster than int8 error shrinks), and the model is
fine-tuned in place — the exported fp32 weights are the distilled ones, so the fp32 graph in such a folder
is *not* the source model (the manifest's source is the distilled copy, ``OUTPUT.distilled/``).

Measured and not adopted (docs/experiments/export-and-int8.md, "Quantisation-aware self-distillation"): 300 steps
lowered the simulated 1 − cos by 16%, but the distilled model's int8 vectors were exactly as far from the original
fp32 vectors as the undistilled int8's, and development ny→en P@1 fell 0.83 points. It was
``export_model(..., distill=...)`` until issue 35 moved it here. The row's command::

    python benchmarks/export/experiments/int8_distill.py e5-small runs/qat/d300 --steps 300
    python benchmarks/export/int8_noise_floor.py runs/int8-out/fp32 runs/int8-out/default runs/qat/d300
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))  # int8_options, beside this file

from int8_options import fake_quant_activation, fake_quant_activation_per_token, fake_quant_weight  # noqa: E402

from xlsent.exporter.quantize import Int8Settings, in_parts, layer_of, part_of, smooth_scale  # noqa: E402
from xlsent.models.handle import model_prompt  # noqa: E402
from xlsent.training.loop import run_loop, scratch_folder  # noqa: E402
from xlsent.training.run_folder import StageFolder  # noqa: E402
from xlsent.training.settings import OptimConfig  # noqa: E402
from xlsent.utils.errors import XlsentError  # noqa: E402


@dataclass
class DistillSettings:
    steps: int = 300
    batch_size: int = 32
    lr: float = 2e-5
    texts: str = "bible-en-ny:train"
    max_texts: int = 20000
    max_length: int = 64
    seed: int = 0

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch_size < 1 or self.max_length < 4 or self.lr <= 0:
            raise XlsentError("distillation: steps, batch size ≥ 1, max_length ≥ 4 and lr > 0")


class FakeQuantLinear(torch.nn.Module):
    """An ``nn.Linear`` that computes as the int8 graph will (its weights remain the Linear's own)."""

    def __init__(self, linear: torch.nn.Linear, settings: Int8Settings, per_token: bool = False,
                 smooth: torch.Tensor | None = None) -> None:
        super().__init__()
        self.linear = linear
        self.per_channel, self.reduce_range = settings.per_channel, settings.reduce_range
        self.quant_input = fake_quant_activation_per_token if per_token else fake_quant_activation
        self.smooth = smooth  # SmoothQuant's per-input-channel s, or None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.linear.weight
        if self.smooth is not None:
            x, weight = x / self.smooth, weight * self.smooth
        w = fake_quant_weight(weight, self.per_channel, self.reduce_range)
        return F.linear(self.quant_input(x), w, self.linear.bias)


def smoothing_scales(model, slots, settings: Int8Settings) -> list[torch.Tensor]:
    """SmoothQuant's ``s`` for each slot of :func:`quantised_linears`, as :func:`xlsent.exporter.quantize.smooth_graph`
    computes it: ``max|x_j|`` over the calibration texts (each text alone, so no padding), ``max|W_j|`` over the
    linears that read the same input (query, key and value share one ``s``)."""
    import numpy as np

    from xlsent.exporter.quantize import calibration_texts

    maxima: dict[int, torch.Tensor] = {}
    hooks = []
    for _, _, linear, _ in slots:
        def hook(module, args, key=id(linear)):
            m = args[0].detach().abs().reshape(-1, args[0].shape[-1]).amax(0).cpu()
            maxima[key] = m if key not in maxima else torch.maximum(maxima[key], m)
        hooks.append(linear.register_forward_pre_hook(hook))
    try:
        model.encode(calibration_texts(settings.calibration, settings.calibration_texts), batch_size=1,
                     prompt=model_prompt(model) or None, show_progress_bar=False)
    finally:
        for h in hooks:
            h.remove()
    keys = [id(parent) if attr in ("query", "key", "value") else id(linear) for parent, attr, linear, _ in slots]
    wmax: dict[int, torch.Tensor] = {}
    for key, (_, _, linear, _) in zip(keys, slots):
        w = linear.weight.detach().abs().amax(0).cpu()
        wmax[key] = w if key not in wmax else torch.maximum(wmax[key], w)
    scales = [torch.from_numpy(smooth_scale(maxima[id(linear)].numpy(), np.maximum(wmax[key].numpy(), 1e-5),
                                             settings.smooth))
              for key, (_, _, linear, _) in zip(keys, slots)]
    return scales


def quantised_linears(model, settings: Int8Settings) -> list[tuple[torch.nn.Module, str, torch.nn.Linear, bool]]:
    """(parent, attribute, Linear, per-token input) of every linear layer the int8 pass will quantise."""
    out = []
    for name, module in model.named_modules():
        for attr, child in module.named_children():
            if not isinstance(child, torch.nn.Linear):
                continue
            graph_name = re.sub(r"\.(?!\d)", "/", f"{name}.{attr}") + "/MatMul"  # keeps "layer.N" as the graph does
            if (part_of(graph_name) == "other" or in_parts(graph_name, settings.fp32_parts)
                    or layer_of(graph_name) in set(settings.fp32_layers)):
                continue
            out.append((module, attr, child, in_parts(graph_name, getattr(settings, "per_token", []))))
    return out


def distill_for_int8(model, int8: Int8Settings, settings: DistillSettings, log=print,
                     folder: StageFolder | None = None, progress: bool = False) -> dict:
    """Fine-tune ``model`` (a SentenceTransformer) in place toward its own fp32 vectors under simulated int8.

    It trains through the one loop (:func:`xlsent.training.loop.run_loop`) on the process's device (a GPU when
    there is one; the model is back on its own device afterwards), checkpointing in ``folder`` so that an
    interrupted export resumes (``None``: a scratch folder, nothing resumes)."""
    from xlsent.models.vocab.trim import read_texts
    from xlsent.utils.device import current_device

    if folder is None:
        with scratch_folder("int8-distillation", on_note=log) as scratch:
            return distill_for_int8(model, int8, settings, log, scratch, progress)
    texts = [t for t in read_texts(settings.texts, 0) if t.strip()]
    random.Random(settings.seed).shuffle(texts)
    texts = texts[: settings.max_texts] if settings.max_texts else texts
    if len(texts) < settings.batch_size:
        raise XlsentError(f"distillation: {len(texts)} texts in {settings.texts}, fewer than one batch")
    saved_length, home = model.max_seq_length, model.device
    model.max_seq_length = min(saved_length, settings.max_length)
    t0 = time.perf_counter()
    model.to(current_device())
    prompt = model_prompt(model) or None
    teacher = model.encode(texts, batch_size=64, convert_to_tensor=True, show_progress_bar=False, prompt=prompt).float()
    slots = quantised_linears(model, int8)
    if not slots:
        raise XlsentError("distillation: the model has no linear layer the int8 pass quantises")
    scales = smoothing_scales(model, slots, int8) if int8.smooth > 0 else [None] * len(slots)
    for (parent, attr, linear, per_token), s in zip(slots, scales):
        s = None if per_token or s is None else s.to(linear.weight.device)
        setattr(parent, attr, FakeQuantLinear(linear, int8, per_token, s))
    embeddings = model[0].auto_model.get_input_embeddings()
    embeddings.weight.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=settings.lr, weight_decay=0.0)
    warm = max(1, settings.steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm))
    optim = OptimConfig(batch_size=settings.batch_size, max_steps=settings.steps, seed=settings.seed,
                        max_grad_norm=1.0, precision="fp32", logging_steps=max(1, settings.steps // 10),
                        checkpoint_every=0.2, checkpoint_minutes=10.0)

    def step(indices: list[int], module, accelerator) -> dict:
        feats = model.preprocess([texts[i] for i in indices], prompt=prompt)
        feats = {k: v.to(accelerator.device) for k, v in feats.items() if isinstance(v, torch.Tensor)}
        out = module(feats)["sentence_embedding"]
        target = teacher[torch.tensor(indices, device=teacher.device)].to(out.device)
        return {"loss": (1 - F.cosine_similarity(out, target, dim=-1)).mean()}

    try:
        # no dropout: the teacher's vectors are dropout-free too; gradients flow all the same
        result = run_loop(folder, optim, model, opt, sched, len(texts), step, name="int8 distillation",
                          progress=progress, dropout=False)
    finally:
        for parent, attr, linear, _ in slots:
            setattr(parent, attr, linear)
        model.max_seq_length = saved_length
        embeddings.weight.requires_grad_(True)
        model.eval()
        model.to(home)
    for e in result.log:
        log(f"int8 distillation: step {e['step']}/{settings.steps}, 1 − cos {e['loss']:.5f}")
    return {**asdict(settings), "texts_used": len(texts), "linear_layers": len(slots),
            "loss_first": result.log[0]["loss"], "loss_last": result.log[-1]["loss"],
            "seconds": round(time.perf_counter() - t0, 1), "device": result.device}


def distill_and_export(source: str, output: Path, int8: Int8Settings, settings: DistillSettings, log=print) -> dict:
    """Distill ``source`` toward its own fp32 vectors under simulated int8 (checkpoints in ``OUTPUT.state``, so an
    interrupted run resumes), save the distilled model to ``OUTPUT.distilled``, export it to ``output`` with
    ``int8``; returns the distillation's record (also written to ``OUTPUT/distill.json``)."""
    from xlsent.exporter.folder import export_model
    from xlsent.models.handle import load_model
    from xlsent.training.run_folder import config_hash

    handle = load_model(source, device="cpu")
    state = StageFolder(output.with_name(f"{output.name}.state"), name="int8 distillation", on_note=log,
                        chash=config_hash(handle.fingerprint, asdict(int8), asdict(settings)))
    state.begin()
    info = distill_for_int8(handle.model, int8, settings, log=log, folder=state)
    distilled = output.with_name(f"{output.name}.distilled")
    handle.model.save(str(distilled))
    manifest = export_model(str(distilled), output, int8=int8, log=log)
    (output / "distill.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    shutil.rmtree(state.path, ignore_errors=True)
    log(f"wrote {output}: cosine to the distilled model mean {manifest.checks['mean_cosine_to_source']:.5f}")
    return info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="registered name or model folder")
    ap.add_argument("output", type=Path, help="the int8 export folder to write")
    ap.add_argument("--steps", type=int, default=DistillSettings.steps)
    ap.add_argument("--batch-size", type=int, default=DistillSettings.batch_size)
    ap.add_argument("--lr", type=float, default=DistillSettings.lr)
    ap.add_argument("--texts", default=DistillSettings.texts, help="training text: a bundled pair set or a file")
    args = ap.parse_args()

    from xlsent.exporter.quantize import default_int8

    distill_and_export(args.model, args.output, default_int8(),
                       DistillSettings(steps=args.steps, batch_size=args.batch_size, lr=args.lr, texts=args.texts))


if __name__ == "__main__":
    main()
