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
from xlsent.serve.options import CHECKED, SERVE
from xlsent.utils.errors import XlsentError
from xlsent.utils.options import check

@takes(*RUNTIME)
def serve_command(
    model: str = typer.Argument(DEFAULT_MODEL, help="registered name, model folder or exported ONNX folder"),
    host: str = declared(SERVE["host"]),
    port: int = declared(SERVE["port"]),
    run: dict = None,
    index: str = declared(SERVE["index"], "--index"),
    scoring: Literal[SCORINGS] = declared(SERVE["scoring"]),
    name: str = declared(SERVE["name"]),
    dimensions: int = declared(SERVE["dimensions"], "--dimensions"),
    max_inputs: int = declared(SERVE["max_inputs"]),
    max_chars: int = declared(SERVE["max_chars"]),
    max_tokens: int = declared(SERVE["max_tokens"]),
    overlong: Literal[OVERLONG] = declared(SERVE["overlong"]),
    max_body_mib: float = declared(SERVE["max_body_mib"]),
    max_queue: int = declared(SERVE["max_queue"]),
    batch_tokens: int = declared(SERVE["batch_tokens"]),
    max_wait_ms: float = declared(SERVE["max_wait_ms"]),
    model_batch: int = declared(SERVE["model_batch"]),
    api_key_file: str = declared(SERVE["api_key_file"], "--api-key-file"),
    allow_unauthenticated: bool = declared(SERVE["allow_unauthenticated"], "--allow-unauthenticated"),
    drain_seconds: float = declared(SERVE["drain_seconds"]),
    drain_delay: float = declared(SERVE["drain_delay"]),
    worker_nice: int = declared(SERVE["worker_nice"]),
) -> None:
    """Serve embeddings (POST /v1/embeddings, /embed), search (POST /search, page at /), /health, /info, /metrics."""
    from xlsent.serve.auth import ApiKeys, check_exposure

    check(SERVE, locals(), CHECKED)
    keys = ApiKeys.load(api_key_file)
    check_exposure(host, keys, allow_unauthenticated)
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
