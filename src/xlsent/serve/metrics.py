"""The service's Prometheus metrics: requests by route and status, latency, batches, texts, truncation, refused
keys, requests in flight and the queue's depth."""

from __future__ import annotations

from typing import Callable


class ServiceMetrics:
    """One registry a service (``/metrics`` renders it); ``in_flight`` and ``queue_depth`` are read when scraped."""

    def __init__(self, in_flight: Callable[[], float], queue_depth: Callable[[], float]) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        self.requests = Counter("xlsent_requests", "requests by route and status", ["route", "status"],
                                registry=self.registry)
        self.latency = Histogram("xlsent_request_seconds", "request latency by route and status", ["route", "status"],
                                 registry=self.registry,
                                 buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30))
        self.batch = Histogram("xlsent_batch_size", "texts per model batch", registry=self.registry,
                               buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512))
        self.batch_tokens = Histogram("xlsent_batch_padded_tokens", "padded tokens per model batch",
                                      registry=self.registry, buckets=(64, 256, 1024, 2048, 4096, 8192, 16384))
        self.batch_seconds = Histogram("xlsent_batch_seconds", "model time per batch", registry=self.registry,
                                       buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5))
        self.texts = Counter("xlsent_texts", "texts embedded", registry=self.registry)
        self.truncated = Counter("xlsent_truncated_texts", "texts cut to the token limit", registry=self.registry)
        self.auth_refusals = Counter("xlsent_auth_refusals", "requests refused for their API key, by reason "
                                     "(missing | malformed | wrong)", ["reason"], registry=self.registry)
        Gauge("xlsent_requests_in_flight", "requests accepted and not yet answered",
              registry=self.registry).set_function(in_flight)
        Gauge("xlsent_queue_depth", "texts waiting for the model", registry=self.registry).set_function(queue_depth)

    def on_batch(self, n: int, padded: int, seconds: float) -> None:
        """A model batch ran (the batcher calls it): its texts, padded tokens and time."""
        self.batch.observe(n)
        self.batch_tokens.observe(padded)
        self.batch_seconds.observe(seconds)
        self.texts.inc(n)

    def request(self, route: str, status: int, seconds: float) -> None:
        self.requests.labels(route, str(status)).inc()
        self.latency.labels(route, str(status)).observe(seconds)

    def render(self) -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(self.registry)
