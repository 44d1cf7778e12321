#!/usr/bin/env python3
"""Peak memory and speed of the ONNX backend: onnxruntime's CPU memory arena on and off, and the backend's cap on
padded pieces per forward pass (``OnnxBackend(batch_tokens=…)``).

    python benchmarks/export/onnx_memory.py [--folder runs/backends/onnx-int8] [--threads 2] [--batch 64]
                                     [--budgets 0,4096,8192,16384]

Each setting runs in its own child process (so ``ru_maxrss`` is its own): load the exported folder, embed the
1,000 held-out NT pairs (2,000 texts) and every UDHR paragraph, report seconds and peak resident memory; torch
fp32 on the same texts is the peer. The arena keeps every block it has handed out for reuse; with batches of
varying shape it grows to the largest activations seen and never gives memory back.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def texts() -> list[str]:
    from xlsent.data.sets.pairs import load_pairs

    nt = load_pairs("bible-en-ny:test", sample=1000, seed=0).dataset
    udhr = load_pairs("udhr", dedupe=False).dataset
    return list(nt["src"]) + list(nt["tgt"]) + list(udhr["src"]) + list(udhr["tgt"])


def child(setting: str, folder: str, model: str, threads: int, batch: int, budget: int = 0) -> None:
    from xlsent.models.registry import quiet_libraries

    quiet_libraries()
    items = texts()
    if setting == "torch":
        from xlsent.encoding.encoder import Encoder

        enc = Encoder.load(model, backend="torch", threads=threads, batch_size=batch)
        run = enc.encode
    else:
        import xlsent.encoding.onnx_backend as ob

        original = ob.session_options

        def options(t: int = 0, spin: bool = True):
            so = original(t, spin)
            so.enable_cpu_mem_arena = setting == "arena-on"
            return so

        ob.session_options = options
        backend = ob.OnnxBackend(folder, threads=threads, batch_tokens=budget)

        def run(xs):
            return backend.embed(xs, batch_size=batch)
    t = time.perf_counter()
    run(items)
    seconds = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"setting": setting if setting == "torch" else f"{setting}, batch_tokens {budget}",
                      "texts": len(items), "seconds": seconds, "peak_rss_mib": rss}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folder", default="runs/backends/onnx-int8")
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--budgets", default="0", help="comma-separated batch_tokens values, each run with the arena on "
                    "(0 = no cap); the arena-off run uses the first")
    ap.add_argument("--budget", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.folder, args.model, args.threads, args.batch, args.budget)
    print(f"{args.folder} vs torch {args.model}; {args.threads} threads, batch {args.batch}")
    print("| setting | texts | seconds | peak RSS MiB |\n|---|---|---|---|")
    budgets = [int(b) for b in args.budgets.split(",")]
    runs = [("torch", 0)] + [("arena-on", b) for b in budgets] + [("arena-off", budgets[0])]
    for setting, budget in runs:
        out = subprocess.run([sys.executable, __file__, "--child", setting, "--folder", args.folder, "--model",
                              args.model, "--threads", str(args.threads), "--batch", str(args.batch), "--budget",
                              str(budget)], capture_output=True, text=True)
        if out.returncode:
            sys.exit(out.stderr[-2000:])
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {r['setting']} | {r['texts']} | {r['seconds']:.1f} | {r['peak_rss_mib']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
