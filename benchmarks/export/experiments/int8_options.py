#!/usr/bin/env python3
"""int8 options that were built, measured on development data and not adopted — kept runnable so that the rows
of ``docs/experiments/export-and-int8.md`` reproduce. The library's int8 pass (:mod:`xlsent.exporter.quantize`)
holds what a user should choose between; this file holds the rest:

* **per-token activation scales** (``per_token``: parts, or ``PART@LAYER``) — fourth pass;
* **outlier input channels kept fp32** (``outliers`` = k) — fifth pass;
* **static ranges** (``static``: onnxruntime's static QDQ int8 from the calibration texts) — fifth pass;
* **a per-input SmoothQuant α** (``smooth_search``: a grid of α, chosen per input tensor by the simulated int8
  error of its MatMuls on ``search_texts`` calibration texts) — second pass;
* the **simulated int8** (torch fake quantisation, straight-through) the search and the self-distillation
  (``int8_distill.py``) share.

Quantise an fp32 export with any of them (``SETTINGS``: JSON of :class:`Int8Experiment` fields)::

    xlsent export e5-small -o runs/int8-out/fp32
    python benchmarks/export/experiments/int8_options.py runs/int8-out/fp32 runs/int8-out/out16 --model e5-small \
        --settings '{"outliers": 16}'
    python benchmarks/export/int8_paired.py runs/int8-out/fp32 runs/int8-out/out16 --dataset bible-en-ny:dev

``python benchmarks/export/int8_variants.py --variants NAME=JSON ...`` scores many settings at once through
:func:`quantize_experimental` (library settings go to the library's pass unchanged).

Per-token scales
----------------
Per-token activation scales for chosen int8 MatMuls (a rewrite of onnxruntime's dynamic int8 graph).

onnxruntime's ``quantize_dynamic`` quantises a MatMul's input with **one** range for the whole tensor
(``DynamicQuantizeLinear``: every token of every text in the batch). One token with large activations then
coarsens every other token's codes — and a text's vector depends on which texts it was batched with. In
e5-small the input of the FFN's second MatMul (the GELU output, 1,536 channels) is where this costs: on 64 NT
verses per-token scales there alone bring the mean cosine to the fp32 output from 0.9992 to 0.9997, the same
as per-token scales on every MatMul, while per-token scales on query/key/value, attention output or FFN input
alone leave it at 0.9992 (docs/experiments/export-and-int8.md, fourth pass).

The rewrite, per chosen input ``X`` (``[batch, tokens, K]``)::

    a   = max(ReduceMax(X), −ReduceMin(X))          per token, over the K channels (two read-only passes)
    q   = QuantizeLinear(X · (127 / a), 1, 128)     uint8, symmetric around the zero point 128
    Y   = MatMulIntegerToFloat(q, W_q, 1, w_scale, 128, w_zero)  ·  (a / 127)

``MatMulIntegerToFloat`` (onnxruntime's fused integer MatMul with per-column weight scales) takes scalar or
per-column input scales only, so the per-token scale is one ``Mul`` on the output. Decisions: symmetric codes
(a per-token zero point would need a per-row ``a_zero_point``, which onnxruntime's integer MatMul does not
take); ``QuantizeLinear`` with scale 1 on a pre-scaled input, because its per-axis form over a 2-D view ran at
half the speed here. Every MatMul reading the rewritten input (query, key and value share one) gets the
per-token codes.

Not in ``--int8``'s default: although the vectors come three times closer to fp32 on average, every per-token
variant tried lost ny→en P@1 on the 1,684 development pairs (−0.4 to −1.1 against −0.1 for per-tensor ranges;
a correction of each output channel's mean error did not help) — closeness on average is not what retrieval
needs (same file). It was ``xlsent export --per-token`` until issue 35 moved it here.

Outlier channels
----------------
Outlier input channels of the int8 MatMuls kept in fp32 (a static form of LLM.int8()'s decomposition).

onnxruntime's dynamic int8 quantises each MatMul input with one uint8 range for the whole batch, so a few
channels whose values are 10–60× the others' (the GELU output of e5-small's FFN, measured in
``docs/experiments/export-and-int8.md``) leave the ordinary channels a handful of levels. Dettmers et al. (2022, "LLM.int8()")
split such a product in two: the outlier columns of ``X`` with the matching rows of ``W`` in 16-bit, the rest
in int8. Here the split is static: the ``k`` channels of each input with the largest calibrated ``max|x|``
(on the same bundled training text as SmoothQuant) become

    X_n = Gather(X, normal, axis=-1)      → MatMul(X_n, W[normal])  (int8)
    X_o = Gather(X, outliers, axis=-1)    → MatMul(X_o, W[outliers]) (fp32)   → Add

which is exact in fp32 (tested). MatMuls reading one tensor (query, key, value) share the two Gathers. The
int8 half can still be smoothed: its ``max|x|`` is the calibrated maximum of the kept channels.

Decision where LLM.int8() is dynamic (it picks, per batch, every column with a value above 6): a fixed
channel set chosen on calibration text, because a data-dependent split cannot be a static ONNX graph and
the outlier channels of a trained transformer are the same few channels from text to text.
"""

from __future__ import annotations

import argparse
import json
import shutil
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

from xlsent.exporter.quantize import (Int8Settings, activation_maxima, calibration_texts, in_parts, quantize,
                                    quantize_nodes, select_nodes, smooth_graph, smooth_scale, tokenizer_fn,
                                    untie_weights, weight_groups, weight_matmuls)
from xlsent.utils.errors import XlsentError

if TYPE_CHECKING:
    import torch

MS_DOMAIN = "com.microsoft"


@dataclass
class Int8Experiment(Int8Settings):
    """The library's :class:`Int8Settings` and the options that were not adopted (see the module docstring)."""

    per_token: list[str] = field(default_factory=list)
    smooth_search: tuple[float, ...] = ()
    search_texts: int = 64
    outliers: int = 0
    static: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        Int8Settings(fp32_parts=list(self.per_token))  # the same part names, checked the same way
        self.smooth_search = tuple(float(a) for a in self.smooth_search)
        if any(not 0.0 < a < 1.0 for a in self.smooth_search):
            raise XlsentError(f"smoothing search values must be in (0, 1), not {list(self.smooth_search)}")
        if int(self.outliers) < 0:
            raise XlsentError(f"outliers must be ≥ 0 (input channels kept fp32 per MatMul; 0 = off), not {self.outliers}")
        if self.static and (self.per_token or self.attention):
            raise XlsentError("static int8 fixes each activation range from calibration text: it cannot be combined "
                              "with per-token scales or int8 attention products")
        if self.outliers and self.smooth_search:
            raise XlsentError("outlier channels and the per-input smoothing search cannot be combined: use one α")

    @property
    def experimental(self) -> bool:
        return bool(self.per_token or self.smooth_search or self.outliers or self.static)

    def library(self) -> Int8Settings:
        return Int8Settings(**{f.name: getattr(self, f.name) for f in fields(Int8Settings)})


def quantize_experimental(fp32_path: str | Path, out_path: str | Path, settings: Int8Experiment, model=None,
                          log=print) -> dict:
    """The library's int8 pass with the options of this file; settings without them go to the library unchanged."""
    if not settings.experimental:
        return quantize(fp32_path, out_path, settings.library(), model=model, log=log)
    import onnx

    if model is None:
        raise XlsentError("these options need the model's tokenizer for calibration")
    fp32_path, out_path = Path(fp32_path), Path(out_path)
    proto = onnx.load(str(fp32_path))
    nodes, kept = select_nodes(proto, settings)
    info = {"method": "dynamic", **asdict(settings), "quantized_nodes": len(nodes), "kept_fp32": kept}
    texts = calibration_texts(settings.calibration, settings.calibration_texts)
    info["calibration_texts_used"] = len(texts)
    source = fp32_path
    smoothing = settings.smooth > 0 or bool(settings.smooth_search)
    if smoothing or settings.outliers:
        names = [n for n in weight_matmuls(proto, nodes) if not in_parts(n, settings.per_token)]
        untie_weights(proto)
        by_name = {n.name: n for n in proto.graph.node}
        tensors = sorted({by_name[n].input[0] for n in names})
        alpha: float | dict[str, float] = settings.smooth
        if settings.smooth_search:
            from onnx import numpy_helper

            maxima, rows = activation_maxima(fp32_path, tensors, texts, tokenizer_fn(model),
                                             keep_batches=max(1, settings.search_texts // 16))
            inits = {i.name: i for i in proto.graph.initializer}
            groups = {x: [numpy_helper.to_array(inits[n.input[1]]).astype(np.float32) for n in members]
                      for x, members in weight_groups(proto, names, maxima).items()}
            alpha = search_smoothing(groups, maxima, rows, settings.smooth_search, settings)
            info["smooth_chosen"] = dict(alpha)
        else:
            maxima = activation_maxima(fp32_path, tensors, texts, tokenizer_fn(model))
        if settings.outliers:
            split = split_outliers(proto, weight_groups(proto, names, maxima), maxima, settings.outliers)
            maxima = {**maxima, **split}
            info["outlier_inputs"] = len(split)
        if smoothing:
            info["smoothed_nodes"] = smooth_graph(proto, names, maxima, alpha)
        source = out_path.with_name(out_path.stem + ".calibrated.onnx")
        onnx.save(proto, str(source))
    if settings.static:
        quantize_static_ranges(source, out_path, nodes, texts, settings, tokenizer_fn(model))
        info["method"] = "static"
    else:
        quantize_nodes(source, out_path, nodes, settings)
    if source != fp32_path:
        source.unlink()
    if settings.per_token:
        chosen = {n for n in nodes if in_parts(n, settings.per_token)}
        q = onnx.load(str(out_path))
        info["per_token_inputs"] = per_token_activations(q, chosen)
        onnx.save(q, str(out_path))
    log(f"int8 (experimental): {json.dumps({k: v for k, v in info.items() if k not in asdict(settings)})}")
    return info


def quantize_static_ranges(source: Path, out_path: Path, nodes: list[str], texts: list[str], settings: Int8Settings,
                           tokenize) -> None:
    """onnxruntime's static int8 (QDQ): every quantised MatMul input gets one fixed uint8 range, the min and max
    seen on the calibration texts (one text a run, so padding never widens a range), so a text's vector no longer
    depends on the texts batched with it."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter(range(len(texts)))

        def get_next(self):
            start = next(self.batches, None)
            if start is None:
                return None
            ids, mask = tokenize(texts[start : start + 1])
            return {"input_ids": ids, "attention_mask": mask}

    quantize_static(str(source), str(out_path), Reader(), quant_format=QuantFormat.QDQ, per_channel=settings.per_channel,
                    reduce_range=settings.reduce_range, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    nodes_to_quantize=[n for n in nodes if "word_embeddings" not in n], op_types_to_quantize=["MatMul"],
                    extra_options={"MatMulConstBOnly": True})


# --- simulated int8 (torch): the α search's error and the self-distillation's forward pass -------------------

def fake_quant_activation(x: torch.Tensor) -> torch.Tensor:
    """onnxruntime's DynamicQuantizeLinear: uint8, per tensor, range [min(0, x), max(0, x)], straight-through."""
    import torch

    lo = torch.clamp(x.detach().min(), max=0.0)
    hi = torch.clamp(x.detach().max(), min=0.0)
    scale = torch.clamp((hi - lo) / 255.0, min=1e-8)
    zero = torch.round(-lo / scale).clamp(0, 255)
    return torch.fake_quantize_per_tensor_affine(x, scale.float(), zero.int(), 0, 255)


def fake_quant_activation_per_token(x: torch.Tensor) -> torch.Tensor:
    """:func:`per_token_activations`'s scheme: symmetric int8 with one scale per token, straight-through."""
    import torch

    scale = torch.clamp(x.detach().abs().amax(-1, keepdim=True) / 127.0, min=1e-8 / 127)
    return x + (torch.round(x / scale) * scale - x).detach()


def fake_quant_weight(w: torch.Tensor, per_channel: bool, reduce_range: bool) -> torch.Tensor:
    """Symmetric int8 weights (per output channel of an ``nn.Linear``), straight-through: onnxruntime's ranges,
    [−127, 127], or [−64, 64] with ``reduce_range`` (scale = max|w| / 64: the oracle test caught an earlier 63)."""
    import torch

    qmax = 64 if reduce_range else 127
    if per_channel:
        scale = torch.clamp(w.detach().abs().amax(1) / qmax, min=1e-8).float()
        return torch.fake_quantize_per_channel_affine(w, scale, torch.zeros_like(scale, dtype=torch.int32), 0,
                                                      -qmax, qmax)
    scale = torch.clamp(w.detach().abs().max() / qmax, min=1e-8).float()
    return torch.fake_quantize_per_tensor_affine(w, scale, torch.zeros((), dtype=torch.int32), -qmax, qmax)


def simulated_error(batches: list[np.ndarray], weights: list[np.ndarray], s: np.ndarray, per_channel: bool,
                    reduce_range: bool) -> float:
    """Relative squared error of ``X·W`` under onnxruntime's dynamic int8 after smoothing by ``s``, summed over the
    MatMuls reading ``X`` (activations uint8 per batch, weights int8 symmetric)."""
    import torch

    err = ref = 0.0
    with torch.no_grad():
        st = torch.from_numpy(s)
        qw = [fake_quant_weight((torch.from_numpy(w) * st[:, None]).T.contiguous(), per_channel, reduce_range).T
              for w in weights]
        for x in batches:
            xt = torch.from_numpy(x)
            xq = fake_quant_activation(xt / st)
            for w, q in zip(weights, qw):
                y = xt @ torch.from_numpy(w)
                err += float(((xq @ q - y) ** 2).sum())
                ref += float((y ** 2).sum())
    return err / max(ref, 1e-12)


def search_smoothing(groups: dict[str, list[np.ndarray]], maxima: dict[str, np.ndarray],
                     rows: dict[str, list[np.ndarray]], alphas: Sequence[float], settings: Int8Settings,
                     ) -> dict[str, float]:
    """SmoothQuant's α per input tensor: the value of ``alphas`` whose simulated int8 error on the calibration
    rows is least (Xiao et al. 2023 tune one α per model; a per-layer search is their suggested refinement)."""
    chosen = {}
    for x, weights in groups.items():
        wmax = np.maximum(np.max([np.abs(w).max(1) for w in weights], axis=0), 1e-5)
        best = None
        for a in alphas:
            e = simulated_error(rows[x], weights, smooth_scale(maxima[x], wmax, a), settings.per_channel,
                                settings.reduce_range)
            if best is None or e < best[0]:
                best = (e, a)
        chosen[x] = best[1]
    return chosen


# --- per-token activation scales ----------------------------------------------------------------------------

def per_token_activations(proto, nodes: set[str]) -> int:
    """Give the inputs of the quantised MatMuls named in ``nodes`` (their fp32 names) per-token scales.

    ``proto`` is the output of ``quantize_dynamic``: ``DynamicQuantizeLinear → MatMulInteger → Cast → Mul``, the
    ``Mul``'s scale being ``Mul(input scale, weight scale)``. Returns the number of inputs rewritten."""
    import onnx
    from onnx import helper, numpy_helper

    g = proto.graph
    consumers: dict[str, list] = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    producers = {o: n for n in g.node for o in n.output}
    prefix = "xlsent/per_token"
    constants = {f"{prefix}/127": np.array(127.0, np.float32), f"{prefix}/inv127": np.array(1 / 127, np.float32),
                 f"{prefix}/eps": np.array(1e-8, np.float32), f"{prefix}/one": np.array(1.0, np.float32),
                 f"{prefix}/zp": np.array(128, np.uint8)}
    c = {k.rsplit("/", 1)[1]: k for k in constants}
    replace: dict[str, list] = {}
    for dq in [n for n in g.node if n.op_type == "DynamicQuantizeLinear"]:
        q, scale, _ = dq.output
        matmuls = [n for n in consumers.get(q, []) if n.op_type == "MatMulInteger"]
        if not any(m.name.removesuffix("_quant") in nodes for m in matmuls):
            continue
        x, p = dq.input[0], dq.name
        replace[dq.name] = [
            helper.make_node("ReduceMax", [x], [f"{p}/max"], name=f"{p}/ReduceMax", keepdims=1, axes=[-1]),
            helper.make_node("ReduceMin", [x], [f"{p}/min"], name=f"{p}/ReduceMin", keepdims=1, axes=[-1]),
            helper.make_node("Neg", [f"{p}/min"], [f"{p}/neg_min"], name=f"{p}/Neg"),
            helper.make_node("Max", [f"{p}/max", f"{p}/neg_min", c["eps"]], [f"{p}/absmax"], name=f"{p}/AbsMax"),
            helper.make_node("Mul", [f"{p}/absmax", c["inv127"]], [f"{p}/token_scale"], name=f"{p}/TokenScale"),
            helper.make_node("Div", [c["127"], f"{p}/absmax"], [f"{p}/inv_scale"], name=f"{p}/InvScale"),
            helper.make_node("Mul", [x, f"{p}/inv_scale"], [f"{p}/prescaled"], name=f"{p}/Prescale"),
            helper.make_node("QuantizeLinear", [f"{p}/prescaled", c["one"], c["zp"]], [q], name=f"{p}/Quantize"),
        ]
        for mm in matmuls:
            cast = _only(consumers, mm.output[0], "Cast", mm.name)
            mul = _only(consumers, cast.output[0], "Mul", mm.name)
            scales = producers[next(i for i in mul.input if i != cast.output[0])]
            if scales.op_type != "Mul" or scale not in scales.input:
                raise RuntimeError(f"{mm.name}: not the graph quantize_dynamic writes (no input-scale Mul)")
            w_scale = next(i for i in scales.input if i != scale)
            w_zero = mm.input[3] if len(mm.input) > 3 else ""
            fused = f"{mm.name}/per_channel_out"
            replace[mm.name] = [helper.make_node(
                "MatMulIntegerToFloat", [q, mm.input[1], c["one"], w_scale, c["zp"], w_zero], [fused],
                name=f"{mm.name}/ToFloat", domain=MS_DOMAIN)]
            replace[cast.name] = []
            replace[scales.name] = []
            replace[mul.name] = [helper.make_node("Mul", [fused, f"{p}/token_scale"], [mul.output[0]],
                                                  name=f"{mm.name}/TokenScale")]
    if not replace:
        return 0
    kept = [n for old in g.node for n in replace.get(old.name, [old])]
    del g.node[:]
    g.node.extend(kept)
    g.initializer.extend(numpy_helper.from_array(v, name=k) for k, v in constants.items())
    if not any(o.domain == MS_DOMAIN for o in proto.opset_import):
        proto.opset_import.append(onnx.helper.make_opsetid(MS_DOMAIN, 1))
    return sum(1 for n in replace.values() if n and n[0].op_type == "ReduceMax")


def _only(consumers: dict, tensor: str, op_type: str, where: str):
    users = consumers.get(tensor, [])
    if len(users) != 1 or users[0].op_type != op_type:
        raise RuntimeError(f"{where}: expected one {op_type} after it, found {[u.op_type for u in users]}")
    return users[0]


# --- outlier channels kept fp32 -----------------------------------------------------------------------------

def split_outliers(proto, groups: dict[str, list], maxima: dict[str, np.ndarray], k: int) -> dict[str, np.ndarray]:
    """Rewrite ``proto`` in place: for each input tensor of ``groups`` (its weight MatMul nodes, from
    :func:`xlsent.exporter.quantize.weight_groups`), move the ``k`` channels with the largest ``maxima`` to an
    fp32 MatMul. Returns the calibrated maxima of the new int8 inputs (for smoothing them next)."""
    from onnx import helper, numpy_helper

    inits = {i.name: i for i in proto.graph.initializer}
    new_maxima: dict[str, np.ndarray] = {}
    before: dict[str, list] = {}  # node name → nodes to insert before it
    after: dict[str, list] = {}  # node name → nodes to insert after it
    for x, members in groups.items():
        m = maxima[x]
        if k >= len(m):
            continue
        outl = np.sort(np.argsort(m)[-k:]).astype(np.int64)
        normal = np.setdiff1d(np.arange(len(m)), outl).astype(np.int64)
        stem = members[0].name
        for what, idx in (("normal", normal), ("outliers", outl)):
            proto.graph.initializer.append(numpy_helper.from_array(idx, name=f"{stem}/{what}_channels"))
        x_n, x_o = f"{stem}/int8_input", f"{stem}/fp32_input"
        before[stem] = [helper.make_node("Gather", [x, f"{stem}/normal_channels"], [x_n], name=f"{stem}/GatherNormal", axis=-1),
                        helper.make_node("Gather", [x, f"{stem}/outliers_channels"], [x_o], name=f"{stem}/GatherOutliers",
                                         axis=-1)]
        new_maxima[x_n] = m[normal]
        for node in members:
            w = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
            inits[node.input[1]].CopyFrom(numpy_helper.from_array(np.ascontiguousarray(w[normal]), name=node.input[1]))
            w_o = numpy_helper.from_array(np.ascontiguousarray(w[outl]), name=f"{node.input[1]}/outlier_rows")
            proto.graph.initializer.append(w_o)
            y = node.output[0]
            node.input[0] = x_n
            node.output[0] = f"{y}/int8_part"
            after[node.name] = [
                helper.make_node("MatMul", [x_o, w_o.name], [f"{y}/fp32_part"], name=f"{node.name}/OutlierChannels"),
                helper.make_node("Add", [f"{y}/int8_part", f"{y}/fp32_part"], [y], name=f"{node.name}/AddOutliers"),
            ]
    order = []
    for node in proto.graph.node:
        order += before.get(node.name, [])
        order.append(node)
        order += after.get(node.name, [])
    del proto.graph.node[:]
    proto.graph.node.extend(order)
    return new_maxima


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fp32", type=Path, help="an fp32 export folder (xlsent export MODEL -o FOLDER)")
    ap.add_argument("output", type=Path, help="the int8 folder to write (a copy of FP32 with model.onnx quantised)")
    ap.add_argument("--model", required=True, help="the exported model (its tokenizer calibrates)")
    ap.add_argument("--settings", default="{}", help="JSON of Int8Experiment fields, e.g. '{\"outliers\": 16}'")
    args = ap.parse_args()

    from xlsent.encoding.onnx_folder import is_export_folder
    from xlsent.models.handle import load_model

    if not is_export_folder(args.fp32):
        raise SystemExit(f"{args.fp32}: not an export folder — run xlsent export MODEL -o {args.fp32} first")
    settings = Int8Experiment(**json.loads(args.settings))
    shutil.rmtree(args.output, ignore_errors=True)
    shutil.copytree(args.fp32, args.output)
    info = quantize_experimental(args.fp32 / "model.onnx", args.output / "model.q.onnx", settings,
                                 model=load_model(args.model).model)
    (args.output / "model.q.onnx").replace(args.output / "model.onnx")
    (args.output / "int8_experiment.json").write_text(json.dumps(info, indent=1, default=str), encoding="utf-8")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
