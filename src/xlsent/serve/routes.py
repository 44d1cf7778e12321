"""The service's routes, in three routers: embeddings (``/v1/embeddings``, ``/embed``), search (``/search``) and the
server's own (``/``, ``/health``, ``/info``, ``/metrics``). Each POST route takes its body as the pydantic model of
:func:`xlsent.serve.schema.models` — FastAPI validates it, and describes it in ``/openapi.json`` — and checks here
only what needs the model: readiness, the served name, texts (blank, too many, too long), width and language.

(No ``from __future__ import annotations`` here: FastAPI reads each body's model from the route's annotation, and
the models are made per server, from its limits.)
"""

import base64
from pathlib import Path
from typing import Any

import numpy as np
from fastapi import APIRouter
from fastapi.responses import HTMLResponse, JSONResponse, Response

from xlsent.serve import schema
from xlsent.serve.limits import LimitError
from xlsent.utils.text import shown

PAGE = Path(__file__).with_name("page.html")


def answers(m: Any, ok: str, description: str, codes: tuple = (401, 413, 422, 429, 503)) -> dict:
    """A route's ``responses``: 200 with the model ``ok`` and each refusal with the one error shape."""
    out: dict[Any, dict] = {200: {"model": getattr(m, ok), "description": description}} if ok else {}
    for code in codes:
        out[code] = {"model": m.Error, "description": schema.ERRORS[code]}
    return out


def encoded(vecs: np.ndarray, fmt: str) -> list[tuple[object, dict]]:
    """Each row in ``encoding_format`` ``fmt``, with the fields it adds (docs/guides/serving.md#encoding-formats):

    * ``float``: a list of floats; ``base64``: the little-endian float32 bytes, base64 (OpenAI's two);
    * ``int8``: a list of integers from −127 to 127, ``q = round(127 · x / max|x|)``, with the row's float ``scale``
      (``max|x| / 127``; the vector ≈ ``q × scale``) — ``xlsent embed --precision int8``'s records;
    * ``ubinary``: a list of integers from 0 to 255, the sign bits ``x > 0`` packed 8 to a byte, first coordinate in
      the high bit (``numpy.packbits``; ⌈d/8⌉ bytes, the last padded with 0 bits) — sentence-transformers' and
      infinity's ``ubinary``.
    """
    from xlsent.mining.store import quantize

    if fmt == "base64":
        return [(base64.b64encode(np.asarray(v, dtype="<f4").tobytes()).decode("ascii"), {}) for v in vecs]
    if fmt == "int8":
        rec = quantize(vecs, "int8")
        return [(q.tolist(), {"scale": float(scale)}) for scale, q in zip(rec["scale"], rec["q"])]
    if fmt == "ubinary":
        return [(row.tolist(), {}) for row in quantize(vecs, "ubinary")]
    return [(np.asarray(v, dtype=np.float32).tolist(), {}) for v in vecs]


def _cut_header(cut: int) -> dict:
    return {"X-Truncated-Inputs": str(cut)}


def embedding_router(service: Any, m: Any) -> APIRouter:
    """``POST /v1/embeddings`` (OpenAI's) and ``POST /embed`` (TEI's)."""
    router = APIRouter()

    @router.post("/v1/embeddings", summary="OpenAI-compatible embeddings", responses=answers(
        m, "EmbeddingsResponse", "one embedding per input, in order; X-Truncated-Inputs: texts cut to the token limit"))
    async def openai_embeddings(body: m.EmbeddingsRequest):  # type: ignore[name-defined]
        service.require_ready()
        if body.model is not None and body.model != service.name:
            raise LimitError(422, "model", service.name, f"model {shown(body.model)} is not served here; "
                             f"this server serves {shown(service.name)}")
        width = service.shaping.width(body.dimensions)
        texts = service.check_texts(body.input, "input")
        lang = service.shaping.language(body.language)
        vecs, tokens, cut = await service.embed(list(texts), prompt_name=body.prompt_name)
        items = [{"object": "embedding", "embedding": emb, "index": i, **extra}
                 for i, (emb, extra) in enumerate(encoded(service.shaping.shaped(vecs, lang, width),
                                                          body.encoding_format))]
        return JSONResponse({"object": "list", "data": items, "model": service.name,
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "truncated_inputs": cut}},
                            headers=_cut_header(cut))

    @router.post("/embed", summary="TEI-style embeddings", responses=answers(
        m, "Vectors", "one vector per input, in order; X-Truncated-Inputs: texts cut to the token limit"))
    async def tei_embed(body: m.EmbedRequest):  # type: ignore[name-defined]
        service.require_ready()
        texts = service.check_texts(body.inputs, "inputs")
        lang = service.shaping.language(body.language)
        width = service.shaping.width(body.dimensions)
        vecs, _, cut = await service.embed(list(texts), body.truncate, body.prompt_name)
        vecs = service.shaping.shaped(vecs, lang, width)
        if body.normalize:
            vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        return JSONResponse(np.asarray(vecs, dtype=np.float32).tolist(), headers=_cut_header(cut))

    return router


def search_router(service: Any, m: Any) -> APIRouter:
    """``POST /search``: the nearest entries of the ``--index`` corpus."""
    router = APIRouter()

    @router.post("/search", summary="nearest entries of the --index corpus",
                 responses=answers(m, "SearchResponse", "the k best entries, best first"))
    async def search(body: m.SearchRequest):  # type: ignore[name-defined]
        service.require_ready()
        index = service.index
        if index is None:
            raise LimitError(422, "index", None, "this server has no search corpus (start it with --index)")
        texts = service.check_texts(body.query, "query")
        lang = service.shaping.language(body.language)
        means = service.shaping.means
        if index.centered and lang is None:
            raise LimitError(422, "language", means.languages, "this index is centered per language: name the "
                             f"query's 'language' (one of {', '.join(means.languages)})")
        vecs, _, cut = await service.embed(list(texts), prompt_name=body.prompt_name)
        if index.centered:  # a query is centered only against a centered index
            vecs = service.shaping.centered(vecs, lang)
        return JSONResponse({"query": body.query, "index": index.name, "query_centered": index.centered,
                             "index_centered": index.centered, "scoring": index.scoring,
                             "matches": index.search(vecs[0], body.k, lang)}, headers=_cut_header(cut))

    return router


def server_router(service: Any, m: Any) -> APIRouter:
    """``GET /`` (the search page), ``/health``, ``/info`` and ``/metrics``."""
    from prometheus_client import CONTENT_TYPE_LATEST

    router = APIRouter()

    @router.get("/", response_class=HTMLResponse, summary="the search page",
                responses={200: {"description": "the page", "content": {"text/html": {"schema": {"type": "string"}}}}})
    async def page():
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    @router.get("/health", summary="200 once loaded and warm; 503 while loading, after a failed load or while draining",
                responses={200: {"model": m.Health, "description": "ready"},
                           503: {"model": m.Health, "description": "loading, failed (with the error) or draining"}})
    async def health():
        if service.draining:  # a load balancer stops sending here before the listener closes
            return JSONResponse({"status": "draining", "in_flight": service.in_flight}, status_code=503)
        if service.ready:
            return {"status": "ok"}
        return JSONResponse({"status": "failed" if service.error else "loading", "error": service.error},
                            status_code=503, headers={"Retry-After": "5"})

    @router.get("/info", summary="the model, its limits, the index, which languages can be centered",
                responses={200: {"model": m.Info, "description": "the server's model and settings"},
                           401: {"model": m.Error, "description": schema.ERRORS[401]}})
    async def info():
        return service.info()

    @router.get("/metrics", summary="Prometheus metrics",
                responses={200: {"description": "Prometheus text format",
                                 "content": {"text/plain": {"schema": {"type": "string"}}}},
                           401: {"model": m.Error, "description": schema.ERRORS[401]}})
    async def metrics():
        return Response(service.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return router
