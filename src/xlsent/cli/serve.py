"""``xlsent serve``: the model behind OpenAI-compatible and TEI-style embedding routes and a search page."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from xlsent.cli.common import check_dimensions, console
from xlsent.cli.options import RUNTIME, declared, takes
from xlsent.models.registry import DEFAULT_MODEL
from xlsent.serve.index import SCORINGS
from xlsent.serve.limits import OVERLONG, ServeLimits
from xlsent.utils.errors import XlsentError
from xlsent.utils.options import Option, check

_LIMITS = ServeLimits()  # the limits' defaults, each declared once (in ServeLimits)
#: the server's own options with a range, each declared once (checked before the model loads)
SERVE = {
    "port": Option(8080, low=1, high=65535, help="port"),
    "max_body_mib": Option(_LIMITS.max_body_bytes / 2**20, low=0.001, help="request body size in MiB (more: 413)"),
    "drain_seconds": Option(25.0, low=0, help="on SIGTERM: /health turns 503, new connections are refused, accepted "
                            "requests are answered for up to this long; exit 0 when all were"),
    "drain_delay": Option(0.0, low=0, help="on SIGTERM, keep accepting this long with /health 503 before the "
                          "listener closes (0: at once; give a load balancer's probe interval)"),
}


@takes(*RUNTIME)
def serve_command(
    model: str = typer.Argument(DEFAULT_MODEL, help="registered name, model folder or exported ONNX folder"),
    host: str = typer.Option("127.0.0.1", help="address to listen on (127.0.0.1 = this machine only)"),
    port: int = declared(SERVE["port"]),
    run: dict = None,
    index: str = typer.Option(None, "--index", help="search corpus for /search and the page: a bundled pair set "
                              "(bible-en-ny:test), a pairs file, or a text file (one entry a line)"),
    scoring: Literal[SCORINGS] = typer.Option("csls", help="how /search ranks the --index (csls falls back to cosine on "
                                              "one language). An index whose every language has a calibrated mean "
                                              "(xlsent models calibrate) is indexed centered, its queries naming their "
                                              "'language' (measured: docs/experiments/centering-and-csls.md)"),
    name: str = typer.Option(None, help="the model name clients send (default: the model's folder name)"),
    dimensions: int = typer.Option(None, "--dimensions", help="the default width served: the first N coordinates, "
                                   "renormalised (1 to the model's width; default: all); a request's 'dimensions' "
                                   "overrides it"),
    max_inputs: int = typer.Option(_LIMITS.max_inputs, help="texts per request (more: 413)"),
    max_chars: int = typer.Option(_LIMITS.max_chars, help="characters per text (more: 413)"),
    max_tokens: int = typer.Option(_LIMITS.max_tokens, help="pieces per text, prompt included (0 = the model's maximum)"),
    overlong: Literal[OVERLONG] = typer.Option(_LIMITS.overlong, help="a text over --max-tokens: truncated (reported "
                                               "in the response) or rejected (413)"),
    max_body_mib: float = declared(SERVE["max_body_mib"]),
    max_queue: int = typer.Option(_LIMITS.max_queue, help="texts waiting for the model (more: 429 with Retry-After)"),
    batch_tokens: int = typer.Option(_LIMITS.batch_tokens, help="padded token budget of one model batch"),
    max_wait_ms: float = typer.Option(_LIMITS.max_wait_ms, help="under load, how long a text waits for others to "
                                      "share its batch (a lone request runs at once)"),
    model_batch: int = typer.Option(_LIMITS.model_batch, help="texts per forward pass, each answered as it ends (0 = "
                                    "the whole length-sorted batch answered at once, 64 a pass)"),
    api_key_file: str = typer.Option(None, "--api-key-file", help="API keys, one a line (and XLSENT_API_KEYS, comma-"
                                     "separated): every route but /health and the page needs 'Authorization: Bearer "
                                     "KEY' (else 401); keys are never logged"),
    allow_unauthenticated: bool = typer.Option(False, "--allow-unauthenticated", help="listen beyond this machine "
                                               "(a --host other than loopback) with no API key"),
    drain_seconds: float = declared(SERVE["drain_seconds"]),
    drain_delay: float = declared(SERVE["drain_delay"]),
    worker_nice: int = typer.Option(10, help="how much lower the model's threads run than the HTTP loop (Linux "
                                    "nice steps, 0–19): refusals and health checks never wait behind a forward pass"),
) -> None:
    """Serve embeddings (POST /v1/embeddings, /embed), search (POST /search, page at /), /health, /info, /metrics."""
    from xlsent.serve.auth import ApiKeys, check_exposure

    check(SERVE, locals())
    keys = ApiKeys.load(api_key_file)
    check_exposure(host, keys, allow_unauthenticated)
    if not 0 <= worker_nice <= 19:
        raise XlsentError(f"--worker-nice {worker_nice}: must be from 0 (same priority) to 19")
    limits = ServeLimits(max_inputs=max_inputs, max_chars=max_chars, max_tokens=max_tokens, overlong=overlong,
                         max_body_bytes=int(max_body_mib * 2**20), max_queue=max_queue, batch_tokens=batch_tokens,
                         max_wait_ms=max_wait_ms, model_batch=model_batch)
    from xlsent.data.sets.bundled import is_bundled

    if index and not is_bundled(index) and not Path(index).is_file():
        raise XlsentError(f"--index {index}: neither a bundled set (xlsent data list) nor a file")
    dimensions = check_dimensions(model, dimensions)  # the model's width read from its folder, before it loads
    from xlsent.serve.app import Service
    from xlsent.serve.server import serve

    service = Service(model, **run, limits=limits, index=index, name=name, worker_nice=worker_nice, scoring=scoring,
                      api_keys=keys, dimensions=dimensions)  # run: --backend, --threads, --device, --dtype
    auth = f"{len(keys)} API key(s)" if keys else "no API key"
    console.print(f"serving {model} on http://{host}:{port} with {auth} (GET /health turns 200 once the model is "
                  "warm)", soft_wrap=True)
    status = serve(service, host, port, drain_seconds, drain_delay)
    if service.draining:
        console.print(f"drained: {service.answered_in_drain} request(s) answered during the drain, "
                      f"{service.unanswered} accepted request(s) left unanswered"
                      + (f" (--drain-seconds {drain_seconds:g} ran out)" if service.unanswered else ""), soft_wrap=True)
    if status:
        raise typer.Exit(status)
