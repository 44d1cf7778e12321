#!/usr/bin/env python3
"""``xlsent serve`` under load, against a naive server, on 127.0.0.1 only; bounded in requests and time.

    python benchmarks/serving/serve_load.py [--model e5-small] [--backend torch] [--threads 2] [--clients 1,8,32]
                                    [--seconds 10] [--rounds 3] [--overload-seconds 20]
                                    [--memory-requests 20000]

Both servers run in their own child process with the same model and thread count:

* **xlsent** — ``xlsent.serve`` (dynamic batching, limits);
* **naive** — FastAPI + uvicorn, ``POST /v1/embeddings`` encoding each request's texts at once, one request at a
  time (what a hand-written server does), on the **same backend** as xlsent: ``SentenceTransformer.encode`` for
  ``--backend torch``, the same exported ONNX graph through xlsent's encoder for ``--backend onnx`` — so the ratio
  is the server's, not the backend's (``--naive-backend torch`` keeps the older, mixed comparison).

1. Throughput: ``C`` closed-loop clients (each sends one verse a request, back to back) for ``--seconds``,
   ``--rounds`` times per server, the two servers (both up, the idle one taking no CPU) taking turns
   at each ``--clients``; requests/s and latency p50/p99 for both servers, and the ratio.
2. Overload (xlsent only): open-loop arrivals at twice the saturation rate measured in 1 (the throughput at
   the largest client count) for ``--overload-seconds``, with ``--max-queue`` small enough that the excess is
   refused; counts of 200 / 429 / 5xx / timeouts, p50/p99 of the 200s, p50/p99 of the 429s (target ≤ 50 ms).
3. Memory (xlsent only): resident memory of the server after a warm-up, then after ``--memory-requests``
   requests of random length (1–32 words, 1–4 texts each); growth in percent (target ≤ 5%).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

NAIVE = r'''
import sys, torch
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
import uvicorn
torch.set_num_threads(int(sys.argv[3]))
if sys.argv[4] == "torch":
    from xlsent.models.handle import load_model
    model = load_model(sys.argv[1]).model
else:  # the same ONNX graph xlsent serve runs, through xlsent's encoder, one request at a time
    from xlsent.exporter.load import load_encoder
    encoder = load_encoder(sys.argv[1], backend=sys.argv[4], threads=int(sys.argv[3]))
    class model:
        @staticmethod
        def encode(texts, convert_to_numpy=True):
            return encoder.encode(texts)
app = FastAPI()
@app.get("/health")
def health():
    return {"status": "ok"}
@app.post("/v1/embeddings")
async def emb(request: Request):
    data = await request.json()
    texts = data["input"] if isinstance(data["input"], list) else [data["input"]]
    vecs = model.encode(texts, convert_to_numpy=True)
    return JSONResponse({"object": "list", "data": [{"object": "embedding", "embedding": v.tolist(), "index": i}
                         for i, v in enumerate(vecs)], "model": "naive"})
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="error")
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(kind: str, args, port: int, max_queue: int) -> subprocess.Popen:
    if kind == "naive":
        cmd = [sys.executable, "-c", NAIVE, args.model, str(port), str(args.threads), args.naive_backend or args.backend]
    else:
        cmd = [sys.executable, "-m", "xlsent.cli.main", "serve", args.model, "--port", str(port), "--backend",
               args.backend, "--threads", str(args.threads), "--max-queue", str(max_queue), "--max-wait-ms",
               str(args.max_wait_ms), "--model-batch", str(args.model_batch)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_healthy(port, proc, f"{kind} server")
    return proc


def wait_healthy(port: int, proc: subprocess.Popen, what: str, seconds: float = 900, log: Path | None = None) -> None:
    """Until ``GET /health`` on 127.0.0.1:``port`` answers 200; RuntimeError (the server killed) if ``proc``
    exits or ``seconds`` pass first, with the tail of ``log`` when given."""
    import httpx

    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    state = f"exited with {proc.returncode}" if proc.poll() is not None else f"was not healthy within {seconds:.0f} s"
    proc.kill()
    tail = f"; its log ({log}):\n{log.read_text(errors='replace')[-3000:]}" if log is not None else ""
    raise RuntimeError(f"{what} {state}{tail}")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


async def closed_loop(url: str, texts: list[str], clients: int, seconds: float) -> dict:
    import httpx

    lat, codes = [], {}
    stop = time.perf_counter() + seconds

    async def client(i: int, http: httpx.AsyncClient) -> None:
        j = i
        while time.perf_counter() < stop:
            t = time.perf_counter()
            r = await http.post(url, json={"input": texts[j % len(texts)]})
            lat.append(time.perf_counter() - t)
            codes[r.status_code] = codes.get(r.status_code, 0) + 1
            j += clients

    start = time.perf_counter()
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=clients)) as http:
        await asyncio.gather(*(client(i, http) for i in range(clients)))
    elapsed = time.perf_counter() - start
    return {"clients": clients, "requests": len(lat), "rps": len(lat) / elapsed, "p50_ms": 1000 * pct(lat, 0.5),
            "p99_ms": 1000 * pct(lat, 0.99), "codes": codes, "seconds": elapsed, "latencies": lat}


def merge_rounds(runs: list[dict]) -> dict:
    """Rounds of one server at one client count, pooled: requests/s over the summed time, latency over every request."""
    lat = sorted(x for r in runs for x in r["latencies"])
    return {"clients": runs[0]["clients"], "requests": len(lat),
            "rps": len(lat) / sum(r["seconds"] for r in runs), "round_rps": [r["rps"] for r in runs],
            "p50_ms": 1000 * pct(lat, 0.5), "p99_ms": 1000 * pct(lat, 0.99)}


async def open_loop(url: str, texts: list[str], rate: float, seconds: float) -> dict:
    import httpx

    results: list[tuple[int, float]] = []
    timeouts = 0

    async def one(i: int, http: httpx.AsyncClient) -> None:
        nonlocal timeouts
        t = time.perf_counter()
        try:
            r = await http.post(url, json={"input": texts[i % len(texts)]})
            results.append((r.status_code, time.perf_counter() - t))
        except httpx.TimeoutException:
            timeouts += 1

    tasks = []
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=512)) as http:
        start = time.perf_counter()
        i = 0
        while time.perf_counter() - start < seconds:
            tasks.append(asyncio.create_task(one(i, http)))
            i += 1
            await asyncio.sleep(max(0.0, start + i / rate - time.perf_counter()))
        await asyncio.gather(*tasks)
    ok = [t for c, t in results if c == 200]
    busy = [t for c, t in results if c == 429]
    return {"rate": rate, "sent": len(tasks), "ok": len(ok), "429": len(busy),
            "5xx": sum(1 for c, _ in results if c >= 500), "other": sum(1 for c, _ in results if c not in (200, 429) and c < 500),
            "timeouts": timeouts, "ok_p50_ms": 1000 * pct(ok, 0.5), "ok_p99_ms": 1000 * pct(ok, 0.99),
            "429_p50_ms": 1000 * pct(busy, 0.5), "429_p99_ms": 1000 * pct(busy, 0.99)}


async def memory(url: str, words: list[str], n: int, seed: int, pid: int) -> tuple[dict[int, int], list[float]]:
    """``n`` requests of 1–4 texts of 1–32 random words, 16 at a time: the count of each status code and the
    server's resident MiB after each 1,000 requests."""
    import httpx

    rng = random.Random(seed)
    sem = asyncio.Semaphore(16)
    codes: dict[int, int] = {}
    trace: list[float] = []

    async def one(http):
        async with sem:
            batch = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 32))) for _ in range(rng.randint(1, 4))]
            r = await http.post(url, json={"input": batch})
            codes[r.status_code] = codes.get(r.status_code, 0) + 1

    async with httpx.AsyncClient(timeout=60) as http:
        for start in range(0, n, 1000):
            await asyncio.gather(*(one(http) for _ in range(min(1000, n - start))))
            trace.append(rss_mib(pid))
    return codes, trace


def server_share_within(base: str, status: str, bound: str = "0.05") -> tuple[float, float]:
    """From the server's own latency histogram: (requests with ``status``, share answered within ``bound`` s)."""
    import httpx

    total = within = 0.0
    for line in httpx.get(f"{base}/metrics", timeout=30).text.splitlines():
        if line.startswith("xlsent_request_seconds_bucket") and 'route="/v1/embeddings"' in line \
                and f'status="{status}"' in line:
            if f'le="{bound}"' in line:
                within = float(line.split()[-1])
            if 'le="+Inf"' in line:
                total = float(line.split()[-1])
    return total, (within / total if total else float("nan"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--backend", default="torch")
    ap.add_argument("--naive-backend", default=None, help="the naive server's backend (default: --backend's)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-wait-ms", type=float, default=5.0, help="xlsent serve's --max-wait-ms")
    ap.add_argument("--model-batch", type=int, default=8, help="xlsent serve's --model-batch")
    ap.add_argument("--clients", default="1,8,32")
    ap.add_argument("--seconds", type=float, default=10, help="seconds per round")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per server and client count")
    ap.add_argument("--overload-seconds", type=float, default=20)
    ap.add_argument("--memory-requests", type=int, default=20000, help="0 = skip the memory phase")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from xlsent.data.sets.pairs import load_pairs

    ds = load_pairs("bible-en-ny:test", dedupe=False, sample=2000, seed=args.seed).dataset
    texts = list(ds["src"]) + list(ds["tgt"])
    random.Random(args.seed).shuffle(texts)
    clients = [int(x) for x in args.clients.split(",")]
    print(f"model {args.model}, backend {args.backend}, {args.threads} threads per server, loopback only")

    # Both servers stay up (an idle one takes no CPU) and take turns, --rounds times per client count, the first
    # server alternating: a drift in the shared machine's speed then falls on both, not on whichever ran later.
    procs, urls = {}, {}
    try:
        for kind in ("naive", "xlsent"):
            port = free_port()
            procs[kind] = start(kind, args, port, max_queue=4096)
            urls[kind] = f"http://127.0.0.1:{port}/v1/embeddings"
            asyncio.run(closed_loop(urls[kind], texts, 4, 3))  # warm-up
        rows: dict[str, list[dict]] = {"naive": [], "xlsent": []}
        for c in clients:
            runs: dict[str, list[dict]] = {"naive": [], "xlsent": []}
            for r in range(args.rounds):
                for kind in (("naive", "xlsent") if r % 2 == 0 else ("xlsent", "naive")):
                    runs[kind].append(asyncio.run(closed_loop(urls[kind], texts, c, args.seconds)))
            for kind in rows:
                rows[kind].append(merge_rounds(runs[kind]))
    finally:
        for proc in procs.values():
            proc.terminate()
            proc.wait(30)
    print(f"\nrequests/s: {args.rounds} alternating rounds of {args.seconds:.0f} s per server and client count "
          "(pooled; each round's figure in brackets)")
    print("\n| clients | naive req/s | naive p50 / p99 ms | xlsent req/s | xlsent p50 / p99 ms | ratio | per-round ratios |")
    print("|---|---|---|---|---|---|---|")
    for a, b in zip(rows["naive"], rows["xlsent"]):
        per = ", ".join(f"{y / x:.2f}" for x, y in zip(a["round_rps"], b["round_rps"]))
        print(f"| {a['clients']} | {a['rps']:.1f} [{', '.join(f'{x:.1f}' for x in a['round_rps'])}] | "
              f"{a['p50_ms']:.0f} / {a['p99_ms']:.0f} | {b['rps']:.1f} [{', '.join(f'{x:.1f}' for x in b['round_rps'])}] | "
              f"{b['p50_ms']:.0f} / {b['p99_ms']:.0f} | {b['rps'] / a['rps']:.2f}× | {per} |")

    saturation = max(r["rps"] for r in rows["xlsent"])
    port = free_port()
    proc = start("xlsent", args, port, max_queue=64)
    try:
        url = f"http://127.0.0.1:{port}/v1/embeddings"
        over = asyncio.run(open_loop(url, texts, 2 * saturation, args.overload_seconds))
        print(f"\noverload at 2 × saturation ({2 * saturation:.1f} req/s for {args.overload_seconds:.0f} s, queue 64 texts): "
              f"{over['sent']} sent, {over['ok']} ok, {over['429']} × 429, {over['5xx']} × 5xx, {over['other']} other, "
              f"{over['timeouts']} timeouts; ok p50 {over['ok_p50_ms']:.0f} ms, p99 {over['ok_p99_ms']:.0f} ms; "
              f"429 p50 {over['429_p50_ms']:.1f} ms, p99 {over['429_p99_ms']:.1f} ms (client-side, the load generator "
              "sharing the server's cores)")
        n429, share = server_share_within(f"http://127.0.0.1:{port}", "429")
        print(f"server-side (its own latency histogram): {n429:.0f} × 429, {100 * share:.1f}% answered within 50 ms")
    finally:
        proc.terminate()
        proc.wait(30)

    if not args.memory_requests:
        return
    # memory: a fresh server with room for every request (the overload server's small queue would refuse some)
    port = free_port()
    proc = start("xlsent", args, port, max_queue=4096)
    try:
        url = f"http://127.0.0.1:{port}/v1/embeddings"
        words = " ".join(texts[:500]).split()
        asyncio.run(memory(url, words, 1000, args.seed, proc.pid))  # warm-up: every length the run will see
        before = rss_mib(proc.pid)
        t = time.perf_counter()
        codes, trace = asyncio.run(memory(url, words, args.memory_requests, args.seed + 1, proc.pid))
        after = rss_mib(proc.pid)
        print(f"memory: {before:.0f} MiB after warm-up, {after:.0f} MiB after {args.memory_requests} requests "
              f"({time.perf_counter() - t:.0f} s, status codes {codes}): {100 * (after - before) / before:+.1f}%")
        print("  resident MiB each 1,000 requests: " + " ".join(f"{m:.0f}" for m in trace))
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()
