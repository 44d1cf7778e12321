"""The HTTP service: OpenAI-compatible embeddings, TEI-style ``/embed``, cross-lingual ``/search``, a search page,
health, info and Prometheus metrics — every request checked against :class:`ServeLimits` before it reaches
the model.

The model (and the search corpus) come from the command line only; nothing in a request names a path.
:class:`Service` owns the encoder (torch or ONNX, :meth:`xlsent.encoding.encoder.Encoder.load`), the
:class:`~xlsent.serve.batcher.Batcher` and the index; :func:`create_app` puts routes on it. Loading and a
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
"""

from __future__ import annotations

import base64
import json
import threading
import time
from pathlib import Path

import numpy as np
from fastapi import Request  # at module level: the routes' annotations are resolved from here

from xlsent.serve.auth import ApiKeys
from xlsent.serve.batcher import Batcher, QueueFull
from xlsent.serve.limits import LimitError, ServeLimits
from xlsent.utils.text import FIX as NOT_UNICODE_FIX
from xlsent.utils.text import bad_char, describe, find_unencodable, shown

PAGE = Path(__file__).with_name("page.html")
AUTH_MESSAGES = {  # never the presented key
    "missing": "this server needs an API key: send 'Authorization: Bearer KEY'",
    "malformed": "the Authorization header must be 'Bearer KEY'",
    "wrong": "the API key is not valid on this server",
}
EMBEDDING_ROUTES = ("/v1/embeddings", "/embed", "/search")
#: ``encoding_format`` of ``/v1/embeddings``: OpenAI's two, and infinity's int8 and ubinary (docs/guides/serving.md)
ENCODING_FORMATS = ("float", "base64", "int8", "ubinary")


class Service:
    """The served model, its batcher, its limits and (optionally) its search index."""

    def __init__(self, model: str, backend: str = "auto", threads: int = 0, limits: ServeLimits | None = None,
                 index: str | None = None, name: str | None = None, worker_nice: int = 10,
                 scoring: str = "csls", api_keys: "ApiKeys | None" = None, dimensions: int | None = None) -> None:
        self.model_spec, self.backend_choice, self.threads = model, backend, threads
        self.dimensions = dimensions  # the default width of a response (None: the model's full width)
        self.widths: list[int] = []  # Matryoshka widths recorded in the model folder
        self.worker_nice = int(worker_nice)
        self.limits = limits or ServeLimits()
        self.index_spec = index
        self.scoring = scoring
        self.name = name or Path(str(model)).name
        self.ready = False
        self.error: str | None = None
        self.encoder = None
        self.means = None  # per-language mean vectors from the model folder (xlsent models calibrate)
        self.batcher: Batcher | None = None
        self.index = None
        self.started = time.time()
        self.api_keys = api_keys
        self.draining = False  # set by SIGTERM (serve.server): /health answers 503 from then on
        self.in_flight = 0  # requests accepted and not yet finished
        self.answered_in_drain = 0  # requests answered after draining began
        self.unanswered = 0  # requests a drain cut before their response was sent
        self._metrics()

    # -- start-up -----------------------------------------------------------------------------------------
    def load(self) -> None:
        """Load the model, warm it up, embed the search corpus; then mark ready.

        Run in its own thread (:meth:`load_in_background`), it first lowers that thread's priority by
        ``worker_nice``: every thread the model starts from here — onnxruntime's pool, torch's OpenMP team, the
        batcher's worker — inherits it, while the HTTP event loop keeps the process's priority. On a machine
        whose cores the model keeps busy, the loop then still answers at once: a 429 or a health check does not
        wait for a forward pass to give up the CPU (Linux only; elsewhere a no-op)."""
        from xlsent.exporter.load import load_encoder

        if threading.current_thread() is not threading.main_thread():
            lower_thread_priority(self.worker_nice)
        try:
            from xlsent.encoding.encoder import source_folder
            from xlsent.models.language_means import read_language_means

            self.encoder = load_encoder(self.model_spec, backend=self.backend_choice, threads=self.threads,
                                        spin=False)  # the HTTP loop needs the cycles a spinning pool burns
            self.means = read_language_means(source_folder(self.model_spec))  # the named folder, on any backend
            from xlsent.encoding.width import valid_width
            from xlsent.models.widths import recorded_widths

            self.dimensions = valid_width(self.dimensions, self.encoder.dimension)  # --dimensions, now the model is known
            self.widths = recorded_widths(source_folder(self.model_spec))
            backend = self.encoder.backend
            self.max_tokens = min(self.limits.max_tokens or backend.max_tokens, backend.max_tokens)
            model = self.encoder.replace(batch_size=self.limits.model_batch) if self.limits.model_batch else self.encoder
            self.batcher = Batcher(model.encode, self.limits.batch_tokens, self.limits.max_wait_ms,
                                   self.limits.max_queue, on_batch=None, model_batch=self.limits.model_batch)
            self._warm_up_worker()
            self.batcher.on_batch = self._on_batch  # metrics count requests' texts, not the warm-up's
            if self.index_spec:
                from xlsent.serve.index import SearchIndex

                self.index = SearchIndex.build(self.index_spec, self.encoder.replace(batch_size=64).encode, self.means,
                                               self.scoring)
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

    # -- metrics ------------------------------------------------------------------------------------------
    def _metrics(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        self.m_requests = Counter("xlsent_requests", "requests by route and status", ["route", "status"],
                                  registry=self.registry)
        self.m_latency = Histogram("xlsent_request_seconds", "request latency by route and status", ["route", "status"],
                                   registry=self.registry,
                                   buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30))
        self.m_batch = Histogram("xlsent_batch_size", "texts per model batch", registry=self.registry,
                                 buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512))
        self.m_batch_tokens = Histogram("xlsent_batch_padded_tokens", "padded tokens per model batch",
                                        registry=self.registry, buckets=(64, 256, 1024, 2048, 4096, 8192, 16384))
        self.m_batch_seconds = Histogram("xlsent_batch_seconds", "model time per batch", registry=self.registry,
                                         buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5))
        self.m_texts = Counter("xlsent_texts", "texts embedded", registry=self.registry)
        self.m_truncated = Counter("xlsent_truncated_texts", "texts cut to the token limit", registry=self.registry)
        self.m_auth_refusals = Counter("xlsent_auth_refusals", "requests refused for their API key, by reason "
                                       "(missing | malformed | wrong)", ["reason"], registry=self.registry)
        self.m_in_flight = Gauge("xlsent_requests_in_flight", "requests accepted and not yet answered",
                                 registry=self.registry)
        self.m_in_flight.set_function(lambda: self.in_flight)
        self.m_queue = Gauge("xlsent_queue_depth", "texts waiting for the model", registry=self.registry)
        self.m_queue.set_function(lambda: self.batcher.depth if self.batcher else 0)

    def _on_batch(self, n: int, padded: int, seconds: float) -> None:
        self.m_batch.observe(n)
        self.m_batch_tokens.observe(padded)
        self.m_batch_seconds.observe(seconds)
        self.m_texts.inc(n)

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

    def check_texts(self, value, field: str) -> list[str]:
        if isinstance(value, str):
            texts = [value]
        elif isinstance(value, list) and all(isinstance(x, str) for x in value):
            texts = value
        else:
            raise LimitError(422, "input type", "string or list of strings",
                             f"'{field}' must be a string or a list of strings")
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

    def check_language(self, data: dict) -> str | None:
        """The request's ``language`` (whose stored mean centers its vectors), checked; None when absent."""
        lang = data.get("language")
        if lang is None:
            return None
        if not isinstance(lang, str) or not lang.strip():
            raise LimitError(422, "language", None, "'language' must be a language code such as 'nya'")
        if bad_char(lang) is not None:
            raise not_unicode("language", None, describe("", bad_char(lang), lang[bad_char(lang)]))
        if self.means is None:
            raise LimitError(422, "language", None, "this model carries no language means, so nothing can be "
                             "centered; calibrate it first (xlsent models calibrate MODEL --lang CODE=FILE)")
        if not self.means.has(lang):
            raise LimitError(422, "language", self.means.languages, f"no mean vector for {shown(lang)}; calibrated: "
                             f"{', '.join(self.means.languages)}")
        return lang

    def centered(self, vecs: np.ndarray, lang: str | None) -> np.ndarray:
        """``vecs`` centered with ``lang``'s stored mean (unit rows), or as they are without a language."""
        return vecs if lang is None else self.means.apply(vecs, lang)

    def check_dimensions(self, data: dict) -> int | None:
        """The request's ``dimensions`` (else the server's ``--dimensions``; ``None``: the full width), checked: a
        whole number from 1 to the model's width, or 422 naming the field."""
        value = data.get("dimensions")
        if value is None:
            return self.dimensions
        full = self.encoder.dimension
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= full:
            raise LimitError(422, "dimensions", full, f"'dimensions' must be a whole number from 1 to {full} (this "
                             f"model's width), not {shown(value)}; leave it out for "
                             f"{self.dimensions or full}")
        return value

    def widths_info(self) -> dict:
        full = self.encoder.dimension if self.encoder else None
        return {"full": full, "default": self.dimensions or full, "matryoshka": self.widths,
                "note": f"'dimensions' takes any width from 1 to {full}: the first N coordinates of the full vector, "
                        "renormalised" + (" (the model was trained to be cut to the matryoshka widths)"
                                          if self.widths else "")}

    def shaped(self, vecs: np.ndarray, lang: str | None, dimensions: int | None) -> np.ndarray:
        """A request's vectors: centered with its language's stored mean (full width), then cut to its width."""
        from xlsent.encoding.width import cut

        return cut(self.centered(vecs, lang), dimensions)

    def centering_info(self) -> dict:
        if self.means is None:
            return {"languages": [], "note": "no language means in the model folder: vectors are never centered "
                    "(xlsent models calibrate MODEL --lang CODE=FILE adds them)"}
        out = {"languages": self.means.languages, "sources": self.means.summary(),
               "note": "a request's 'language' centers its vectors with that language's mean"}
        if self.index is not None:
            missing = sorted({e.lang for e in self.index.entries if not self.means.has(e.lang)})
            out["index_centered"] = self.index.centered
            out["index_languages_without_a_mean"] = missing  # calibrate with the index's own codes (e.g. eng, nya)
        return out

    async def embed(self, texts: list[str], truncate: bool | None = None) -> tuple[np.ndarray, int, int]:
        """Vectors, total tokens (after any cut) and how many texts were cut."""
        self.require_ready()
        backend = self.encoder.backend
        counts = backend.token_counts(texts)
        policy = self.limits.overlong if truncate is None else ("truncate" if truncate else "reject")
        cut = 0
        for i, n in enumerate(counts):
            if n > self.max_tokens:
                if policy == "reject":
                    raise LimitError(413, "max_tokens", self.max_tokens,
                                     f"input {i} is {n} tokens; the limit is {self.max_tokens} (the server's policy is "
                                     "reject; send truncate=true to /embed, or shorten it)")
                texts[i] = backend.truncate(texts[i], self.max_tokens)
                counts[i] = min(n, self.max_tokens)
                cut += 1
        try:
            vecs = await self.batcher.embed(texts, counts)
        except QueueFull as full:
            raise self.busy(full.depth, full.limit) from None
        if cut:
            self.m_truncated.inc(cut)
        return vecs, int(sum(counts)), cut


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


def not_unicode(field: str, index: int | None, where: str) -> LimitError:
    """422 for text that is not Unicode, naming the field and (in a list) the input's index."""
    at = f"input {index} of '{field}'" if index is not None else f"'{field}'"
    return LimitError(422, "unicode", {"field": field, "index": index},
                      f"{at} is not Unicode text ({where}) — {NOT_UNICODE_FIX}")


def check_unicode(data: dict) -> None:
    """Every string of a request's JSON (keys and fields the route ignores included) is Unicode, or 422 naming the
    first that is not: JSON's escapes can spell a lone surrogate, which no tokenizer or response can encode."""
    found = find_unencodable(data)
    if found is None:
        return
    where, i, char = found
    field, _, rest = where.partition("[")
    field = field.split(".")[0]
    index = int(rest.split("]")[0]) if rest and rest.split("]")[0].isdigit() else None
    raise not_unicode(field, index, describe("", i, char))


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
    keep the count of requests in flight, and of those a drain left unanswered.

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

        crashed = False
        try:
            if refusal is not None:
                await _error_response(refusal)(scope, receive, send_and_note)
            else:
                await self.app(scope, receive, send_and_note)
        except Exception:
            crashed = True  # answered with a 500 by the error middleware outside this one
            raise
        finally:
            service.in_flight -= 1
            if service.draining:
                if done[0] or crashed:
                    service.answered_in_drain += 1
                else:
                    service.unanswered += 1  # cancelled when --drain-seconds ran out
            if route in self.COUNTED:
                service.m_requests.labels(route, str(status[0])).inc()
                service.m_latency.labels(route, str(status[0])).observe(time.perf_counter() - start)

    def _refusal(self, scope, route: str) -> "LimitError | None":
        service, limit = self.service, self.service.limits.max_body_bytes
        if service.api_keys is not None and route not in self.PUBLIC:
            reason = service.api_keys.check(next((v for k, v in scope["headers"] if k == b"authorization"), None))
            if reason is not None:
                service.m_auth_refusals.labels(reason).inc()
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


def _cut_header(cut: int) -> dict:
    return {"X-Truncated-Inputs": str(cut)}


def create_app(service: Service, load: bool = True):
    """The FastAPI app over ``service`` (``load``: start loading it when the app starts)."""
    from contextlib import asynccontextmanager

    from fastapi import FastAPI
    from fastapi.responses import HTMLResponse, JSONResponse, Response
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    @asynccontextmanager
    async def lifespan(app):
        if load and not service.ready:
            service.load_in_background()
        yield
        service.close()

    from xlsent import __version__
    from xlsent.serve import schema

    app = FastAPI(title="xlsent", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url="/openapi.json",
                  description="Cross-lingual sentence embeddings and search. Every refusal has one JSON shape "
                  "(components.schemas.Error); the limits in the request bodies are this server's.")
    app.state.service = service
    components = schema.components(service.limits)

    def openapi() -> dict:
        """FastAPI's description of the routes, with the bodies' schemas (the routes read their JSON by hand)."""
        if app.openapi_schema is None:
            from fastapi.openapi.utils import get_openapi

            spec = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            spec.setdefault("components", {}).setdefault("schemas", {}).update(components)
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi

    app.add_middleware(AdmissionAndMetrics, service=service)

    async def _json(request: Request) -> dict:
        body = await request.body()
        if len(body) > service.limits.max_body_bytes:  # no (or a false) Content-Length
            raise LimitError(413, "max_body_bytes", service.limits.max_body_bytes,
                             f"request body of {len(body)} bytes; the limit is {service.limits.max_body_bytes}")
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deeply, a number of 5,000 digits
            raise LimitError(422, "json", None, "the body is not valid JSON") from None
        if not isinstance(data, dict):
            raise LimitError(422, "json", None, "the body must be a JSON object")
        check_unicode(data)
        return data

    async def _embedding_request(request: Request, field: str) -> dict:
        """The JSON body of an embedding route, once the model is ready and ``field`` is present."""
        data = await _json(request)
        service.require_ready()
        if field not in data:
            raise LimitError(422, field, None, f"missing '{field}'")
        return data

    @app.exception_handler(LimitError)
    async def limit_error(request: Request, err: LimitError):
        return _error_response(err)

    @app.post("/v1/embeddings", summary="OpenAI-compatible embeddings", openapi_extra=schema.request_body(
        "EmbeddingsRequest"), responses=schema.responses("EmbeddingsResponse", "one embedding per input, in order; "
                                                         "X-Truncated-Inputs: texts cut to the token limit"))
    async def openai_embeddings(request: Request):
        data = await _embedding_request(request, "input")
        model = data.get("model")
        if model is not None and model != service.name:
            raise LimitError(422, "model", service.name, f"model {shown(model)} is not served here; this server "
                             f"serves {shown(service.name)}")
        fmt = data.get("encoding_format", "float")
        if not isinstance(fmt, str) or fmt not in ENCODING_FORMATS:
            raise LimitError(422, "encoding_format", " | ".join(ENCODING_FORMATS),
                             f"encoding_format {shown(fmt)} is not supported: use {', '.join(ENCODING_FORMATS)}")
        width = service.check_dimensions(data)
        texts = service.check_texts(data["input"], "input")
        lang = service.check_language(data)
        vecs, tokens, cut = await service.embed(list(texts))
        items = [{"object": "embedding", "embedding": emb, "index": i, **extra}
                 for i, (emb, extra) in enumerate(encoded(service.shaped(vecs, lang, width), fmt))]
        return JSONResponse({"object": "list", "data": items, "model": service.name,
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens, "truncated_inputs": cut}},
                            headers=_cut_header(cut))

    @app.post("/embed", summary="TEI-style embeddings", openapi_extra=schema.request_body("EmbedRequest"),
              responses=schema.responses("Vectors", "one vector per input, in order; X-Truncated-Inputs: texts cut "
                                         "to the token limit"))
    async def tei_embed(request: Request):
        data = await _embedding_request(request, "inputs")
        texts = service.check_texts(data["inputs"], "inputs")
        normalize, truncate = data.get("normalize", True), data.get("truncate")
        if not isinstance(normalize, bool) or (truncate is not None and not isinstance(truncate, bool)):
            raise LimitError(422, "json", None, "'normalize' and 'truncate' must be true or false")
        lang = service.check_language(data)
        width = service.check_dimensions(data)
        vecs, _, cut = await service.embed(list(texts), truncate)
        vecs = service.shaped(vecs, lang, width)
        if normalize:
            vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        return JSONResponse(np.asarray(vecs, dtype=np.float32).tolist(), headers=_cut_header(cut))

    @app.post("/search", summary="nearest entries of the --index corpus",
              openapi_extra=schema.request_body("SearchRequest"),
              responses=schema.responses("SearchResponse", "the k best entries, best first"))
    async def search(request: Request):
        data = await _json(request)
        service.require_ready()
        if service.index is None:
            raise LimitError(422, "index", None, "this server has no search corpus (start it with --index)")
        query = data.get("query")
        if not isinstance(query, str):
            raise LimitError(422, "input type", "string", "'query' must be a string")
        k = data.get("k", 10)
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= service.limits.max_k:
            raise LimitError(422, "k", service.limits.max_k, f"'k' must be a whole number from 1 to {service.limits.max_k}")
        texts = service.check_texts(query, "query")
        lang = service.check_language(data)
        if service.index.centered and lang is None:
            raise LimitError(422, "language", service.means.languages, "this index is centered per language: name "
                             f"the query's 'language' (one of {', '.join(service.means.languages)})")
        vecs, _, cut = await service.embed(list(texts))
        if service.index.centered:  # a query is centered only against a centered index
            vecs = service.centered(vecs, lang)
        return JSONResponse({"query": query, "index": service.index.name, "query_centered": service.index.centered,
                             "index_centered": service.index.centered, "scoring": service.index.scoring, "matches": service.index.search(vecs[0], k, lang)},
                            headers=_cut_header(cut))

    @app.get("/", response_class=HTMLResponse, summary="the search page",
             responses={200: {"description": "the page", "content": {"text/html": {"schema": {"type": "string"}}}}})
    async def page():
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    @app.get("/health", summary="200 once loaded and warm; 503 while loading, after a failed load or while draining",
             responses={200: schema.json_body("Health", "ready"),
                        503: schema.json_body("Health", "loading, failed (with the error) or draining")})
    async def health():
        if service.draining:  # a load balancer stops sending here before the listener closes
            return JSONResponse({"status": "draining", "in_flight": service.in_flight}, status_code=503)
        if service.ready:
            return {"status": "ok"}
        return JSONResponse({"status": "failed" if service.error else "loading", "error": service.error},
                            status_code=503, headers={"Retry-After": "5"})

    @app.get("/info", summary="the model, its limits, the index, which languages can be centered",
             responses={200: schema.json_body("Info", "the server's model and settings"),
                        401: schema.json_body("Error", schema.ERRORS[401])})
    async def info():
        enc = service.encoder
        return {"model": service.name, "source": str(service.model_spec), "ready": service.ready,
                "dimension": enc.dimension if enc else None,
                "dimensions": service.widths_info() if enc else None, "encoding_formats": list(ENCODING_FORMATS),
                "backend": type(enc.backend).__name__ if enc else service.backend_choice,
                "api_keys": service.api_keys is not None, "draining": service.draining,
                "threads": service.threads, "worker_nice": service.worker_nice, "max_tokens": getattr(service, "max_tokens", None),
                "limits": service.limits.to_dict(),
                "index": ({"name": service.index.name, "entries": len(service.index), "centered": service.index.centered,
                           "scoring": service.index.scoring}
                          if service.index else None),
                "centering": service.centering_info() if service.ready else None}

    @app.get("/metrics", summary="Prometheus metrics",
             responses={200: {"description": "Prometheus text format",
                              "content": {"text/plain": {"schema": {"type": "string"}}}},
                        401: schema.json_body("Error", schema.ERRORS[401])})
    async def metrics():
        return Response(generate_latest(service.registry), media_type=CONTENT_TYPE_LATEST)

    return app
