#!/usr/bin/env python3
"""The overload phase of ``serve_load.py``, A/B: the same open-loop load against ``xlsent serve`` run from two source
trees (two checkouts of the repository), alternating which goes first, on 127.0.0.1 only.

    python benchmarks/serving/serve_overload_ab.py --trees ../main,. [--rate 110] [--seconds 10] [--rounds 3]
                                           [--profile DIR]

Each round starts a fresh server from each tree (``PYTHONPATH=TREE/src``, the same Python), sends ``--rate``
requests/s of one Bible verse each for ``--seconds`` with a 64-text queue (about twice what two CPU cores serve),
and prints the counts of 200 / 429 / timeouts, the 200s' p50/p99 and the 429s' p50/p99 as the client sees them and
the share of 429s the server answered within 50 ms by its own histogram. ``--profile DIR``: a py-spy record
(``pip install py-spy``) of each server's threads holding the GIL, as raw stacks in DIR.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve_load as sl  # noqa: E402  (the load generator and helpers, one copy)


def one(tree: Path, texts: list[str], args, profile: Path | None) -> dict:
    port = sl.free_port()
    env = dict(os.environ, PYTHONPATH=str(tree / "src"), TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, "-m", "xlsent.cli.main", "serve", args.model, "--port", str(port), "--backend",
           args.backend, "--threads", str(args.threads), "--max-queue", "64", "--max-wait-ms", "5",
           "--model-batch", "8"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    spy = None
    try:
        sl.wait_healthy(port, proc, f"xlsent serve from {tree}")
        if profile is not None:
            profile.mkdir(parents=True, exist_ok=True)
            out = profile / f"{tree.resolve().name}-{port}.txt"
            spy = subprocess.Popen(["py-spy", "record", "-p", str(proc.pid), "-d", str(int(args.seconds)), "-r",
                                    "100", "-f", "raw", "--threads", "--gil", "-o", str(out)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        over = asyncio.run(sl.open_loop(f"http://127.0.0.1:{port}/v1/embeddings", texts, args.rate, args.seconds))
        n429, share = sl.server_share_within(f"http://127.0.0.1:{port}", "429")
        over.update(server_429=n429, server_429_within_50ms=share)
        return over
    finally:
        if spy is not None:
            spy.wait()
        proc.terminate()
        proc.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trees", required=True, help="two source trees, A,B (each holds src/xlsent)")
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--backend", default="torch")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rate", type=float, default=110.0, help="requests/s sent (open loop)")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", type=Path, default=None)
    args = ap.parse_args()
    trees = [Path(t) for t in args.trees.split(",")]
    if len(trees) != 2 or not all((t / "src" / "xlsent").is_dir() for t in trees):
        ap.error("--trees: give two checkouts, A,B, each with src/xlsent")
    from xlsent.data.sets.pairs import load_pairs

    ds = load_pairs("bible-en-ny:test", dedupe=False, sample=2000, seed=0).dataset
    texts = list(ds["src"]) + list(ds["tgt"])
    print(f"{args.rate:.0f} requests/s for {args.seconds:.0f} s, queue 64 texts, {args.rounds} rounds, first server "
          "alternating\n")
    print("| round | tree | sent | 200 | 429 | timeouts | 200 p50 / p99 ms | 429 p50 / p99 ms (client) | "
          "429 within 50 ms (server) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in range(args.rounds):
        for tree in (trees if r % 2 == 0 else trees[::-1]):
            o = one(tree, texts, args, args.profile)
            print(f"| {r + 1} | {tree} | {o['sent']} | {o['ok']} | {o['429']} | {o['timeouts']} | "
                  f"{o['ok_p50_ms']:.0f} / {o['ok_p99_ms']:.0f} | {o['429_p50_ms']:.1f} / {o['429_p99_ms']:.0f} | "
                  f"{100 * o['server_429_within_50ms']:.0f}% |", flush=True)


if __name__ == "__main__":
    main()
