"""The service's routes, in three routers: embeddings (``/v1/embeddings``, ``/embed``), search (``/search``) and the
server's own (``/``, ``/health``, ``/info``, ``/metrics``). Each POST route takes its body as a pydantic model of
:mod:`xlsent.serve.schema` — FastAPI validates it, and describes it in ``/openapi.json`` — and checks here only what
needs the model: readiness, the served name, texts (blank, too many, too long), width and language.

Each route declares its answer's model (``response_model``; ``responses``: the refusals, in the one error shape) and
returns that model's data, which FastAPI checks and writes as JSON; a header goes on the ``Response`` it passes in.
Decision: the vectors too, not a hand-built ``JSONResponse``: FastAPI (≥ 0.130) validates and writes a response
model's data in pydantic's Rust core, 5–9× faster than the ``json.dumps`` of a ``JSONResponse`` for the largest
answers (256 × 1024 floats: 24 ms against 127 ms for ``/v1/embeddings``, 14 against 155 for ``/embed``; one text:
0.06 against 0.38 ms) — time the event loop shares with the model's threads.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from xlsent.serve.limits import LimitError
from xlsent.serve.schema import (ERRORS, EmbeddingsRequest, EmbeddingsResponse, EmbedRequest, Error, Health, Info,
                                 SearchRequest, SearchResponse, Vectors)
from xlsent.utils.text import shown

PAGE = Path(__file__).with_name("page.html")


def refusals(codes: tuple[int, ...] = (401, 413, 422, 429, 503)) -> dict[int | str, dict[str, Any]]:
    """A route's ``responses``: each refusal's code with the one error shape."""
    return {code: {"model": Error, "description": ERRORS[code]} for code in codes}


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


def _say_cut(response: Response, cut: int) -> None:
    """The ``X-Truncated-Inputs`` header: how many texts were cut to the token limit."""
    response.headers["X-Truncated-Inputs"] = str(cut)


def embedding_router(service: Any) -> APIRouter:
    """``POST /v1/embeddings`` (OpenAI's) and ``POST /embed`` (TEI's)."""
    router = APIRouter()

    @router.post("/v1/embeddings", summary="OpenAI-compatible embeddings", response_model=EmbeddingsResponse,
                 response_model_exclude_unset=True, response_description="one embedding per input, in order; "
                 "X-Truncated-Inputs: texts cut to the token limit", responses=refusals())
    async def openai_embeddings(body: EmbeddingsRequest, response: Response) -> dict[str, Any]:
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
        _say_cut(response, cut)
        return {"object": "list", "data": items, "model": service.name,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "truncated_inputs": cut}}

    @router.post("/embed", summary="TEI-style embeddings", response_model=Vectors, response_description="one vector "
                 "per input, in order; X-Truncated-Inputs: texts cut to the token limit", responses=refusals())
    async def tei_embed(body: EmbedRequest, response: Response) -> list[list[float]]:
        service.require_ready()
        texts = service.check_texts(body.inputs, "inputs")
        lang = service.shaping.language(body.language)
        width = service.shaping.width(body.dimensions)
        vecs, _, cut = await service.embed(list(texts), body.truncate, body.prompt_name)
        vecs = service.shaping.shaped(vecs, lang, width)
        if body.normalize:
            vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        _say_cut(response, cut)
        return np.asarray(vecs, dtype=np.float32).tolist()

    return router


def search_router(service: Any) -> APIRouter:
    """``POST /search``: the nearest entries of the ``--index`` corpus."""
    router = APIRouter()

    @router.post("/search", summary="nearest entries of the --index corpus", response_model=SearchResponse,
                 response_description="the k best entries, best first", responses=refusals())
    async def search(body: SearchRequest, response: Response) -> dict[str, Any]:
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
        _say_cut(response, cut)
        return {"query": body.query, "index": index.name, "query_centered": index.centered,
                "index_centered": index.centered, "scoring": index.scoring,
                "matches": index.search(vecs[0], body.k, lang)}

    return router


def server_router(service: Any) -> APIRouter:
    """``GET /`` (the search page), ``/health``, ``/info`` and ``/metrics``."""
    from prometheus_client import CONTENT_TYPE_LATEST

    router = APIRouter()

    @router.get("/", response_class=HTMLResponse, summary="the search page",
                responses={200: {"description": "the page", "content": {"text/html": {"schema": {"type": "string"}}}}})
    async def page() -> HTMLResponse:
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    @router.get("/health", summary="200 once loaded and warm; 503 while loading, after a failed load or while draining",
                response_model=Health, response_model_exclude_unset=True, response_description="ready",
                responses={503: {"model": Health, "description": "loading, failed (with the error) or draining"}})
    async def health(response: Response) -> Health:
        if service.draining:  # a load balancer stops sending here before the listener closes
            response.status_code = 503
            return Health(status="draining", in_flight=service.in_flight)
        if service.ready:
            return Health(status="ok")
        response.status_code, response.headers["Retry-After"] = 503, "5"
        return Health(status="failed" if service.error else "loading", error=service.error)

    @router.get("/info", summary="the model, its limits, the index, which languages can be centered",
                response_model=Info, response_description="the server's model and settings",
                responses=refusals((401,)))
    async def info() -> dict[str, Any]:
        return service.info()

    @router.get("/metrics", summary="Prometheus metrics",
                responses={200: {"description": "Prometheus text format",
                                 "content": {"text/plain": {"schema": {"type": "string"}}}}, **refusals((401,))})
    async def metrics() -> Response:
        return Response(service.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    return router
