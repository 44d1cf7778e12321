"""Dynamic batching: texts of concurrent requests run together, in length-sorted batches under a token budget.

One inference worker (a thread) owns the model. Requests put their texts on a bounded queue and await
them; the worker waits until a text is queued, lets others join for at most ``max_wait_ms`` — only when the
last batch it ran had company, i.e. under load: a lone client's text runs at once (waiting cost one client
30% of its requests per second in ``benchmarks/serving/serve_load.py``; under load, texts queue up while a batch
runs and the wait is small against the batch) — then takes
texts shortest-waiting-first, sorts them by length and cuts them into batches whose padded size
(longest × count) stays under ``batch_tokens``. A batch runs as forward passes of ``model_batch`` texts, and
each pass's results go back to their requests' futures as soon as it ends: the requests answered first are
sent, and their clients' next requests parsed, while the model works on the rest of the batch — the HTTP loop's
work overlaps the model's instead of waiting for the whole batch (under 32 clients, a batch of 32 verses runs
as four passes). A full queue refuses at once (:class:`QueueFull`), so the excess of an overload gets 429
instead of waiting.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable

import numpy as np


class QueueFull(Exception):
    def __init__(self, depth: int, limit: int) -> None:
        super().__init__(f"queue holds {depth} texts (limit {limit})")
        self.depth, self.limit = depth, limit


@dataclass
class _Item:
    text: str
    tokens: int
    prompt: str | None = None  # None: the model's default prompt
    future: Future = field(default_factory=Future)
    arrived: float = field(default_factory=time.perf_counter)


class Batcher:
    """Args:
        encode: ``texts -> (n, dim) array`` run by the worker (the served encoder); called as ``encode(texts,
            prompt)`` for texts queued with a prompt (a batch's texts run in one call per prompt).
        batch_tokens: padded token budget of one batch.
        max_wait_ms: how long the oldest text waits for company.
        max_queue: texts that may wait at once.
        on_batch: called with (texts in the batch, padded tokens, seconds) after each batch (metrics).
        model_batch: texts per forward pass, each pass answered at once (0 = the whole batch in one call).
    """

    def __init__(self, encode: Callable[..., np.ndarray], batch_tokens: int = 8192, max_wait_ms: float = 5.0,
                 max_queue: int = 2048, on_batch: Callable[[int, int, float], None] | None = None,
                 model_batch: int = 0) -> None:
        self.encode = encode
        self.model_batch = int(model_batch)
        self.batch_tokens = int(batch_tokens)
        self.max_wait = max_wait_ms / 1000.0
        self.max_queue = int(max_queue)
        self.on_batch = on_batch
        self._queue: deque[_Item] = deque()
        self._cond = threading.Condition()
        self._stop = False
        self._last_batch = 0
        self._thread = threading.Thread(target=self._run, name="xlsent-inference", daemon=True)
        self._thread.start()

    @property
    def depth(self) -> int:
        return len(self._queue)

    def submit(self, texts: list[str], tokens: list[int], prompt: str | None = None) -> list[Future]:
        """Queue texts (all or none), to be embedded with ``prompt`` (the model's own when None); futures resolve to
        one row each."""
        with self._cond:
            if len(self._queue) + len(texts) > self.max_queue:
                raise QueueFull(len(self._queue), self.max_queue)
            items = [_Item(t, n, prompt) for t, n in zip(texts, tokens)]
            self._queue.extend(items)
            self._cond.notify()
        return [it.future for it in items]

    async def embed(self, texts: list[str], tokens: list[int], prompt: str | None = None) -> np.ndarray:
        """Queue a request's texts and await their rows, waking the event loop once for the request: the last text
        done calls back into the loop, where a future for each text (``asyncio.gather`` over ``wrap_future``) woke it
        once per text — under an overload, the loop time that made waiting requests and their 429s late."""
        futures = self.submit(texts, tokens, prompt)
        if not futures:
            return np.zeros((0, 0), np.float32)
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        left = [len(futures)]
        lock = threading.Lock()  # the callbacks run on the inference thread (or here, for a future already done)

        def settle() -> None:
            if not done.done():
                done.set_result(None)

        def finished(_: Future) -> None:
            with lock:
                left[0] -= 1
                last = left[0] == 0
            if last:
                try:
                    loop.call_soon_threadsafe(settle)
                except RuntimeError:  # the loop closed (the server stopped): nobody waits for these rows
                    pass

        for f in futures:
            f.add_done_callback(finished)
        await done
        return np.stack([f.result() for f in futures])  # a failed text raises the model's error here

    def close(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        self._thread.join(timeout=30)  # the batch in progress finishes (a process must not end inside torch)

    def _take(self) -> list[_Item]:
        """Wait for work, then take what fits the budget (length-sorted, oldest texts first)."""
        with self._cond:
            while not self._queue and not self._stop:
                self._cond.wait()
            if self._stop:
                return []
            deadline = self._queue[0].arrived + (self.max_wait if self._last_batch > 1 else 0.0)
            while not self._stop and time.perf_counter() < deadline and self._padded(list(self._queue)) < self.batch_tokens:
                self._cond.wait(timeout=max(0.0, deadline - time.perf_counter()))
            taken: list[_Item] = []
            while self._queue:
                nxt = self._queue[0]
                if taken and self._padded(taken + [nxt]) > self.batch_tokens:
                    break
                taken.append(self._queue.popleft())
            self._last_batch = len(taken)
            return taken

    @staticmethod
    def _padded(items: list[_Item]) -> int:
        return max((i.tokens for i in items), default=0) * len(items)

    def _run(self) -> None:
        while True:
            items = self._take()
            if not items:
                if self._stop:
                    return
                continue
            items.sort(key=lambda i: (i.prompt is not None, i.prompt or "", i.tokens))  # by prompt, then length
            start = time.perf_counter()
            step = self.model_batch or len(items)
            parts = [items[k : k + step] for k in range(0, len(items), step)]
            parts = [[i for i in part if i.prompt == p] for part in parts for p in dict.fromkeys(i.prompt for i in part)]
            for part in parts:
                try:
                    texts = [i.text for i in part]
                    vecs = self.encode(texts) if part[0].prompt is None else self.encode(texts, part[0].prompt)
                except Exception as exc:  # a model failure fails these requests, never the worker
                    for i in part:
                        i.future.set_exception(exc)
                    continue
                for i, v in zip(part, vecs):
                    i.future.set_result(np.asarray(v, dtype=np.float32))
            if self.on_batch is not None:
                self.on_batch(len(items), self._padded(items), time.perf_counter() - start)
