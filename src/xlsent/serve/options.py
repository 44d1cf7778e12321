"""``xlsent serve``'s options, each declared once (:class:`xlsent.utils.options.Option`): the server's own, with
their ranges (checked before the model loads), and the service's limits, whose defaults are
:class:`xlsent.serve.limits.ServeLimits`'s."""

from __future__ import annotations

from xlsent.serve.index import SCORINGS
from xlsent.serve.limits import OVERLONG, ServeLimits
from xlsent.utils.options import Option, one_of

_LIMITS = ServeLimits()  # the limits' defaults, each declared once (in ServeLimits)

#: the server's own options first: their ranges are checked (:data:`CHECKED`) before the model loads
SERVE: dict[str, Option] = {
    "port": Option(8080, low=1, high=65535, help="port"),
    "max_body_mib": Option(_LIMITS.max_body_bytes / 2**20, low=0.001, help="request body size in MiB (more: 413)"),
    "drain_seconds": Option(25.0, low=0, help="on SIGTERM: /health turns 503, new connections are refused, accepted "
                            "requests are answered for up to this long; exit 0 when all were"),
    "drain_delay": Option(0.0, low=0, help="on SIGTERM, keep accepting this long with /health 503 before the "
                          "listener closes (0: at once; give a load balancer's probe interval)"),
    "host": Option("127.0.0.1", help="address to listen on (127.0.0.1 = this machine only)"),
    "index": Option(None, help="search corpus for /search and the page: a bundled pair set (bible-en-ny:test), a "
                               "pairs file, or a text file (one entry a line)"),
    "scoring": one_of(SCORINGS, "csls", "how /search ranks the --index (csls falls back to cosine on one language). "
                      "An index whose every language has a calibrated mean (xlsent models calibrate) is indexed "
                      "centered, its queries naming their 'language' (measured: "
                      "docs/experiments/centering-and-csls.md)"),
    "name": Option(None, help="the model name clients send (default: the model's folder name)"),
    "dimensions": Option(None, help="the default width served: the first N coordinates, renormalised (1 to the "
                                    "model's width; default: all); a request's 'dimensions' overrides it"),
    "max_inputs": Option(_LIMITS.max_inputs, help="texts per request (more: 413)"),
    "max_chars": Option(_LIMITS.max_chars, help="characters per text (more: 413)"),
    "max_tokens": Option(_LIMITS.max_tokens, help="pieces per text, prompt included (0 = the model's maximum)"),
    "overlong": one_of(OVERLONG, _LIMITS.overlong, "a text over --max-tokens: truncated (reported in the response) or "
                       "rejected (413)"),
    "max_queue": Option(_LIMITS.max_queue, help="texts waiting for the model (more: 429 with Retry-After)"),
    "batch_tokens": Option(_LIMITS.batch_tokens, help="padded token budget of one model batch"),
    "max_wait_ms": Option(_LIMITS.max_wait_ms, help="under load, how long a text waits for others to share its batch "
                                                    "(a lone request runs at once)"),
    "model_batch": Option(_LIMITS.model_batch, help="texts per forward pass, each answered as it ends (0 = the whole "
                                                    "length-sorted batch answered at once, 64 a pass)"),
    "api_key_file": Option(None, help="API keys, one a line (and XLSENT_API_KEYS, comma-separated): every route but "
                                      "/health and the page needs 'Authorization: Bearer KEY' (else 401); keys are "
                                      "never logged"),
    "allow_unauthenticated": Option(False, help="listen beyond this machine (a --host other than loopback) with no "
                                                "API key"),
    "worker_nice": Option(10, low=0, high=19, help="how much lower the model's threads run than the HTTP loop "
                          "(Linux nice steps, 0–19): refusals and health checks never wait behind a forward pass"),
}
CHECKED = ("port", "max_body_mib", "drain_seconds", "drain_delay", "worker_nice")
