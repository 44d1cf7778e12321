#!/usr/bin/env python3
"""``xlsent serve`` held at its measured saturation for a long time, with valid and invalid requests mixed (issue 48).

    python benchmarks/serving/serve_soak.py [--model e5-small] [--backend torch] [--threads 2] [--minutes 30]
                                    [--clients 8,32] [--measure-seconds 20] [--warmup-seconds 60]
                                    [--invalid-share 0.2] [--window-minutes 5]

One server in its own child process, on 127.0.0.1 only, with a search index (``--index``, default
``bible-en-ny:test``) so that ``/search`` is in the mix:

1. Saturation: closed-loop clients (each sends one request after another) for ``--measure-seconds`` at each
   ``--clients`` count, valid requests only; the count with the most requests/s is the saturating one.
2. Warm-up: ``--warmup-seconds`` of the soak's own mix; then the server's resident memory is taken (the base).
3. Soak: that many clients, back to back, for ``--minutes`` — the service held at saturation. Each request is
   valid (``/v1/embeddings``, ``/embed``, ``/search``: 1–4 verses) or, with probability ``--invalid-share``,
   one of a fixed list of bad bodies (a lone surrogate in a text, the model name, a key; wrong types; huge and
   negative numbers; deep nesting; not JSON; over the input and character limits; a missing field).

Reported, with the targets: the count of 5xx (target 0) and of answers of the wrong kind (a valid request not 200
or 429, an invalid one not 4xx); resident memory at the end against the base (target within 5%); p99 latency of
the valid requests' 200s in the first and the last ``--window-minutes`` of the soak (target within 20%).

For a smoke run: ``--minutes 1 --warmup-seconds 10 --measure-seconds 5 --window-minutes 0.25``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_load import free_port, pct, rss_mib, wait_healthy  # noqa: E402

LIMITS = {"max_inputs": 16, "max_chars": 2000}


def bad_bodies() -> list[tuple[str, bytes]]:
    """(route, raw body) of requests every one of which must be refused with a 4xx."""
    def j(obj) -> bytes:
        return json.dumps(obj).encode("ascii")  # a lone surrogate as the JSON escape \\ud800

    return [
        ("/v1/embeddings", j({"input": ["fine", "cut \ud83d emoji"]})),
        ("/v1/embeddings", j({"model": "\ud800", "input": ["x"]})),
        ("/v1/embeddings", j({"input": "x", "encoding_format": "\udc00"})),
        ("/v1/embeddings", j({"input": "x", "\ud800key": 1})),
        ("/embed", j({"inputs": ["a", "\udfff"]})),
        ("/search", j({"query": "\ud800", "k": 3})),
        ("/v1/embeddings", j({"input": [1, 2, 3]})),
        ("/v1/embeddings", j({"input": {"text": "god"}})),
        ("/v1/embeddings", j({"input": []})),
        ("/v1/embeddings", j({"input": ["god", "  "]})),
        ("/v1/embeddings", j({"input": ["x"] * (LIMITS["max_inputs"] + 1)})),
        ("/v1/embeddings", j({"input": "x" * (LIMITS["max_chars"] + 1)})),
        ("/v1/embeddings", j({"input": "x", "dimensions": -(10 ** 30)})),
        ("/v1/embeddings", j({"input": "x", "model": "gpt-4" * 1000})),
        ("/v1/embeddings", b'{"input": ' + b"9" * 5000 + b"}"),
        ("/v1/embeddings", b"[" * 50_000),
        ("/v1/embeddings", b"{not json"),
        ("/v1/embeddings", b"\xff\xfe\x00"),
        ("/v1/embeddings", j({"text": "no input field"})),
        ("/embed", j({"inputs": "x", "normalize": "yes"})),
        ("/search", j({"query": "god", "k": 10 ** 12})),
        ("/search", j({"query": "god", "k": -1})),
        ("/search", j({"query": ["not", "a", "string"]})),
    ]


def good_body(rng: random.Random, texts: list[str], search: bool = True) -> tuple[str, bytes]:
    route = rng.choice(["/v1/embeddings", "/v1/embeddings", "/embed", "/search" if search else "/embed"])
    batch = [rng.choice(texts) for _ in range(rng.randint(1, 4))]
    body = {"/v1/embeddings": {"input": batch}, "/embed": {"inputs": batch},
            "/search": {"query": batch[0], "k": 5}}[route]
    return route, json.dumps(body).encode("utf-8")


async def drive(base: str, texts: list[str], clients: int, seconds: float, invalid_share: float, seed: int,
                pid: int | None = None, rss_every: float = 10.0, search: bool = True) -> dict:
    """``clients`` closed-loop clients for ``seconds``: every request as (seconds since start, valid?, status,
    latency); with ``pid``, the server's resident MiB every ``rss_every`` seconds."""
    import httpx

    bad = [b for b in bad_bodies() if search or b[0] != "/search"]
    records: list[tuple[float, bool, int, float]] = []
    rss: list[tuple[float, float]] = []
    start = time.perf_counter()
    stop = start + seconds

    async def client(i: int, http: httpx.AsyncClient) -> None:
        rng = random.Random(seed * 1000 + i)
        while time.perf_counter() < stop:
            valid = rng.random() >= invalid_share
            route, body = good_body(rng, texts, search) if valid else rng.choice(bad)
            t = time.perf_counter()
            try:
                r = await http.post(base + route, content=body, headers={"Content-Type": "application/json"})
                status = r.status_code
            except httpx.HTTPError:
                status = -1  # no answer (a timeout, a dropped connection)
            records.append((t - start, valid, status, time.perf_counter() - t))

    async def sample() -> None:
        while pid is not None and time.perf_counter() < stop:
            rss.append((time.perf_counter() - start, rss_mib(pid)))
            await asyncio.sleep(rss_every)

    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=clients)) as http:
        await asyncio.gather(sample(), *(client(i, http) for i in range(clients)))
    return {"records": records, "rss": rss, "seconds": time.perf_counter() - start}


def summary(run: dict) -> dict:
    rec = run["records"]
    ok = [lat for _, valid, status, lat in rec if valid and status == 200]
    return {"requests": len(rec), "rps": len(rec) / run["seconds"], "ok_rps": len(ok) / run["seconds"],
            "p50_ms": 1000 * pct(ok, 0.5), "p99_ms": 1000 * pct(ok, 0.99)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--backend", default="torch")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--index", default="bible-en-ny:test", help="the server's --index ('' = none: no /search)")
    ap.add_argument("--minutes", type=float, default=30, help="length of the soak")
    ap.add_argument("--clients", default="8,32", help="client counts tried for the saturation")
    ap.add_argument("--measure-seconds", type=float, default=20, help="seconds per client count when measuring")
    ap.add_argument("--warmup-seconds", type=float, default=60, help="the mix before memory is taken as the base")
    ap.add_argument("--invalid-share", type=float, default=0.2, help="share of invalid requests in the mix")
    ap.add_argument("--window-minutes", type=float, default=5, help="first and last window compared for p99")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from xlsent.data.sets.pairs import load_pairs

    ds = load_pairs("bible-en-ny:test", dedupe=False, sample=2000, seed=args.seed).dataset
    texts = list(ds["src"]) + list(ds["tgt"])
    port = free_port()
    cmd = [sys.executable, "-m", "xlsent.cli.main", "serve", args.model, "--port", str(port), "--backend",
           args.backend, "--threads", str(args.threads), "--max-inputs", str(LIMITS["max_inputs"]), "--max-chars",
           str(LIMITS["max_chars"]), *(["--index", args.index] if args.index else [])]
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"xlsent-soak-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    print(f"model {args.model}, backend {args.backend}, {args.threads} threads, index {args.index or 'none'}, "
          f"loopback only; server log {log}")
    try:
        wait_healthy(port, proc, "xlsent server", log=log)
        search = bool(args.index)
        # 1. saturation: valid requests only
        best = None
        for c in (int(x) for x in args.clients.split(",")):
            s = summary(asyncio.run(drive(base, texts, c, args.measure_seconds, 0.0, args.seed, search=search)))
            print(f"saturation: {c} clients → {s['rps']:.1f} requests/s (p50 {s['p50_ms']:.0f} ms, p99 "
                  f"{s['p99_ms']:.0f} ms)")
            if best is None or s["rps"] > best[1]:
                best = (c, s["rps"])
        clients = best[0]
        print(f"held at saturation: {clients} clients ({best[1]:.1f} requests/s of valid requests when measured)")
        # 2. warm-up with the soak's own mix, then the memory base
        asyncio.run(drive(base, texts, clients, args.warmup_seconds, args.invalid_share, args.seed + 1,
                          search=search))
        rss_base = rss_mib(proc.pid)
        # 3. the soak
        seconds = 60 * args.minutes
        run = asyncio.run(drive(base, texts, clients, seconds, args.invalid_share, args.seed + 2, proc.pid,
                               search=search))
        rss_end = rss_mib(proc.pid)
        alive = proc.poll() is None
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()

    rec = run["records"]
    codes: dict[int, int] = {}
    for _, _, status, _ in rec:
        codes[status] = codes.get(status, 0) + 1
    n5xx = sum(n for c, n in codes.items() if c >= 500)
    wrong = sum(1 for _, valid, status, _ in rec
                if (valid and status not in (200, 429)) or (not valid and not 400 <= status < 500))
    invalid = sum(1 for _, valid, _, _ in rec if not valid)
    window = min(60 * args.window_minutes, run["seconds"] / 2)
    first = [lat for t, valid, status, lat in rec if valid and status == 200 and t < window]
    last = [lat for t, valid, status, lat in rec if valid and status == 200 and t >= run["seconds"] - window]
    p99_first, p99_last = 1000 * pct(first, 0.99), 1000 * pct(last, 0.99)
    s = summary(run)
    print(f"\nsoak: {args.minutes:g} min at {clients} clients, {len(rec)} requests ({s['rps']:.1f}/s; {invalid} "
          f"invalid, {100 * invalid / max(len(rec), 1):.0f}%), status codes {dict(sorted(codes.items()))}; the "
          f"server {'still up' if alive else 'DIED'}")
    print(f"  5xx: {n5xx} (target 0) {'ok' if n5xx == 0 else 'FAIL'}; answers of the wrong kind (valid not "
          f"200/429, invalid not 4xx, no answer): {wrong} {'ok' if wrong == 0 else 'FAIL'}")
    ratio = rss_end / rss_base
    print(f"  resident memory: {rss_base:.0f} MiB after warm-up, {rss_end:.0f} MiB at the end: ratio {ratio:.3f} "
          f"(target ≤ 1.05) {'ok' if ratio <= 1.05 else 'FAIL'}")
    print("  resident MiB every 10 s: " + " ".join(f"{m:.0f}" for _, m in run["rss"]))
    ratio = p99_last / p99_first
    print(f"  p99 of the valid 200s: {p99_first:.0f} ms in the first {window / 60:g} min ({len(first)} requests), "
          f"{p99_last:.0f} ms in the last ({len(last)}): ratio {ratio:.2f} (target 0.80–1.20) "
          f"{'ok' if 0.8 <= ratio <= 1.2 else 'FAIL'}")
    print(f"  p50 / p99 of every valid 200: {s['p50_ms']:.0f} / {s['p99_ms']:.0f} ms; valid 200s "
          f"{s['ok_rps']:.1f}/s (the load generator shares the server's cores)")


if __name__ == "__main__":
    main()
