"""The service's limits and the one error shape every refusal uses."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from xlsent.utils.errors import XlsentError, named

OVERLONG = ("truncate", "reject")


@dataclass
class ServeLimits:
    """What one request and the whole queue may ask for.

    Args:
        max_inputs: texts per request (more → 413).
        max_chars: characters per text, checked before tokenising (more → 413).
        max_tokens: pieces per text, prompt and special tokens included (0 = the model's maximum length).
        overlong: what a text over ``max_tokens`` gets: ``truncate`` (cut to fit; the response says how many
            were cut) or ``reject`` (413). Never silent.
        max_body_bytes: request body size (more → 413).
        max_queue: texts waiting for the model across all requests (more → 429 with ``Retry-After``).
        batch_tokens: token budget of one batch (longest text × texts, i.e. with padding).
        max_wait_ms: under load, how long the first waiting text may wait for others to join its batch.
        model_batch: texts per forward pass inside a batch, cut from the length-sorted batch so that each pass
            pads little (0 = the encoder's own, 64; 8 served 19–23% more requests than 64 at 32 clients).
        max_k: results one search may ask for.
    """

    max_inputs: int = 256
    max_chars: int = 20_000
    max_tokens: int = 0
    overlong: str = "truncate"
    max_body_bytes: int = 4 * 2**20
    max_queue: int = 2048
    batch_tokens: int = 8192
    max_wait_ms: float = 5.0
    model_batch: int = 8
    max_k: int = 100

    def __post_init__(self) -> None:
        if self.overlong not in OVERLONG:
            raise XlsentError(f"{named('overlong', self.overlong)}: choose {' or '.join(OVERLONG)}")
        for name in ("max_inputs", "max_chars", "max_body_bytes", "max_queue", "batch_tokens", "max_k"):
            if getattr(self, name) < 1:
                raise XlsentError(f"{named(name, getattr(self, name))}: must be ≥ 1")
        for name in ("max_tokens", "max_wait_ms", "model_batch"):
            if getattr(self, name) < 0:
                raise XlsentError(f"{named(name, getattr(self, name))}: must be ≥ 0")

    def to_dict(self) -> dict:
        return asdict(self)


class LimitError(Exception):
    """A request refused by a limit: HTTP status, which limit, its value, and a message."""

    def __init__(self, status: int, limit: str, value, message: str, headers: dict | None = None) -> None:
        super().__init__(message)
        self.status, self.limit, self.value, self.message = status, limit, value, message
        self.headers = headers or {}

    def body(self) -> dict:
        kind = {401: "authentication_error", 413: "payload_too_large", 422: "invalid_request_error", 429: "rate_limit_exceeded",
                503: "service_unavailable"}.get(self.status, "error")
        return {"error": {"message": self.message, "type": kind, "limit": self.limit, "value": self.value}}
