"""One ONNX graph for a whole sentence-transformers model: token ids → the model's sentence vector.

The graph runs every module of the loaded ``SentenceTransformer`` in order — the transformer (with any
layer cut already in its config), pooling (mean, CLS), Dense heads (a siamese model's head and stored center
are written as Dense and Normalize), Normalize — by tracing the model's own ``forward``
on a features dict, so no module is re-implemented and none can be skipped. Tokenisation, the model's
prompt and chunked pooling stay outside the graph (:class:`xlsent.encoding.onnx_backend.OnnxBackend` and
:class:`xlsent.encoding.encoder.Encoder` apply them).

Decisions:

* **exporter**: ``torch.onnx.export`` with the TorchScript tracer (``dynamo=False``), opset 17. Its graphs
  are what onnxruntime's quantiser and transformer fusions are written for; on e5-small the traced graph's
  int8 model ran faster than the dynamo graph's (see ``docs/results.md``);
* **inputs**: ``input_ids`` and ``attention_mask`` (int64, dynamic batch and length). ``token_type_ids``
  is not an input: a single sentence has all-zero type ids, which every BERT-family model defaults to;
* **attention**: opset 17 has no fused attention operator, so the tracer writes attention as plain
  MatMul / Softmax nodes, which the int8 pass can quantise;
* **NaN guards removed**: torch's scaled-dot-product attention exports as ``Where(IsNaN(Softmax(x)), 0,
  Softmax(x))``, a guard for a query whose every key is masked. The model's additive mask is the dtype's
  most negative finite number, not ``-inf``, and every text keeps its ``<s>`` token, so no softmax row here
  can be NaN: :func:`drop_softmax_nan_guards` rewires the guard's users to the softmax (on e5-small the
  guards were 8% of the int8 graph's time at batch 32). The fp32 check after export still compares the
  whole graph with the torch model.

A model whose pooling leaves the prompt out (``include_prompt=False``) needs the prompt length inside the
graph and is refused with a clear error, as is any module the tracer cannot follow.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import torch

from xlsent.models.handle import model_prompt
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_failure

#: bumped whenever the exported graph changes (2: softmax NaN guards removed), so exports cached for
#: ``--backend onnx`` (:func:`xlsent.exporter.load.cached_export`) are made again
GRAPH_VERSION = 2
OPSET = 17
INPUTS = ("input_ids", "attention_mask")
OUTPUT = "sentence_embedding"


class SentencePipeline(torch.nn.Module):
    """``(input_ids, attention_mask) → sentence_embedding`` through every module of ``model``."""

    def __init__(self, model) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model({"input_ids": input_ids, "attention_mask": attention_mask})[OUTPUT]


def check_exportable(model, where: str) -> None:
    """Raise :class:`XlsentError` if ``model`` (a SentenceTransformer) cannot become one graph."""
    from sentence_transformers.base.modules import Transformer

    if len(model) == 0 or not isinstance(model[0], Transformer):
        raise XlsentError(f"{where}: not exportable — the first module is "
                          f"{type(model[0]).__name__ if len(model) else 'missing'}, not a Hugging Face transformer")
    if model[0].tokenizer is None or not getattr(model[0].tokenizer, "is_fast", False):
        raise XlsentError(f"{where}: not exportable — the export needs a fast tokenizer (tokenizer.json)")
    for i, module in enumerate(model):
        if getattr(module, "include_prompt", True) is False and model_prompt(model):
            raise XlsentError(f"{where}: not exportable — module {i} ({type(module).__name__}) pools without the "
                              "prompt, which needs the prompt length inside the graph")


def example_inputs(model, texts: list[str] | None = None) -> dict[str, torch.Tensor]:
    texts = texts or ["a short text", "a somewhat longer text to give the tracer two lengths"]
    enc = model.tokenizer([model_prompt(model) + t for t in texts], padding=True, truncation=True,
                          max_length=model.max_seq_length, return_tensors="pt")
    return {k: enc[k] for k in INPUTS}


def export_graph(model, path: str | Path, where: str = "model") -> Path:
    """Trace ``model`` into ``path`` (one ``.onnx`` file, weights inside) and check it reproduces the model."""
    check_exportable(model, where)
    path = Path(path)
    pipe = SentencePipeline(model).eval()
    feeds = example_inputs(model)
    axes = {name: {0: "batch", 1: "sequence"} for name in INPUTS}
    axes[OUTPUT] = {0: "batch"}
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(pipe, (feeds["input_ids"], feeds["attention_mask"]), str(path), dynamo=False,
                              input_names=list(INPUTS), output_names=[OUTPUT], dynamic_axes=axes,
                              opset_version=OPSET, do_constant_folding=True)
    except Exception as exc:  # the tracer's messages name the module that failed
        failure = write_failure(path, "the exported model's graph", exc)
        if failure is not None:  # a full disk, not the model
            raise failure from exc
        modules = ", ".join(type(m).__name__ for m in model)
        raise XlsentError(f"{where}: not exportable — tracing the modules ({modules}) failed: "
                          f"{str(exc).splitlines()[0][:300]}") from exc
    import onnx

    proto = onnx.load(str(path), load_external_data=False)  # nodes only: a large model's weights stay where they are
    if drop_softmax_nan_guards(proto):
        onnx.save(proto, str(path))
    return path


def drop_softmax_nan_guards(proto) -> int:
    """Remove ``Where(IsNaN(s), 0, s)`` after each ``Softmax`` ``s`` (see the module docstring); the count removed."""
    producer = {o: n for n in proto.graph.node for o in n.output}
    consumers: dict[str, list] = {}
    for n in proto.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    graph_outputs = {o.name for o in proto.graph.output}
    drop, rename = [], {}
    for node in proto.graph.node:
        if node.op_type != "IsNaN" or producer.get(node.input[0]) is None \
                or producer[node.input[0]].op_type != "Softmax":
            continue
        soft = node.input[0]
        users = consumers.get(node.output[0], [])
        if len(users) != 1 or users[0].op_type != "Where" or list(users[0].input)[::2] != [node.output[0], soft]:
            continue
        where = users[0]
        if where.output[0] in graph_outputs:
            continue
        drop += [node, where]
        rename[where.output[0]] = soft
    for n in drop:
        proto.graph.node.remove(n)
    for n in proto.graph.node:
        for k, i in enumerate(n.input):
            if i in rename:
                n.input[k] = rename[i]
    return len(drop) // 2
