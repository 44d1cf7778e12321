"""``xlsent serve``: an embedding and cross-lingual search service (FastAPI + uvicorn).

* :mod:`xlsent.serve.limits` — the limits and the one error shape;
* :mod:`xlsent.serve.batcher` — dynamic batching under a token budget, one inference worker;
* :mod:`xlsent.serve.index` — the search corpus (``--index``), faiss;
* :mod:`xlsent.serve.schema` — the request and response models (``/openapi.json`` is written from them), the
  server's limits a body is checked against and written into ``/openapi.json``;
* :mod:`xlsent.serve.auth` — API keys and the start-up refusal to listen beyond loopback without one;
* :mod:`xlsent.serve.server` — uvicorn with a SIGTERM drain that answers every accepted request;
* :mod:`xlsent.serve.app` — the routes (``/v1/embeddings``, ``/embed``, ``/search``, ``/``, ``/health``,
  ``/info``, ``/metrics``, ``/openapi.json``).
"""
