"""The HTTP service: OpenAI-compatible embeddings, TEI-style ``/embed``, cross-lingual ``/search``, a search page,
health, info and Prometheus metrics — every request checked against :class:`ServeLimits` before it reaches
the model.

The model (and the search corpus) come from the command line only; nothing in a request names a path.
:class:`Service` owns the encoder (torch or ONNX, :meth:`xlsent.encoding.encoder.Encoder.load`), the
:class:`~xlsent.serve.batcher.Batcher` and the index; its metrics are :class:`~xlsent.serve.metrics.ServiceMetrics`,
what a response's vectors are made into :class:`~xlsent.serve.vectors.Shaping`. :func:`create_app` builds the
FastAPI app: the routers of :mod:`xlsent.serve.routes`, whose request bodies are the pydantic models of
:mod:`xlsent.serve.schema` (FastAPI validates them and generates ``/openapi.json`` from them), and one handler
that turns a validation error into the error shape below. Loading and a
warm-up run in a background thread at start-up: ``/health`` answers 503 until they are done, and so does
every route that needs the model.

Errors have one JSON shape, ``{"error": {"message", "type", "limit", "value"}}``, with the standard code:
401 (with ``WWW-Authenticate: Bearer``) for a missing, malformed or wrong API key when keys are set
(:mod:`xlsent.serve.auth`; every route but ``/health`` and the page); 413 for a body, input count, text length
or over-long text under ``--overlong reject``; 422 for a malformed
request (not JSON, empty or non-string input, text that is not Unicode — a lone surrogate such as ``"\\ud800"``,
valid JSON but not text — unknown encoding format, wrong model name, a ``dimensions`` that is not 1 to the model's
width); 429 with
``Retry-After`` when the queue is full; 503 while loading. A text cut under ``--overlong truncate`` is
reported: the ``X-Truncated-Inputs`` header and, in ``/v1/embeddings``, ``usage.truncated_inputs``. While the
server drains after SIGTERM (:mod:`xlsent.serve.server`), ``/health`` answers 503 and every request already
accepted is still answered. A message never fails to build: a value from the request is shown escaped and cut
(:func:`xlsent.utils.text.shown`). ``/openapi.json`` describes every route's bodies and this server's limits
(:mod:`xlsent.serve.schema`); with keys set it needs one, as every route but ``/health`` and the page.
A body is JSON (``Content-Type: application/json``, as OpenAI's and TEI's clients send it; FastAPI's convention).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from starlette.exceptions import HTTPException

from xlsent.serve.auth import ApiKeys
from xlsent.serve.batcher import Batcher, QueueFull
from xlsent.serve.limits import LimitError, ServeLimits
from xlsent.serve.metrics import ServiceMetrics
from xlsent.serve.schema import ENCODING_FORMATS, SERVER_LIMITS, not_unicode
from xlsent.serve.vectors import Shaping
from xlsent.utils.text import bad_char, describe, shown

AUTH_MESSAGES = {  # never the presented key
    "missing": "this server needs an API key: send 'Authorization: Bearer KEY'",
    "malformed": "the Authorization header must be 'Bearer KEY'",
    "wrong": "the API key is not valid on this server",
}
EMBEDDING_ROUTES = ("/v1/embeddings", "/embed", "/search")


class Service:
    """The served model, its batcher, its limits and (optionally) its search index; its metrics
    (:attr:`metrics`) and what a response's vectors are made into (:attr:`shaping`)."""

    def __init__(self, model: str, backend: str = "auto", threads: int = 0, limits: ServeLimits | None = None,
                 index: str | None = None, name: str | None = None, worker_nice: int = 10,
                 scoring: str = "csls", api_keys: "ApiKeys | None" = None, dimensions: int | None = None,
                 device: str = "auto", dtype: str = "auto") -> None:
        """``device`` (``auto`` | ``cpu`` | ``cuda`` | ``cuda:N`` | ``mps``) and ``dtype`` (``auto`` | ``fp32`` |
        ``fp16`` | ``bf16``): where the model runs and the precision a torch model encodes in, as for every other
        public function (:func:`xlsent.api._common.place`) — a device that is not there is one line here, before
        any model loads."""
        from xlsent.api._common import place
        from xlsent.utils.device import current_device

        place(device, dtype)
        self.device, self.dtype = current_device(), (dtype or "auto").strip().lower()  # auto resolved: cuda:0 …
        self.model_spec, self.backend_choice, self.threads = model, backend, threads
        self.shaping = Shaping(dimensions)
        from xlsent.serve.options import SERVE

        self.worker_nice = int(SERVE["worker_nice"].check(worker_nice, "worker_nice"))
        self.limits = limits or ServeLimits()
        self.index_spec = index
        self.scoring = scoring
        self.name = name or Path(str(model)).name
        self.ready = False
        self.error: str | None = None
        self.prompts: dict[str, str] = {}  # the model's named prompts, once loaded (a request's prompt_name)
        self.default_prompt_name: str | None = None
        self.encoder: Any = None
        self.batcher: Any = None  # a Batcher once loaded
        self.index: Any = None
        self.started = time.time()
        self.api_keys = api_keys
        self.draining = False  # set by SIGTERM (serve.server): /health answers 503 from then on
        self.in_flight = 0  # requests accepted and not yet finished
        self.answered_in_drain = 0  # requests answered after draining began
        self.unanswered = 0  # requests a drain cut before their response was sent
        self.metrics = ServiceMetrics(lambda: self.in_flight, lambda: self.batcher.depth if self.batcher else 0)

    # -- start-up -----------------------------------------------------------------------------------------
    def load(self) -> None:
        """Load the model, warm it up, embed the search corpus; then mark ready.

        Run in its own thread (:meth:`load_in_background`), it first lowers that thread's priority by
        ``worker_nice``: every thread the model starts from here — onnxruntime's pool, torch's OpenMP team, the
        batcher's worker — inherits it, while the HTTP event loop keeps the process's priority. On a machine
        whose cores the model keeps busy, the loop then still answers at once: a 429 or a health check does not
        wait for a forward pass to give up the CPU (Linux only; elsewhere a no-op)."""
        from xlsent.api._common import place
        from xlsent.exporter.load import load_encoder

        if threading.current_thread() is not threading.main_thread():
            lower_thread_priority(self.worker_nice)
        try:
            from xlsent.encoding.encoder import source_folder
            from xlsent.models.language_means import read_language_means

            place(self.device, self.dtype)  # this service's, whatever the process was told since it was made
            self.encoder = load_encoder(self.model_spec, backend=self.backend_choice, threads=self.threads,
                                        spin=False)  # the HTTP loop needs the cycles a spinning pool burns
            self.encoder = self.encoder.replace(show_progress=False)  # requests draw no progress bars
            shaping = self.shaping
            shaping.means = read_language_means(source_folder(self.model_spec))  # the named folder, on any backend
            from xlsent.encoding.width import valid_width
            from xlsent.models.widths import recorded_widths

            shaping.dimensions = valid_width(shaping.dimensions, self.encoder.dimension)  # --dimensions, now known
            shaping.full, shaping.widths = self.encoder.dimension, recorded_widths(source_folder(self.model_spec))
            backend = self.encoder.backend
            self.max_tokens = min(self.limits.max_tokens or backend.max_tokens, backend.max_tokens)
            model = self.encoder.replace(batch_size=self.limits.model_batch) if self.limits.model_batch else self.encoder
            self.prompts, self.default_prompt_name = served_prompts(self.encoder.backend)
            self.batcher = Batcher(by_prompt(model), self.limits.batch_tokens, self.limits.max_wait_ms,
                                   self.limits.max_queue, on_batch=None, model_batch=self.limits.model_batch)
            self._warm_up_worker()
            self.batcher.on_batch = self.metrics.on_batch  # metrics count requests' texts, not the warm-up's
            if self.index_spec:
                from xlsent.serve.index import SearchIndex

                self.index = SearchIndex.build(self.index_spec, self.encoder.replace(batch_size=64).encode,
                                               shaping.means, self.scoring)
            import gc

            gc.collect()
            gc.freeze()  # the loaded model's objects out of every later collection: a full collection under load
            # otherwise walks them all while holding the GIL (docs/experiments/serving.md, "Third look")
            self.ready = True
        except Exception as exc:  # reported by /health; the process stays up to say why
            self.error = f"{type(exc).__name__}: {exc}"
            raise

    WARM_UP_PASSES = 16

    def _warm_up_worker(self) -> None:
        """Single texts of growing length through the batcher, one after another, before ``/health`` turns 200.

        The worker thread is the one that serves; its first forward passes are slow whatever their shapes (a
        fresh instance, idle after start-up, answered its first second of 20 requests/s at a p50 of 1,028 ms
        against 48 ms once 40 requests had run — of one text repeated as well as of varied ones; 3 requests
        already brought it to 109 ms: ``docs/experiments/serving.md``). A warm-up in the loading thread does
        not warm it."""
        words = "the quick brown fox jumps over the lazy dog while the wide river runs".split()
        backend = self.encoder.backend
        for i in range(self.WARM_UP_PASSES):
            text = " ".join(words[j % len(words)] for j in range(2 + 4 * i))
            for f in self.batcher.submit([text], backend.token_counts([text])):
                f.result()

    def load_in_background(self) -> threading.Thread:
        t = threading.Thread(target=self._load_quietly, name="xlsent-load", daemon=True)
        t.start()
        return t

    def _load_quietly(self) -> None:
        try:
            self.load()
        except Exception:
            pass

    def close(self) -> None:
        if self.batcher is not None:
            self.batcher.close()

    # -- the checks every embedding request passes ----------------------------------------------------------
    def queue_full(self) -> bool:
        """True when no text can join the queue now (checked before a request's body is read)."""
        return self.ready and self.batcher is not None and self.batcher.depth >= self.limits.max_queue

    @staticmethod
    def busy(depth: int, limit: int) -> LimitError:
        return LimitError(429, "max_queue", limit, f"the server is busy ({depth} texts queued, limit {limit}); "
                          "retry shortly", {"Retry-After": "1"})

    def require_ready(self) -> None:
        if not self.ready:
            raise LimitError(503, "ready", False, "the model is still loading" if not self.error
                             else f"the model failed to load: {self.error}", {"Retry-After": "5"})

    def check_texts(self, value: str | list[str], field: str) -> list[str]:
        """A request's texts (the request model has checked their type): at least one, at most ``max_inputs``
        (413), none blank, none over ``max_chars`` (413), each Unicode."""
        texts = [value] if isinstance(value, str) else value
        if not texts:
            raise LimitError(422, "inputs", 0, f"'{field}' is empty: give at least one text")
        if len(texts) > self.limits.max_inputs:
            raise LimitError(413, "max_inputs", self.limits.max_inputs,
                             f"{len(texts)} inputs in one request; the limit is {self.limits.max_inputs}")
        for i, t in enumerate(texts):
            j = bad_char(t)
            if j is not None:
                raise not_unicode(field, i if isinstance(value, list) else None, describe("", j, t[j]))
            if not t.strip():
                raise LimitError(422, "empty input", i, f"input {i} is empty or whitespace")
            if len(t) > self.limits.max_chars:
                raise LimitError(413, "max_chars", self.limits.max_chars,
                                 f"input {i} has {len(t)} characters; the limit is {self.limits.max_chars}")
        return texts

    def prompt_text(self, name: str | None) -> str | None:
        """The text of the prompt a request names, or None for the model's default prompt."""
        if name is None:
            return None
        if name not in self.prompts:
            known = ", ".join(self.prompts) or "none (an exported folder keeps only its default prompt)"
            raise LimitError(422, "prompt_name", list(self.prompts),
                             f"prompt_name {shown(name)}: the model has no such prompt — its prompts: {known}")
        text = self.prompts[name]
        return None if text == getattr(self.encoder.backend, "default_prompt", None) else text

    def info(self) -> dict:
        """``/info``: the model, its widths, the limits, the index and which languages can be centered."""
        enc = self.encoder
        return {"model": self.name, "source": str(self.model_spec), "ready": self.ready,
                "dimension": enc.dimension if enc else None,
                "dimensions": self.shaping.widths_info() if enc else None, "encoding_formats": list(ENCODING_FORMATS),
                "prompts": self.prompts if enc else None, "default_prompt_name": self.default_prompt_name,
                "backend": type(enc.backend).__name__ if enc else self.backend_choice,
                "api_keys": self.api_keys is not None, "draining": self.draining,
                "threads": self.threads, "worker_nice": self.worker_nice, "device": self.device,
                "dtype": getattr(enc.backend, "dtype", None) if enc else self.dtype,
                "max_tokens": getattr(self, "max_tokens", None), "limits": self.limits.to_dict(),
                "index": ({"name": self.index.name, "entries": len(self.index), "centered": self.index.centered,
                           "scoring": self.index.scoring} if self.index else None),
                "centering": self.shaping.centering_info(self.index) if self.ready else None}

    async def embed(self, texts: list[str], truncate: bool | None = None, prompt_name: str | None = None
                    ) -> tuple[np.ndarray, int, int]:
        """Vectors, total tokens (after any cut) and how many texts were cut; ``prompt_name``: one of the model's
        prompts instead of its default (422 naming those there are)."""
        self.require_ready()
        backend = self.encoder.backend
        prompt = self.prompt_text(prompt_name)
        counts = backend.token_counts(texts, prompt) if prompt is not None else backend.token_counts(texts)
        policy = self.limits.overlong if truncate is None else ("truncate" if truncate else "reject")
        cut = 0
        for i, n in enumerate(counts):
            if n > self.max_tokens:
                if policy == "reject":
                    raise LimitError(413, "max_tokens", self.max_tokens,
                                     f"input {i} is {n} tokens; the limit is {self.max_tokens} (the server's policy is "
                                     "reject; send truncate=true to /embed, or shorten it)")
                texts[i] = (backend.truncate(texts[i], self.max_tokens, prompt) if prompt is not None
                            else backend.truncate(texts[i], self.max_tokens))
                counts[i] = min(n, self.max_tokens)
                cut += 1
        try:
            vecs = await self.batcher.embed(texts, counts, prompt)
        except QueueFull as full:
            raise self.busy(full.depth, full.limit) from None
        if cut:
            self.metrics.truncated.inc(cut)
        return vecs, int(sum(counts)), cut


def served_prompts(backend) -> tuple[dict[str, str], str | None]:
    """A served model's named prompts and the name of its default (sentence-transformers' ``prompts`` and
    ``default_prompt_name``); an exported folder keeps only its default prompt's text: ``({}, None)``."""
    prompts = backend.prompts() if hasattr(backend, "prompts") else {}
    default = getattr(backend, "default_prompt", None)
    return prompts, next((n for n, text in prompts.items() if text == default and default), None)


def by_prompt(model):
    """The batcher's encode: ``model.encode(texts)``, or with another prompt ``encode(texts, prompt)`` through a
    copy of ``model`` with that prompt (one copy a prompt, kept)."""
    copies: dict[str, Any] = {}

    def encode(texts: list[str], prompt: str | None = None) -> np.ndarray:
        if prompt is None:
            return model.encode(texts)
        if prompt not in copies:
            copies[prompt] = model.replace(prompt=prompt)
        return copies[prompt].encode(texts)

    return encode


def lower_thread_priority(steps: int) -> bool:
    """Raise the calling thread's nice value by ``steps`` (Linux: nice is per thread); False where not done."""
    import os
    import sys

    if steps <= 0 or not sys.platform.startswith("linux"):
        return False
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + steps))
        return True
    except OSError:
        return False


class AdmissionAndMetrics:
    """Plain ASGI middleware: refuse a request without a configured API key (401), by ``Content-Length`` (413)
    or a full queue (429) before the body is read; count every request by route and status with its latency;
    keep the count of requests in flight, and of those a drain left unanswered; make this server's limits the ones
    the request's body is validated against (:data:`xlsent.serve.schema.SERVER_LIMITS`).

    Decision: with keys set, every route needs one except ``/health`` (load balancers probe it without
    credentials) and the search page ``/``: a browser cannot send a Bearer header when it opens a page, and the
    page is a static file that holds nothing served — it asks for the key and sends it with each call it makes.

    Decision: a plain ASGI class, not ``@app.middleware("http")``: Starlette's ``BaseHTTPMiddleware`` runs each
    request through an extra task and memory streams, work the event loop pays on every request — the loop
    that shares the CPU with the model's threads under load."""

    COUNTED = ("/v1/embeddings", "/embed", "/search", "/health", "/info", "/", "/metrics", "/openapi.json")
    PUBLIC = ("/health", "/")

    def __init__(self, app, service: "Service") -> None:
        self.app, self.service = app, service

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "websocket":  # no route speaks it; refused before any could skip the key check
            return await send({"type": "websocket.close", "code": 1008})
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        service, route, start = self.service, scope["path"], time.perf_counter()
        status, done = [500], [False]
        refusal = self._refusal(scope, route)
        service.in_flight += 1

        async def send_and_note(message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                done[0] = True

        limit, read = service.limits.max_body_bytes, [0]

        async def receive_within_limit():  # a body sent without (or with a false) Content-Length stops at the limit
            message = await receive()
            if message["type"] == "http.request":
                read[0] += len(message.get("body", b""))
                if read[0] > limit:
                    raise BodyTooLarge(LimitError(413, "max_body_bytes", limit, f"request body of more than {limit} "
                                                  f"bytes; the limit is {limit}"))
            return message

        crashed, limits = False, SERVER_LIMITS.set(service.limits)
        try:
            if refusal is not None:
                await _error_response(refusal)(scope, receive, send_and_note)
            else:
                await self.app(scope, receive_within_limit, send_and_note)
        except Exception:
            crashed = True  # answered with a 500 by the error middleware outside this one
            raise
        finally:
            SERVER_LIMITS.reset(limits)
            service.in_flight -= 1
            if service.draining:
                if done[0] or crashed:
                    service.answered_in_drain += 1
                else:
                    service.unanswered += 1  # cancelled when --drain-seconds ran out
            if route in self.COUNTED:
                service.metrics.request(route, status[0], time.perf_counter() - start)

    def _refusal(self, scope, route: str) -> "LimitError | None":
        service, limit = self.service, self.service.limits.max_body_bytes
        if service.api_keys is not None and route not in self.PUBLIC:
            reason = service.api_keys.check(next((v for k, v in scope["headers"] if k == b"authorization"), None))
            if reason is not None:
                service.metrics.auth_refusals.labels(reason).inc()
                return LimitError(401, "api_key", None, AUTH_MESSAGES[reason], {"WWW-Authenticate": "Bearer"})
        length = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        if length is not None and length.isdigit() and int(length) > limit:
            return LimitError(413, "max_body_bytes", limit, f"request body of {int(length)} bytes; the limit is {limit}")
        if route in EMBEDDING_ROUTES and service.queue_full():
            # admission control: with the queue already full, refuse before reading or tokenising the body
            return service.busy(service.batcher.depth, service.limits.max_queue)
        return None


def _error_response(err: LimitError):
    """The one JSON error shape as a response (also an ASGI app, for the middleware)."""
    from fastapi.responses import JSONResponse

    try:
        return JSONResponse(err.body(), status_code=err.status, headers=err.headers)
    except (TypeError, ValueError):  # a message or value JSON cannot hold (no refusal may become a 500)
        body = err.body()
        body["error"].update(message=shown(err.message, 2000)[1:-1], limit=shown(err.limit, 200)[1:-1], value=None)
        return JSONResponse(body, status_code=err.status, headers=err.headers)


class BodyTooLarge(HTTPException):
    """A body past ``max_body_bytes`` while it is read: an HTTP exception, which FastAPI lets through its body
    parsing, carrying the refusal in the one error shape."""

    def __init__(self, refusal: LimitError) -> None:
        super().__init__(413, refusal.message)
        self.refusal = refusal


def create_app(service: Service, load: bool = True):
    """The FastAPI app over ``service`` (``load``: start loading it when the app starts): its routers, the one
    error shape for every refusal (a body that fails its model's validation included) and the admission
    middleware."""
    from contextlib import asynccontextmanager

    from fastapi import FastAPI, Request
    from fastapi.exception_handlers import http_exception_handler
    from fastapi.exceptions import RequestValidationError

    from xlsent import __version__
    from xlsent.serve import routes, schema

    @asynccontextmanager
    async def lifespan(app):
        if load and not service.ready:
            service.load_in_background()
        yield
        service.close()

    app = FastAPI(title="xlsent", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url="/openapi.json",
                  description="Cross-lingual sentence embeddings and search. Every refusal has one JSON shape "
                  "(components.schemas.Error); the limits in the request bodies are this server's.")
    app.state.service = service
    app.add_middleware(AdmissionAndMetrics, service=service)
    for router in (routes.embedding_router(service), routes.search_router(service), routes.server_router(service)):
        app.include_router(router)

    def openapi() -> dict[str, Any]:  # FastAPI's, saying this server's limits (FastAPI's "extending OpenAPI")
        if app.openapi_schema is None:
            app.openapi_schema = schema.with_limits(FastAPI.openapi(app), service.limits)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    @app.exception_handler(LimitError)
    async def limit_error(request: Request, err: LimitError):
        return _error_response(err)

    @app.exception_handler(RequestValidationError)
    async def invalid_body(request: Request, err: RequestValidationError):
        shaping = service.shaping
        return _error_response(schema.refusal(list(err.errors()), service.limits, service.name, shaping.full,
                                              shaping.dimensions))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, err: HTTPException):
        if isinstance(err, BodyTooLarge):  # a body past the limit while it was read
            return _error_response(err.refusal)
        if err.status_code == 400 and request.method == "POST":  # JSON Python cannot hold: nesting, 5,000 digits
            return _error_response(LimitError(422, "json", None, "the body is not valid JSON"))
        return await http_exception_handler(request, err)

    return app
