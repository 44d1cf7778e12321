#!/usr/bin/env python3
"""How long each job takes on this machine: the rows of the getting-started table "How long on your machine".

    python benchmarks/cpu/machine_timings.py -o runs/machine-timings
        [--jobs embed,mine,adapt-1000,adapt-5000,adapt-20000] [--lines 100000] [--env XLSENT_CPU_BF16=0]

Each job is one ``xlsent`` command in its own process, timed whole by ``/usr/bin/time -v`` (wall clock, user + system
CPU seconds, peak resident memory), the model already prepared (``xlsent models prepare``), its cache otherwise as
the user's (the CPU's bf16 verdict is timed once, on first use, and kept):

* ``embed`` — ``xlsent embed`` of ``--lines`` English lines;
* ``mine`` — ``xlsent mine`` of ``--lines`` English against ``--lines`` Chichewa lines, encoding both sides
  included (the automatic cut, the default filters off: the search and the margin as on a crawl);
* ``adapt-N`` — ``xlsent train adapt bible-en-ny:train --set train.sample=N`` (its held-out scoring included, the
  final evaluation off: ``--no-eval``).

The lines: every verse of the bundled Bible in that language, then lines made of the first half of one verse and
the second half of another (seeded), until there are ``--lines`` — text of verse length whose every line is
distinct (the Bible alone has about 31,000 verses a side). ``--env KEY=VALUE`` runs every job with that variable
set (``XLSENT_CPU_BF16=0``: fp32, as on a CPU without fast bf16). Printed: the machine (CPU model, cores, AMX or
not, this CPU's bf16 verdict), and each job's wall time, CPU time and peak memory; ``OUT/timings.json`` keeps them,
and finished jobs are not run again.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path


def lines(lang: str, n: int, seed: int = 0) -> list[str]:
    """``n`` distinct lines of verse text in ``lang`` (``eng`` or ``nya``): the verses, then halves joined."""
    from xlsent.data.sets.pairs import load_pairs

    verses: list[str] = []
    for split in ("train", "dev", "test"):
        d = load_pairs(f"bible-en-ny:{split}", dedupe=False).dataset
        verses += list(d["src" if lang == "eng" else "tgt"])
    out = list(dict.fromkeys(v for v in verses if v.strip()))[:n]
    seen = set(out)
    rng = random.Random(seed)
    while len(out) < n:
        a, b = rng.choice(verses).split(), rng.choice(verses).split()
        text = " ".join(a[: max(1, len(a) // 2)] + b[len(b) // 2:])
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def timed(cmd: list[str], log: Path, env: dict) -> dict:
    """``cmd`` under ``/usr/bin/time -v``: wall and CPU seconds, peak resident memory (GiB), exit code."""
    r = subprocess.run(["/usr/bin/time", "-v", *cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=env)
    log.write_text(r.stdout, encoding="utf-8")

    def field(name: str) -> str:
        m = re.search(rf"{re.escape(name)}: (.+)", r.stdout)
        return m.group(1).strip() if m else "0"

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    parts = [float(x) for x in wall.split(":")]
    seconds = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    return {"rc": r.returncode, "wall_s": round(seconds, 1),
            "cpu_s": round(float(field("User time (seconds)")) + float(field("System time (seconds)")), 1),
            "peak_gib": round(int(field("Maximum resident set size (kbytes)")) / 2 ** 20, 2)}


def minutes(s: float) -> str:
    return f"{int(s // 60)} min {int(round(s % 60)):02d} s" if s >= 60 else f"{s:.0f} s"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--jobs", default="embed,mine,adapt-1000,adapt-5000,adapt-20000")
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for every job (repeatable)")
    args = ap.parse_args(argv)

    import torch

    from xlsent.utils.cpu_bf16 import cpu_name, describe
    from xlsent.utils.device import cpu_has_amx

    out = args.output
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    for item in args.env:
        key, _, value = item.partition("=")
        env[key] = value
    exe = str(Path(sys.executable).with_name("xlsent"))
    subprocess.run([exe, "models", "prepare"], check=True, env=env, stdout=subprocess.DEVNULL)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if any(item.startswith("XLSENT_CPU_BF16=") for item in args.env):
        os.environ.update({k: v for k, v in env.items() if k == "XLSENT_CPU_BF16"})
    verdict = describe()
    print(f"machine: {cpu_name()}, {cores} cores, AMX {'yes' if cpu_has_amx() else 'no'}, torch {torch.__version__}; "
          f"encoding {verdict['CPU encoding']}; training {verdict['CPU training']}"
          + (f"; {' '.join(args.env)}" if args.env else ""), flush=True)

    results_path = out / "timings.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    texts = {}
    for job in [j.strip() for j in args.jobs.split(",") if j.strip()]:
        if job in results and results[job]["rc"] == 0:
            continue
        if job in ("embed", "mine"):
            for lang in ("eng", "nya") if job == "mine" else ("eng",):
                path = out / f"{lang}-{args.lines}.txt"
                if not path.exists():
                    texts[lang] = lines(lang, args.lines)
                    path.write_text("\n".join(texts[lang]) + "\n", encoding="utf-8")
        if job == "embed":
            cmd = [exe, "embed", "-i", str(out / f"eng-{args.lines}.txt"), "-o", str(out / "embed.npy")]
        elif job == "mine":
            work = out / "mine.work"
            cmd = [exe, "mine", str(out / f"eng-{args.lines}.txt"), str(out / f"nya-{args.lines}.txt"), "-o",
                   str(out / "mined.tsv"), "--workdir", str(work), "--overwrite"]
        elif job.startswith("adapt-"):
            n = int(job.split("-", 1)[1])
            cmd = [exe, "train", "adapt", "bible-en-ny:train", "-o", str(out / job), "--no-eval", "--set",
                   f"train.sample={n}"]
        else:
            sys.exit(f"--jobs: unknown job {job!r} (embed, mine, adapt-N)")
        print(f"{job}: {' '.join(cmd)}", flush=True)
        results[job] = {**timed(cmd, out / f"{job}.log", env), "command": " ".join(cmd[1:]), "env": args.env}
        results_path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        r = results[job]
        print(f"{job}: {minutes(r['wall_s'])} wall, {r['cpu_s']:.0f} s CPU, peak {r['peak_gib']:.2f} GiB"
              + ("" if r["rc"] == 0 else f" — exit {r['rc']}, see {out / (job + '.log')}"), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
