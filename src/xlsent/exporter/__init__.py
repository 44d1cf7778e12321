"""Deployable models: ONNX export of the whole sentence-transformers pipeline, int8, vocabulary trimming.

* :mod:`xlsent.exporter.graph` — one ONNX graph from token ids to the model's sentence vector (transformer,
  pooling, every Dense / Normalize / centering module), checked against ``SentenceTransformer.encode``;
* :mod:`xlsent.exporter.quantize` — int8 settings and the quantisation passes (dynamic, sensitive nodes kept
  in fp32, SmoothQuant-style scaling calibrated on bundled training text; the int8 options measured and not
  adopted live in ``benchmarks/export/experiments/``);
* :mod:`xlsent.exporter.folder` — the exported folder (``model.onnx``, tokenizer, ``xlsent_onnx.json``) and
  :func:`export_model`, what ``xlsent export`` runs;
* :mod:`xlsent.exporter.load` — ``--backend onnx`` on a torch model: exported once into the cache.

Vocabulary trimming (``--keep-vocab``) is a change to the model's tokenizer and token table, made before the graph
is traced: :mod:`xlsent.models.vocab.trim`, beside extend-vocab and romanize (``extend_vocab``, ``romanize``,
``vocab`` and ``tail_embedding`` here are the old names of those modules, kept for old imports).

The folder is read one layer down, by :mod:`xlsent.encoding.onnx_folder` (the manifest) and
:class:`xlsent.encoding.onnx_backend.OnnxBackend`; the encoder never exports.
"""
