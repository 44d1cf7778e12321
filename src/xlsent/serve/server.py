"""Running the service: uvicorn, with a drain on SIGTERM that answers every request already accepted.

On SIGTERM (or a first Ctrl-C) :class:`DrainingServer` marks the service as draining — ``/health`` answers 503
from that moment — and uvicorn's graceful shutdown follows: the listening socket closes (a new connection is
refused, and a client retries elsewhere), idle keep-alive connections close, and every request already accepted
is answered, for up to ``drain_seconds``. Then the batcher stops and :func:`serve` returns the exit status: 0 when
every accepted request was answered, 1 when the drain's time ran out first (the count is printed).

By default (``drain_delay`` 0) the listener closes within uvicorn's 0.1 s tick, so a load balancer that probes
``/health`` on new connections sees the refusal rather than the 503. With ``drain_delay`` N (``--drain-delay``)
the server keeps accepting and answering for N seconds after SIGTERM while ``/health`` answers 503 — the time a
load balancer needs to notice and stop sending — and only then closes the listener and drains. A second signal
ends the delay at once.

Decision: uvicorn re-raises a caught SIGTERM once it has shut down, so the process would end "killed by
SIGTERM" (status 143) even after a clean drain; :meth:`DrainingServer.capture_signals` installs the same
handlers without the re-raise, so a supervisor sees 0 for a clean drain. A second Ctrl-C still forces the exit.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time

import uvicorn

from xlsent.serve.app import Service, create_app

HANDLED = (signal.SIGINT, signal.SIGTERM)


class DrainingServer(uvicorn.Server):
    """A uvicorn server whose shutdown first turns the service's ``/health`` to 503."""

    def __init__(self, config: uvicorn.Config, service: Service, drain_delay: float = 0.0) -> None:
        super().__init__(config)
        self.service = service
        self.drain_delay = float(drain_delay)
        self.drain_started: float | None = None

    def handle_exit(self, sig: int, frame) -> None:
        if self.drain_started is None:
            self.service.draining = True
            self.drain_started = time.monotonic()
            if self.drain_delay > 0:
                return  # on_tick ends the serving loop once the delay has passed
        super().handle_exit(sig, frame)

    async def on_tick(self, counter: int) -> bool:
        if self.drain_started is not None and time.monotonic() - self.drain_started >= self.drain_delay:
            self.should_exit = True
        return await super().on_tick(counter)

    @contextlib.contextmanager
    def capture_signals(self):
        if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
            yield
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in HANDLED}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def serve(service: Service, host: str, port: int, drain_seconds: float = 25.0, drain_delay: float = 0.0,
          log_level: str = "warning") -> int:
    """Serve until SIGTERM or Ctrl-C, drain, and return the exit status (0: every accepted request answered)."""
    config = uvicorn.Config(create_app(service), host=host, port=port, log_level=log_level, access_log=False,
                            timeout_graceful_shutdown=drain_seconds)  # type: ignore[arg-type]  # seconds, any
    server = DrainingServer(config, service, drain_delay)
    server.run()
    return 1 if service.unanswered else 0
