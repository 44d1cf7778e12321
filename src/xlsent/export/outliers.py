"""Outlier input channels of the int8 MatMuls kept in fp32 (a static form of LLM.int8()'s decomposition).

onnxruntime's dynamic int8 quantises each MatMul input with one uint8 range for the whole batch, so a few
channels whose values are 10–60× the others' (the GELU output of e5-small's FFN, measured in
``docs/results.md``) leave the ordinary channels a handful of levels. Dettmers et al. (2022, "LLM.int8()")
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

import numpy as np


def split_outliers(proto, groups: dict[str, list], maxima: dict[str, np.ndarray], k: int) -> dict[str, np.ndarray]:
    """Rewrite ``proto`` in place: for each input tensor of ``groups`` (its weight MatMul nodes, from
    :func:`xlsent.export.quantize.weight_groups`), move the ``k`` channels with the largest ``maxima`` to an
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
