"""Running the service: uvicorn, with a drain on SIGTERM that answers every request already accepted.

On SIGTERM (or a first Ctrl-C) :class:`DrainingServer` marks the service as draining — ``/health`` answers 503
from that moment, so a load balancer stops sending — and uvicorn's graceful shutdown follows within its 0.1 s
tick: the listening socket closes (a new connection is refused, and a client retries elsewhere), idle
keep-alive connections close, and every request already accepted is answered, for up to ``drain_seconds``.
Then the batcher stops and :func:`serve` returns the exit status: 0 when every accepted request was
answered, 1 when the drain's time ran out first (the count is printed).

Decision: uvicorn re-raises a caught SIGTERM once it has shut down, so the process would end "killed by
SIGTERM" (status 143) even after a clean drain; :meth:`DrainingServer.capture_signals` installs the same
handlers without the re-raise, so a supervisor sees 0 for a clean drain. A second Ctrl-C still forces the exit.
"""

from __future__ import annotations

import contextlib
import signal
import threading

import uvicorn

from xlsent.serve.app import Service, create_app

HANDLED = (signal.SIGINT, signal.SIGTERM)


class DrainingServer(uvicorn.Server):
    """A uvicorn server whose shutdown first turns the service's ``/health`` to 503."""

    def __init__(self, config: uvicorn.Config, service: Service) -> None:
        super().__init__(config)
        self.service = service
        self.signalled: int | None = None

    def handle_exit(self, sig: int, frame) -> None:
        self.signalled = sig
        self.service.draining = True
        super().handle_exit(sig, frame)

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


def serve(service: Service, host: str, port: int, drain_seconds: float = 25.0, log_level: str = "warning") -> int:
    """Serve until SIGTERM or Ctrl-C, drain, and return the exit status (0: every accepted request answered)."""
    config = uvicorn.Config(create_app(service), host=host, port=port, log_level=log_level, access_log=False,
                            timeout_graceful_shutdown=drain_seconds)
    server = DrainingServer(config, service)
    server.run()
    return 1 if service.unanswered else 0
