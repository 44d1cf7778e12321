"""int8 for an exported graph: onnxruntime dynamic quantisation with the choices that keep low-resource quality.

The pass is onnxruntime's ``quantize_dynamic`` (int8 weights, activations quantised per batch at run
time, ``MatMulInteger``), steered by :class:`Int8Settings`:

* **which MatMuls** — by default only the *weight* MatMuls (the linear layers: query, key, value,
  attention output, FFN in, FFN out). The two activation × activation MatMuls of attention (Q·Kᵀ and
  softmax·V) stay fp32 unless ``attention=True``: quantising the attention logits per tensor is where a
  plain ``quantize_dynamic`` loses most (measured in ``docs/results.md``);
* **the word-embedding table** (a Gather, and the small MatMul of a low-rank tail,
  :mod:`xlsent.export.tail_embedding`) stays fp32 unless ``embeddings=True`` (the notes name it as a
  common cause of broken multilingual int8 models; it is also not a MatMul, so int8 there saves disk,
  not time);
* **parts or layers kept fp32** — ``fp32_parts`` (any of :data:`PARTS` in every layer, or ``PART@LAYER`` in one)
  and ``fp32_layers`` (0-based);
* **per-channel** weight scales (default on) and ``reduce_range`` (7-bit weights; for CPUs without VNNI);
* **per-token activation scales** — ``per_token`` (parts, or ``PART@LAYER``): those MatMul inputs get one
  range per token instead of one per batch (:mod:`xlsent.export.per_token`); such inputs are not smoothed
  (per-token ranges alone reached the same closeness to fp32, one ``Mul`` fewer);
* **outlier channels** (``outliers`` = k > 0): the k input channels of each quantised MatMul with the largest
  calibrated ``max|x|`` go to an fp32 MatMul (:mod:`xlsent.export.outliers`, LLM.int8()'s split made static);
* **static ranges** (``static``): onnxruntime's static QDQ int8, one fixed activation range per MatMul input
  from the calibration texts instead of one per batch;
* **smoothing** (``smooth`` = α > 0): SmoothQuant (Xiao et al. 2023). A per-channel scale
  ``s_j = max|X_j|^α / max|W_j|^(1−α)`` moves activation outliers into the weights: the graph gets a
  ``Mul(X, 1/s)`` before each quantised MatMul and the weight rows are multiplied by ``s`` — exact in fp32.
  ``max|X_j|`` is calibrated by running the fp32 graph on ``calibration`` texts, which must not be test
  data: the default is bundled *training* text (Old-Testament verses, both languages). MatMuls reading one
  tensor (query, key, value) share one scale and one ``Mul``. ``smooth_search`` (a list of α) instead picks
  α per input tensor by the simulated int8 error of its MatMuls on ``search_texts`` calibration texts; on the
  development books it gave sentence vectors *less* close to fp32 than one global α, so it is not the
  default (docs/results.md). Decision: the
  explicit ``Mul`` is used instead of folding ``1/s`` into the preceding LayerNorm because in a post-LN
  BERT the LayerNorm's output is also the residual stream, which folding would change.

Outlier channels and static ranges are library options, not the CLI's: on the development data the first
brought the vectors 4× closer to fp32 but lost more ny→en queries than the default and ran at 0.4× its speed
(the ``Gather`` on the channel axis), the second lost 11–18 points (docs/results.md, fifth pass).

Node names come from the traced sentence-transformers graph (``…/layer.N/attention/self/query/MatMul``);
a weight MatMul whose name matches no part is treated as ``other`` and quantised like the rest.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from xlsent.export.fake_quant import smooth_scale
from xlsent.utils.errors import XlsentError

PARTS = ("query", "key", "value", "attention_output", "ffn_in", "ffn_out")
_PART_PATTERNS = {
    "query": r"attention/self/query/MatMul",
    "key": r"attention/self/key/MatMul",
    "value": r"attention/self/value/MatMul",
    "attention_output": r"attention/output/dense/MatMul",
    "ffn_in": r"intermediate/dense/MatMul",
    "ffn_out": r"layer\.\d+/output/dense/MatMul",
}
_LAYER = re.compile(r"layer\.(\d+)/")


@dataclass
class Int8Settings:
    """What the int8 pass quantises and how (see the module docstring)."""

    per_channel: bool = True
    reduce_range: bool = False
    attention: bool = False
    embeddings: bool = False
    fp32_parts: list[str] = field(default_factory=list)
    fp32_layers: list[int] = field(default_factory=list)
    per_token: list[str] = field(default_factory=list)
    smooth: float = 0.0
    smooth_search: tuple[float, ...] = ()
    outliers: int = 0
    static: bool = False
    calibration: str = "bible-en-ny:train"
    calibration_texts: int = 256
    search_texts: int = 64

    def __post_init__(self) -> None:
        for what, parts in (("fp32", self.fp32_parts), ("per-token", self.per_token)):
            bad = [p for p in parts if p.split("@")[0] not in PARTS or ("@" in p and not p.split("@", 1)[1].isdigit())]
            if bad:
                raise XlsentError(f"unknown {what} part(s) {', '.join(bad)}: choose from {', '.join(PARTS)}, each "
                                  "alone (every layer) or as PART@LAYER (one 0-based layer, e.g. ffn_out@4)")
        if not 0.0 <= float(self.smooth) < 1.0:
            raise XlsentError(f"--smooth must be in [0, 1) (SmoothQuant's α; 0 = off), not {self.smooth}")
        if int(self.calibration_texts) < 1:
            raise XlsentError("calibration_texts must be ≥ 1")
        self.smooth_search = tuple(float(a) for a in self.smooth_search)
        if any(not 0.0 < a < 1.0 for a in self.smooth_search):
            raise XlsentError(f"smoothing search values must be in (0, 1), not {list(self.smooth_search)}")
        if int(self.outliers) < 0:
            raise XlsentError(f"outliers must be ≥ 0 (input channels kept fp32 per MatMul; 0 = off), not {self.outliers}")
        if self.static and (self.per_token or self.attention):
            raise XlsentError("static int8 fixes each activation range from calibration text: it cannot be combined "
                              "with per-token scales or int8 attention products")
        if self.outliers and self.smooth_search:
            raise XlsentError("outlier channels and the per-input smoothing search cannot be combined: use one α (--smooth)")


def default_int8() -> Int8Settings:
    """The int8 recipe ``xlsent export --int8`` uses: weight MatMuls only, per-channel, SmoothQuant α = 0.65
    calibrated on 256 bundled training verses. Chosen on the Old-Testament development books (500 pairs,
    e5-small) among plain, parts kept fp32 and α ∈ {0.5, 0.65, 0.8, 0.9}: the only setting within 0.5 point of
    fp32 P@1 in both directions there. Per-token scales (``per_token``) are not in it: they bring the vectors
    three times closer to fp32 but cost the ny→en direction on all 1,684 development pairs, with and without
    smoothing, with and without bias correction (docs/results.md)."""
    return Int8Settings(smooth=0.65)


def in_parts(name: str, parts: Sequence[str]) -> bool:
    part = part_of(name)
    return part in parts or f"{part}@{layer_of(name)}" in parts


def part_of(name: str) -> str:
    for part, pattern in _PART_PATTERNS.items():
        if re.search(pattern, name):
            return part
    return "other"


def layer_of(name: str) -> int | None:
    m = _LAYER.search(name)
    return int(m.group(1)) if m else None


def select_nodes(model_proto, settings: Int8Settings) -> tuple[list[str], dict[str, int]]:
    """Names of the nodes to quantise, and counts of what was kept fp32 and why."""
    inits = {i.name for i in model_proto.graph.initializer}
    chosen, kept = [], {"attention_matmul": 0, "fp32_part": 0, "fp32_layer": 0, "embedding_gather": 0}
    for node in model_proto.graph.node:
        if node.op_type == "MatMul" and "word_embeddings" in node.name:  # a low-rank token table's tail
            if settings.embeddings:
                chosen.append(node.name)
            else:
                kept["embedding_gather"] += 1
        elif node.op_type == "MatMul":
            weighted = any(i in inits for i in node.input)
            if not weighted:
                if settings.attention:
                    chosen.append(node.name)
                else:
                    kept["attention_matmul"] += 1
                continue
            if in_parts(node.name, settings.fp32_parts):
                kept["fp32_part"] += 1
            elif layer_of(node.name) in set(settings.fp32_layers):
                kept["fp32_layer"] += 1
            else:
                chosen.append(node.name)
        elif node.op_type == "Gather" and "word_embeddings" in node.name:
            if settings.embeddings:
                chosen.append(node.name)
            else:
                kept["embedding_gather"] += 1
    return chosen, kept


def calibration_texts(spec: str, n: int) -> list[str]:
    """Texts for calibration: a bundled pair set (both sides, seeded sample) or a file of one text a line."""
    from xlsent.export.vocab import read_texts

    return read_texts(spec, n, sample=True)


def activation_maxima(fp32_path: Path, tensors: Sequence[str], texts: list[str], tokenize,
                      keep_batches: int = 0) -> dict[str, np.ndarray] | tuple[dict, dict]:
    """Per-channel max |x| of graph tensors over calibration texts (the fp32 graph with extra outputs).

    ``keep_batches`` > 0 also returns, per tensor, the real-token rows of the first ``keep_batches`` batches of
    16 texts (float32, one array per batch) — what the smoothing search simulates int8 on."""
    import onnx
    import onnxruntime as ort

    from xlsent.encoding.onnx_backend import session_options

    proto = onnx.load(str(fp32_path))
    have = {o.name for o in proto.graph.output}
    for name in tensors:
        if name not in have:
            proto.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    sess = ort.InferenceSession(proto.SerializeToString(), session_options(0), providers=["CPUExecutionProvider"])
    maxima: dict[str, np.ndarray] = {}
    rows: dict[str, list[np.ndarray]] = {name: [] for name in tensors}
    for b, start in enumerate(range(0, len(texts), 16)):
        ids, mask = tokenize(texts[start : start + 16])
        outs = sess.run(list(tensors), {"input_ids": ids, "attention_mask": mask})
        keep = mask.astype(bool)
        for name, value in zip(tensors, outs):
            m = np.abs(value[keep]).max(0)  # real tokens only: padding never reaches a user's vectors
            maxima[name] = m if name not in maxima else np.maximum(maxima[name], m)
            if b < keep_batches:
                rows[name].append(value[keep].astype(np.float32))
    return (maxima, rows) if keep_batches else maxima


def _simulated_error(batches: list[np.ndarray], weights: list[np.ndarray], s: np.ndarray, per_channel: bool,
                     reduce_range: bool) -> float:
    """Relative squared error of ``X·W`` under onnxruntime's dynamic int8 after smoothing by ``s``, summed over the
    MatMuls reading ``X`` (activations uint8 per batch, weights int8 symmetric; the simulation of
    :mod:`xlsent.export.fake_quant`, tested against onnxruntime)."""
    import torch

    from xlsent.export.fake_quant import fake_quant_activation, fake_quant_weight

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
                     rows: dict[str, list[np.ndarray]], alphas: Sequence[float], settings: "Int8Settings",
                     ) -> dict[str, float]:
    """SmoothQuant's α per input tensor: the value of ``alphas`` whose simulated int8 error on the calibration
    rows is least (Xiao et al. 2023 tune one α per model; a per-layer search is their suggested refinement)."""
    chosen = {}
    for x, weights in groups.items():
        wmax = np.maximum(np.max([np.abs(w).max(1) for w in weights], axis=0), 1e-5)
        best = None
        for a in alphas:
            s = smooth_scale(maxima[x], wmax, a)
            e = _simulated_error(rows[x], weights, s, settings.per_channel, settings.reduce_range)
            if best is None or e < best[0]:
                best = (e, a)
        chosen[x] = best[1]
    return chosen


def weight_groups(proto, nodes: list[str], maxima: dict[str, np.ndarray]) -> dict[str, list]:
    """The weight MatMuls of ``nodes`` grouped by the input tensor they read (only those ``maxima`` covers)."""
    from onnx import numpy_helper

    inits = {i.name: i for i in proto.graph.initializer}
    by_name = {n.name: n for n in proto.graph.node}
    groups: dict[str, list] = {}
    for name in nodes:
        node = by_name[name]
        x, w = node.input[0], node.input[1]
        if w not in inits or x not in maxima:
            continue
        weight = numpy_helper.to_array(inits[w])
        if weight.ndim != 2 or weight.shape[0] != maxima[x].shape[0]:
            continue
        groups.setdefault(x, []).append(node)
    return groups


def smooth_graph(proto, nodes: list[str], maxima: dict[str, np.ndarray], alpha: float | dict[str, float]) -> int:
    """SmoothQuant: for the weight MatMuls in ``nodes``, insert ``Mul(X, 1/s)`` and scale the weight rows by ``s``.

    MatMuls that read the same input (query, key and value read one LayerNorm output) share one scale and one
    ``Mul``: ``max|W_j|`` is then the largest over their weights. One ``Mul`` instead of three per layer saves
    time, and the three quantised inputs are the same tensor. ``alpha``: one α, or one per input tensor (from
    :func:`search_smoothing`). Returns the number of MatMuls smoothed."""
    import onnx
    from onnx import numpy_helper

    inits = {i.name: i for i in proto.graph.initializer}
    groups = weight_groups(proto, nodes, maxima)
    count = 0
    new_nodes = []
    for x, members in groups.items():
        weights = [numpy_helper.to_array(inits[n.input[1]]).astype(np.float32) for n in members]
        wmax = np.maximum(np.max([np.abs(wt).max(1) for wt in weights], axis=0), 1e-5)
        s = smooth_scale(maxima[x], wmax, alpha[x] if isinstance(alpha, dict) else alpha)
        first = members[0].name
        inv = onnx.numpy_helper.from_array((1.0 / s).astype(np.float32), name=f"{first}/smooth_inv")
        proto.graph.initializer.append(inv)
        scaled = f"{first}/smoothed_input"
        new_nodes.append((members, onnx.helper.make_node("Mul", [x, inv.name], [scaled], name=f"{first}/Smooth")))
        for node, weight in zip(members, weights):
            node.input[0] = scaled
            inits[node.input[1]].CopyFrom(numpy_helper.from_array(weight * s[:, None], name=node.input[1]))
            count += 1
    for members, mul in new_nodes:  # each Mul goes just before the first of its MatMuls (topological order kept)
        order = list(proto.graph.node)
        idx = min(order.index(n) for n in members)
        proto.graph.node.insert(idx, mul)
    return count


def _shared_weights(proto) -> None:
    """Give every weight MatMul its own initializer (smoothing scales a weight for one consumer)."""
    import onnx

    inits = {i.name: i for i in proto.graph.initializer}
    users: dict[str, int] = {}
    for node in proto.graph.node:
        if node.op_type == "MatMul":
            for i in node.input[1:]:
                if i in inits:
                    users[i] = users.get(i, 0) + 1
                    if users[i] > 1:
                        copy = onnx.TensorProto()
                        copy.CopyFrom(inits[i])
                        copy.name = f"{i}/copy{users[i]}"
                        proto.graph.initializer.append(copy)
                        node.input[1] = copy.name


def quantize(fp32_path: str | Path, out_path: str | Path, settings: Int8Settings, model=None, log=print) -> dict:
    """Write the int8 graph of ``fp32_path`` to ``out_path``; return the settings and what was done."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fp32_path, out_path = Path(fp32_path), Path(out_path)
    proto = onnx.load(str(fp32_path))
    nodes, kept = select_nodes(proto, settings)
    info = {"method": "dynamic", **asdict(settings), "quantized_nodes": len(nodes), "kept_fp32": kept}
    source = fp32_path
    smoothing = settings.smooth > 0 or bool(settings.smooth_search)
    texts: list[str] = []
    if smoothing or settings.outliers or settings.static:
        if model is None:
            raise XlsentError("smoothing, outlier channels and static int8 need the model's tokenizer for calibration")
        texts = calibration_texts(settings.calibration, settings.calibration_texts)
    if smoothing or settings.outliers:
        inits = {i.name for i in proto.graph.initializer}
        weight_nodes = [n for n in proto.graph.node  # MatMuls with a weight, not Q·Kᵀ or P·V
                        if n.name in set(nodes) and n.op_type == "MatMul" and n.input[1] in inits
                        and not in_parts(n.name, settings.per_token)]
        names = [n.name for n in weight_nodes]
        _shared_weights(proto)
        tensors = sorted({n.input[0] for n in weight_nodes})
        alpha: float | dict[str, float] = settings.smooth
        if settings.smooth_search:
            from onnx import numpy_helper

            maxima, rows = activation_maxima(fp32_path, tensors, texts, _tokenizer_fn(model),
                                             keep_batches=max(1, settings.search_texts // 16))
            inits = {i.name: i for i in proto.graph.initializer}
            groups = {x: [numpy_helper.to_array(inits[n.input[1]]).astype(np.float32) for n in members]
                      for x, members in weight_groups(proto, names, maxima).items()}
            alpha = search_smoothing(groups, maxima, rows, settings.smooth_search, settings)
            info["smooth_chosen"] = {x: a for x, a in alpha.items()}
            log("smoothing search: α per input " + ", ".join(f"{a}×{list(alpha.values()).count(a)}"
                                                              for a in sorted(set(alpha.values()))))
        else:
            maxima = activation_maxima(fp32_path, tensors, texts, _tokenizer_fn(model))
        if settings.outliers:
            from xlsent.export.outliers import split_outliers

            split = split_outliers(proto, weight_groups(proto, names, maxima), maxima, settings.outliers)
            maxima = {**maxima, **split}
            info["outlier_inputs"] = len(split)
            log(f"outlier channels: the {settings.outliers} largest of each of {len(split)} inputs kept fp32")
        if smoothing:
            info["smoothed_nodes"] = smooth_graph(proto, names, maxima, alpha)
            log(f"smoothing: {info['smoothed_nodes']} MatMuls, α={settings.smooth}, {len(texts)} calibration texts "
                f"({settings.calibration})")
        info["calibration_texts_used"] = len(texts)
        source = out_path.with_name(out_path.stem + ".calibrated.onnx")
        onnx.save(proto, str(source))
    log(f"int8: {len(nodes)} nodes quantised, kept fp32: "
        + ", ".join(f"{k} {v}" for k, v in kept.items() if v))
    if settings.static:
        _quantize_static(source, out_path, nodes, texts, settings, _tokenizer_fn(model))
        info["method"] = "static"
    else:
        quantize_dynamic(str(source), str(out_path), weight_type=QuantType.QInt8, per_channel=settings.per_channel,
                         reduce_range=settings.reduce_range, nodes_to_quantize=nodes,
                         op_types_to_quantize=["MatMul", "Gather"],
                         extra_options={"MatMulConstBOnly": not settings.attention})
    if source != fp32_path:
        source.unlink()
    if settings.per_token:
        from xlsent.export.per_token import per_token_activations

        chosen = {n for n in nodes if in_parts(n, settings.per_token)}
        q = onnx.load(str(out_path))
        info["per_token_inputs"] = per_token_activations(q, chosen)
        onnx.save(q, str(out_path))
        log(f"per-token activation scales: {info['per_token_inputs']} inputs ({', '.join(settings.per_token)})")
    return info


def _quantize_static(source: Path, out_path: Path, nodes: list[str], texts: list[str], settings: Int8Settings,
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


def _tokenizer_fn(model):
    from xlsent.models.handle import model_prompt

    def tokenize(texts: list[str]):
        prompt = model_prompt(model)
        enc = model.tokenizer([prompt + t for t in texts], padding=True, truncation=True,
                              max_length=model.max_seq_length, return_tensors="np")
        return enc["input_ids"].astype(np.int64), enc["attention_mask"].astype(np.int64)

    return tokenize
