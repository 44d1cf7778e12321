"""int8 for an exported graph: onnxruntime dynamic quantisation with the choices that keep low-resource quality.

The pass is onnxruntime's ``quantize_dynamic`` (int8 weights, activations quantised per batch at run
time, ``MatMulInteger``), steered by :class:`Int8Settings`:

* **which MatMuls** — by default only the *weight* MatMuls (the linear layers: query, key, value,
  attention output, FFN in, FFN out). The two activation × activation MatMuls of attention (Q·Kᵀ and
  softmax·V) stay fp32 unless ``attention=True``: quantising the attention logits per tensor is where a
  plain ``quantize_dynamic`` loses most (measured in ``docs/results.md``);
* **the word-embedding table** (a Gather, and the small MatMul of a low-rank tail,
  :mod:`xlsent.models.vocab.tail_embedding`) stays fp32 unless ``embeddings=True`` (the notes name it as a
  common cause of broken multilingual int8 models; it is also not a MatMul, so int8 there saves disk,
  not time);
* **parts or layers kept fp32** — ``fp32_parts`` (any of :data:`PARTS` in every layer, or ``PART@LAYER`` in one)
  and ``fp32_layers`` (0-based);
* **per-channel** weight scales (default on) and ``reduce_range`` (7-bit weights; for CPUs without VNNI);
* **smoothing** (``smooth`` = α > 0): SmoothQuant (Xiao et al. 2023). A per-channel scale
  ``s_j = max|X_j|^α / max|W_j|^(1−α)`` moves activation outliers into the weights: the graph gets a
  ``Mul(X, 1/s)`` before each quantised MatMul and the weight rows are multiplied by ``s`` — exact in fp32.
  ``max|X_j|`` is calibrated by running the fp32 graph on ``calibration`` texts, which must not be test
  data: the default is bundled *training* text (Old-Testament verses, both languages). MatMuls reading one
  tensor (query, key, value) share one scale and one ``Mul``. Decision: the explicit ``Mul`` is used instead of
  folding ``1/s`` into the preceding LayerNorm because in a post-LN BERT the LayerNorm's output is also the
  residual stream, which folding would change.

Measured and not adopted, so not here (they live in ``benchmarks/export/experiments/``, runnable, with the rows they
produced in ``docs/experiments/export-and-int8.md``): per-token activation scales, outlier channels kept fp32,
static ranges, a per-input α search and quantisation-aware self-distillation. None kept development P@1 as well
as the default: most brought the vectors closer to fp32 and still lost ny→en queries; static ranges lost 11–18
points; outlier channels also halved the speed.

Node names come from the traced sentence-transformers graph (``…/layer.N/attention/self/query/MatMul``);
a weight MatMul whose name matches no part is treated as ``other`` and quantised like the rest.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from xlsent.utils.errors import XlsentError, named

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
    smooth: float = 0.0
    calibration: str = "bible-en-ny:train"
    calibration_texts: int = 256

    def __post_init__(self) -> None:
        bad = [p for p in self.fp32_parts
               if p.split("@")[0] not in PARTS or ("@" in p and not p.split("@", 1)[1].isdigit())]
        if bad:
            raise XlsentError(f"unknown fp32 part(s) {', '.join(bad)}: choose from {', '.join(PARTS)}, each alone "
                              "(every layer) or as PART@LAYER (one 0-based layer, e.g. ffn_out@4)")
        if not 0.0 <= float(self.smooth) < 1.0:
            raise XlsentError(f"{named('smooth', self.smooth)}: must be in [0, 1) (SmoothQuant's α; 0 = off)")
        if int(self.calibration_texts) < 1:
            raise XlsentError("calibration_texts must be ≥ 1")


def default_int8() -> Int8Settings:
    """The int8 recipe ``xlsent export --int8`` uses: weight MatMuls only, per-channel, SmoothQuant α = 0.65
    calibrated on 256 bundled training verses. Chosen on the Old-Testament development books (500 pairs,
    e5-small) among plain, parts kept fp32 and α ∈ {0.5, 0.65, 0.8, 0.9}: the only setting within 0.5 point of
    fp32 P@1 in both directions there. Per-token scales were not kept: they bring the vectors three times
    closer to fp32 but cost the ny→en direction on all 1,684 development pairs, with and without smoothing, with
    and without bias correction (docs/experiments/export-and-int8.md)."""
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
    from xlsent.models.vocab.trim import read_texts

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
    time, and the three quantised inputs are the same tensor. ``alpha``: one α, or one per input tensor.
    Returns the number of MatMuls smoothed."""
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


def untie_weights(proto) -> None:
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


def smooth_scale(xmax: np.ndarray, wmax: np.ndarray, alpha: float) -> np.ndarray:
    """SmoothQuant's per-input-channel ``s = max|X|^α / max|W|^(1−α)``, clipped to [0.01, 100]."""
    s = np.power(np.maximum(xmax, 1e-5), alpha) / np.power(wmax, 1.0 - alpha)
    return np.clip(s, 1e-2, 1e2).astype(np.float32)


def weight_matmuls(proto, nodes: Sequence[str]) -> list[str]:
    """The names of ``nodes`` that are MatMuls with a weight (the linear layers), not Q·Kᵀ or P·V."""
    inits = {i.name for i in proto.graph.initializer}
    chosen = set(nodes)
    return [n.name for n in proto.graph.node if n.name in chosen and n.op_type == "MatMul" and n.input[1] in inits]


def quantize(fp32_path: str | Path, out_path: str | Path, settings: Int8Settings, model=None, log=print) -> dict:
    """Write the int8 graph of ``fp32_path`` to ``out_path``; return the settings and what was done."""
    import onnx

    fp32_path, out_path = Path(fp32_path), Path(out_path)
    proto = onnx.load(str(fp32_path))
    nodes, kept = select_nodes(proto, settings)
    info = {"method": "dynamic", **asdict(settings), "quantized_nodes": len(nodes), "kept_fp32": kept}
    source = fp32_path
    if settings.smooth > 0:
        if model is None:
            raise XlsentError("smoothing needs the model's tokenizer for calibration")
        texts = calibration_texts(settings.calibration, settings.calibration_texts)
        names = weight_matmuls(proto, nodes)
        untie_weights(proto)
        by_name = {n.name: n for n in proto.graph.node}
        maxima = activation_maxima(fp32_path, sorted({by_name[n].input[0] for n in names}), texts,
                                   tokenizer_fn(model))
        info["smoothed_nodes"] = smooth_graph(proto, names, maxima, settings.smooth)
        info["calibration_texts_used"] = len(texts)
        log(f"smoothing: {info['smoothed_nodes']} MatMuls, α={settings.smooth}, {len(texts)} calibration texts "
            f"({settings.calibration})")
        source = out_path.with_name(out_path.stem + ".calibrated.onnx")
        onnx.save(proto, str(source))
    log(f"int8: {len(nodes)} nodes quantised, kept fp32: "
        + ", ".join(f"{k} {v}" for k, v in kept.items() if v))
    quantize_nodes(source, out_path, nodes, settings)
    if source != fp32_path:
        source.unlink()
    return info


def quantize_nodes(source: Path, out_path: Path, nodes: list[str], settings: Int8Settings) -> None:
    """onnxruntime's dynamic int8 of ``nodes`` (MatMuls and the token-table Gather) as ``settings`` say."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(out_path), weight_type=QuantType.QInt8, per_channel=settings.per_channel,
                     reduce_range=settings.reduce_range, nodes_to_quantize=nodes,
                     op_types_to_quantize=["MatMul", "Gather"],
                     extra_options={"MatMulConstBOnly": not settings.attention})


def tokenizer_fn(model):
    """``texts → (input_ids, attention_mask)`` as the exported graph takes them (the model's prompt included)."""
    from xlsent.models.handle import model_prompt

    def tokenize(texts: list[str]):
        prompt = model_prompt(model)
        enc = model.tokenizer([prompt + t for t in texts], padding=True, truncation=True,
                              max_length=model.max_seq_length, return_tensors="np")
        return enc["input_ids"].astype(np.int64), enc["attention_mask"].astype(np.int64)

    return tokenize
