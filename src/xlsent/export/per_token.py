"""Per-token activation scales for chosen int8 MatMuls (a rewrite of onnxruntime's dynamic int8 graph).

onnxruntime's ``quantize_dynamic`` quantises a MatMul's input with **one** range for the whole tensor
(``DynamicQuantizeLinear``: every token of every text in the batch). One token with large activations then
coarsens every other token's codes — and a text's vector depends on which texts it was batched with. In
e5-small the input of the FFN's second MatMul (the GELU output, 1,536 channels) is where this costs: on 64 NT
verses per-token scales there alone bring the mean cosine to the fp32 output from 0.9992 to 0.9997, the same
as per-token scales on every MatMul, while per-token scales on query/key/value, attention output or FFN input
alone leave it at 0.9992 (docs/results.md).

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
needs (docs/results.md). It is an option (``--per-token ffn_out``).
"""

from __future__ import annotations

import numpy as np

MS_DOMAIN = "com.microsoft"


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
