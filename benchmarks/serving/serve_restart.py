#!/usr/bin/env python3
"""A restart under load: a steady stream of requests while ``xlsent serve`` is sent SIGTERM and a second
instance takes over on another port; 127.0.0.1 only.

    python benchmarks/serving/serve_restart.py [--model e5-small] [--backend torch] [--threads 2] [--rate auto]
                                       [--seconds 20] [--term-at 8] [--json OUT.json]

1. Instance A starts. With ``--rate auto`` its saturation is measured first (32 closed-loop clients,
   ``--saturation-seconds``) and the stream runs at half of it.
2. Instance B starts on another port and is waited for until ``/health`` is 200 — a deployment starts the new
   node and waits for it before stopping the old one; an instance that is still loading answers 503 by design,
   which a client would count as a 5xx.
3. Open-loop arrivals at ``--rate`` requests/s (one verse each) for ``--seconds``; at ``--term-at`` A gets
   SIGTERM. The client sends to A until A refuses a connection, then to B. A request whose connection is
   refused, or closed or reset before any response came (an idle keep-alive connection A closed, or a
   connection still waiting in the kernel's accept queue when A's listener closed: the kernel resets it), is
   retried on B, as a client that retries idempotent requests does; both are counted. That none of them had
   been accepted by A is A's own count: every request that reached A's application is answered or counted
   unanswered, and A prints that count when it exits.
4. A must exit 0 and report no accepted request left unanswered (its own count, printed at exit); the client
   must see no 5xx and no failure, every request answered, and the retries answered by B. B is stopped the
   same way and must drain cleanly too.

Exit status 1 when any of these fails. The figures go to stdout (and ``--json``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_load import closed_loop, free_port, pct, wait_healthy  # noqa: E402


def start(args, port: int, log: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "xlsent.cli.main", "serve", args.model, "--port", str(port), "--backend",
           args.backend, "--threads", str(args.threads), "--drain-seconds", str(args.drain_seconds),
           *(a for extra in args.serve_arg for a in extra.split())]
    return subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT)


async def stream(ports: tuple[int, int], texts: list[str], rate: float, seconds: float, term_at: float,
                 proc_a: subprocess.Popen) -> dict:
    """Open-loop arrivals; SIGTERM to A at ``term_at``; failover to B on refusal or a connection closed unanswered."""
    import httpx

    a_down = False
    rows: list[dict] = []
    in_flight_a = 0
    in_flight_at_term = None

    async def one(i: int, http: httpx.AsyncClient) -> None:
        nonlocal a_down, in_flight_a
        t = time.perf_counter()
        row = {"i": i, "refused": 0, "closed_unanswered": 0, "server": None, "status": None, "error": None}
        while True:
            target = "B" if a_down else "A"
            port = ports[1] if a_down else ports[0]
            if target == "A":
                in_flight_a += 1
            try:
                r = await http.post(f"http://127.0.0.1:{port}/v1/embeddings", json={"input": texts[i % len(texts)]})
                row["server"], row["status"] = target, r.status_code
                if r.status_code == 200 and len(r.json()["data"][0]["embedding"]) == 0:
                    row["error"] = "empty vector"
                break
            except httpx.ConnectError:  # refused: the listener is closed
                row["refused"] += 1
                if target == "B":
                    row["error"] = "B refused"
                    break
                a_down = True
            except (httpx.RemoteProtocolError, httpx.ReadError):  # closed or reset before any response
                row["closed_unanswered"] += 1
                if target == "B":
                    row["error"] = "B closed unanswered"
                    break
                a_down = True
            except httpx.HTTPError as exc:
                row["error"] = f"{type(exc).__name__}: {exc}"
                break
            finally:
                if target == "A":
                    in_flight_a -= 1
        row["seconds"] = time.perf_counter() - t
        row["sent_at"] = t - start
        rows.append(row)

    tasks = []
    termed = False
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=256)) as http:
        start = time.perf_counter()
        i = 0
        while time.perf_counter() - start < seconds:
            if not termed and time.perf_counter() - start >= term_at:
                in_flight_at_term = in_flight_a
                proc_a.send_signal(signal.SIGTERM)
                termed = True
            tasks.append(asyncio.create_task(one(i, http)))
            i += 1
            await asyncio.sleep(max(0.0, start + i / rate - time.perf_counter()))
        await asyncio.gather(*tasks)
    return {"rows": rows, "in_flight_at_term": in_flight_at_term}


def by_second(rows: list[dict], seconds: float) -> list[dict]:
    """Requests grouped by the whole second they were sent in: count, p50 and max latency (ms), answered ones."""
    out = []
    for s in range(int(seconds) + 1):
        lat = [r["seconds"] for r in rows if int(r["sent_at"]) == s and r["status"] == 200]
        if lat:
            out.append({"second": s, "n": len(lat), "p50_ms": 1000 * pct(lat, 0.5), "max_ms": 1000 * max(lat)})
    return out


def drained_line(log: Path) -> tuple[int | None, int | None]:
    m = re.search(r"drained: (\d+) request\(s\) answered during the drain, (\d+) accepted request\(s\) left "
                  r"unanswered", log.read_text(encoding="utf-8", errors="replace"))
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--backend", default="torch")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rate", default="auto", help="requests/s, or auto: half the saturation rate")
    ap.add_argument("--saturation-seconds", type=float, default=8)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--term-at", type=float, default=8)
    ap.add_argument("--drain-seconds", type=float, default=25)
    ap.add_argument("--serve-arg", action="append", default=[], help="more xlsent serve options, e.g. "
                    "'--worker-nice 0' (repeatable)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from xlsent.data.sets.pairs import load_pairs

    ds = load_pairs("bible-en-ny:test", dedupe=False, sample=2000, seed=args.seed).dataset
    texts = list(ds["src"]) + list(ds["tgt"])
    random.Random(args.seed).shuffle(texts)
    logs = Path(tempfile.mkdtemp(prefix="xlsent-restart-"))
    ports = (free_port(), free_port())
    proc_a = start(args, ports[0], logs / "a.log")
    proc_b = None
    try:
        wait_healthy(ports[0], proc_a, "instance A", log=logs / "a.log")
        saturation = None
        if args.rate == "auto":
            url = f"http://127.0.0.1:{ports[0]}/v1/embeddings"
            asyncio.run(closed_loop(url, texts, 4, 2))  # warm-up
            saturation = asyncio.run(closed_loop(url, texts, 32, args.saturation_seconds))["rps"]
            rate = saturation / 2
        else:
            rate = float(args.rate)
        proc_b = start(args, ports[1], logs / "b.log")
        wait_healthy(ports[1], proc_b, "instance B", log=logs / "b.log")
        out = asyncio.run(stream(ports, texts, rate, args.seconds, args.term_at, proc_a))
        code_a = proc_a.wait(args.drain_seconds + 60)
        proc_b.send_signal(signal.SIGTERM)
        code_b = proc_b.wait(args.drain_seconds + 60)
    finally:
        for p in (proc_a, proc_b):
            if p is not None and p.poll() is None:
                p.kill()
    rows = out["rows"]
    answered_in_drain_a, unanswered_a = drained_line(logs / "a.log")
    _, unanswered_b = drained_line(logs / "b.log")
    ok = [r for r in rows if r["status"] == 200 and not r["error"]]
    by_a = sum(1 for r in ok if r["server"] == "A")
    by_b = sum(1 for r in ok if r["server"] == "B")
    retried = [r for r in rows if r["refused"] or r["closed_unanswered"]]
    lat = [r["seconds"] for r in ok]
    summary = {
        "model": args.model, "backend": args.backend, "threads": args.threads,
        "saturation_rps": saturation, "rate_rps": rate, "seconds": args.seconds, "term_at": args.term_at,
        "sent": len(rows), "answered_200": len(ok), "answered_by_a": by_a, "answered_by_b": by_b,
        "5xx": sum(1 for r in rows if (r["status"] or 0) >= 500),
        "other_status": sum(1 for r in rows if r["status"] not in (None, 200) and r["status"] < 500),
        "failed": sum(1 for r in rows if r["error"] or r["status"] is None),
        "retried": len(retried), "retried_answered_by_b": sum(1 for r in retried if r in ok and r["server"] == "B"),
        "refusals": sum(r["refused"] for r in rows), "closed_unanswered": sum(r["closed_unanswered"] for r in rows),
        "in_flight_at_term": out["in_flight_at_term"], "a_answered_during_drain": answered_in_drain_a,
        "a_exit": code_a, "a_unanswered": unanswered_a, "b_exit": code_b, "b_unanswered": unanswered_b,
        "p50_ms": 1000 * pct(lat, 0.5), "p99_ms": 1000 * pct(lat, 0.99),
        "retried_p50_ms": 1000 * pct([r["seconds"] for r in retried if r in ok], 0.5),
        "by_second": by_second(rows, args.seconds),
        "errors": sorted({r["error"] for r in rows if r["error"]}),
        "logs": str(logs),
    }
    checks = {
        "A exited 0": code_a == 0,
        "A left no accepted request unanswered": unanswered_a == 0,
        "B drained cleanly": code_b == 0 and unanswered_b == 0,
        "no 5xx": summary["5xx"] == 0,
        "no failed request": summary["failed"] == 0 and summary["other_status"] == 0,
        "every request answered": len(ok) == len(rows),
        "the retries reached B": summary["retried_answered_by_b"] == len(retried) and by_b > 0,
    }
    summary["checks"] = checks
    sat = f"saturation {saturation:.1f} req/s, " if saturation else ""
    print(f"model {args.model}, backend {args.backend}, {args.threads} threads per server; {sat}stream at "
          f"{rate:.1f} req/s for {args.seconds:g} s, SIGTERM to A at {args.term_at:g} s "
          f"({out['in_flight_at_term']} requests in flight to A then)")
    print(f"sent {len(rows)}: {by_a} answered by A ({answered_in_drain_a} of them during its drain), {by_b} by B; "
          f"{len(retried)} retried on B ({summary['refusals']} refused, {summary['closed_unanswered']} closed "
          f"unanswered); {summary['5xx']} × 5xx, {summary['failed']} failed; p50 {summary['p50_ms']:.0f} ms, "
          f"p99 {summary['p99_ms']:.0f} ms, retried p50 {summary['retried_p50_ms']:.0f} ms")
    print("latency by second the request was sent (requests, p50 / max ms): " + "; ".join(
        f"{s['second']}s {s['n']}, {s['p50_ms']:.0f} / {s['max_ms']:.0f}" for s in summary["by_second"]))
    if summary["errors"]:
        print("failures: " + "; ".join(summary["errors"]))
    print(f"A: exit {code_a}, {unanswered_a} accepted request(s) unanswered; B: exit {code_b}, {unanswered_b}")
    for name, passed in checks.items():
        print(f"  {'ok ' if passed else 'FAIL'} {name}")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
