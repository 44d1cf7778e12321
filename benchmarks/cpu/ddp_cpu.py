#!/usr/bin/env python3
"""Two-process data parallelism on the CPU (torchrun, gloo) against one process: a correctness run, timed.

    python benchmarks/cpu/ddp_cpu.py -o runs/ddp-cpu [--recipe lightweight] [--set KEY=VALUE …]

The same training command runs twice, each in its own process tree timed by ``/usr/bin/time``:

* ``one`` — ``python -m xlsent train RECIPE …`` (torch's default threads: every core);
* ``two`` — ``torchrun --standalone --nproc_per_node 2 -m xlsent train RECIPE …`` (``OMP_NUM_THREADS=1``: one
  core a process), ``optim.batch_size`` the same global batch.

Default: ``lightweight --preset small`` for one epoch with every loss term on (UGT + align + sim: align and sim
gather the other process's vectors). Printed: the loop's seconds per epoch (``stage.json``), the whole
command's wall and CPU seconds, the peak resident memory of the largest process (``/usr/bin/time``'s maximum
over the process tree: for ``two``, one worker — the pair holds about twice that), the final logged loss of
each, and the cosine between the two models' embeddings of a few sentences. On a 2-core machine this measures
what DDP costs, not a speed-up: both runs share the same two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

TEXTS = ["In the beginning God created the heaven and the earth.", "Pachiyambi Mulungu adalenga kumwamba ndi dziko.",
         "And God said, Let there be light: and there was light.", "Mulungu anati, Pakhale kuwala, ndipo kunali kuwala."]


def timed(cmd: list[str], run: Path, env: dict) -> dict:
    stats = run / "time.txt"
    if not (run / "stage.json").exists():
        run.mkdir(parents=True, exist_ok=True)
        with open(run / "log.txt", "w") as log:
            rc = subprocess.call(["/usr/bin/time", "-f", "%e %U %S %M", "-o", str(stats), *cmd], stdout=log,
                                 stderr=subprocess.STDOUT, env=env)
        if rc:
            sys.exit(f"{' '.join(cmd)} failed (exit {rc}); see {run / 'log.txt'}")
    wall, user, system, rss = stats.read_text().split()[-4:]
    rec = json.loads((run / "stage.json").read_text())
    log = [json.loads(x) for x in (run / "train_log.jsonl").read_text().splitlines()]
    return {"loop_s": rec["seconds"], "steps": rec["steps"], "wall_s": float(wall),
            "cpu_s": float(user) + float(system), "peak_mib": int(rss) / 1024, "final_loss": log[-1]["loss"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--recipe", default="lightweight")
    ap.add_argument("--preset", default="small")
    ap.add_argument("--set", dest="sets", action="append", default=None)
    a = ap.parse_args()
    sets = a.sets if a.sets is not None else ["optim.epochs=1", "models.reference=''"]
    args = ["train", a.recipe, *(["--preset", a.preset] if a.preset else []), "--no-eval", "--device", "cpu",
            *[x for s in sets for x in ("--set", s)]]
    out = a.output.resolve()
    one = timed([sys.executable, "-m", "xlsent", *args, "-o", str(out / "one")], out / "one", dict(os.environ))
    two = timed([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m",
                 "xlsent", *args, "-o", str(out / "two")], out / "two", {**os.environ, "OMP_NUM_THREADS": "1"})
    from sentence_transformers import SentenceTransformer

    import numpy as np

    a1, a2 = (SentenceTransformer(str(out / d / "model"), device="cpu").encode(TEXTS) for d in ("one", "two"))
    cos = (a1 * a2).sum(1) / np.linalg.norm(a1, axis=1) / np.linalg.norm(a2, axis=1)
    print(f"{' '.join(args)}\n")
    print(f"{'run':<24} {'steps':>6} {'loop s':>8} {'wall s':>8} {'CPU s':>8} {'peak MiB/proc':>14} {'final loss':>11}")
    for name, r in (("one process", one), ("two processes (gloo)", two)):
        print(f"{name:<24} {r['steps']:>6} {r['loop_s']:>8.1f} {r['wall_s']:>8.1f} {r['cpu_s']:>8.1f} "
              f"{r['peak_mib']:>14.0f} {r['final_loss']:>11.4f}")
    print(f"\ntwo ÷ one: loop time {two['loop_s'] / one['loop_s']:.2f}×, peak memory per process "
          f"{two['peak_mib'] / one['peak_mib']:.2f}×; cosine of the two models' embeddings: min {cos.min():.5f}")


if __name__ == "__main__":
    main()
