#!/usr/bin/env python3
"""The one training loop (``training/loop.py``) against the hand-written loops it replaced, on the CPU.

    python benchmarks/cpu/loop_vs_old.py -o runs/loop-vs-old [--old 4584ebb] [--new HEAD]
        [--recipes siamese,lightweight,scp,tagger,token-alignment,int8-distill] [--rounds 1]

``--old`` is a commit from before the move (4584ebb: the last commit before issue 32), ``--new`` one after it.
Each is checked out into ``OUT/old-src`` / ``OUT/new-src`` (git worktrees; the working tree can change while it
runs) and each recipe trains twice per round, old then new, in its own process,
with the same settings, the same installed libraries and an empty xlsent cache each (so encoder features and
teacher vectors are computed inside every run, as a user's first run does):

* ``siamese``     — the default (70 epochs over 2,016 pairs + as many worst negatives);
* ``lightweight`` — ``--preset small``, capped at 60 steps (the default is 3 h);
* ``scp``         — the default, capped at 40 steps (of 372);
* ``tagger``      — the default on 600 sentences (the old tagger ignored ``optim.max_steps``);
* ``token-alignment`` — multistage's stage-2 token alignment (e5-small, B = 128, the default 1,000 steps), timed in-process;
* ``int8-distill``    — the int8 self-distillation (``benchmarks/export/experiments/int8_distill.py``; the library's
  before issue 35) of e5-small (12 steps of 32 texts), timed in-process.

Printed: the loop's own training seconds from each run's ``stage.json`` (what the loop changes: model
loading, features and evaluation are outside it), the whole process's CPU seconds (``/usr/bin/time``), and
new ÷ old. The target was ≤ 1.05 (not slower by more than 5%). ``--rounds N`` alternates old and new N times
and reports the medians: on a shared 2-core machine one round's ratio moved by ±10% between invocations.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECIPES = {
    "siamese": ["train", "siamese"],
    "lightweight": ["train", "lightweight", "--preset", "small", "--set", "optim.max_steps=60"],
    "scp": ["train", "scp", "--set", "optim.max_steps=40"],
    "tagger": ["train", "tagger", "--set", "train.sample=600"],
}
# library functions that trained in loops of their own, timed around the call (the signature is the same in both)
_TIMED = ("import json, sys, time\nfrom xlsent.models.handle import load_model\nm = load_model('e5-small').model\n"
          "{setup}\nt0 = time.perf_counter()\n{call}\nseconds = time.perf_counter() - t0\n"
          "json.dump({{'seconds': seconds, 'steps': {steps}}}, open(sys.argv[1] + '/stage.json', 'w'))\n")
FUNCTIONS = {
    "token-alignment": _TIMED.format(  # multistage's stage 2 (objective token), e5-small → B = 128, the default 1,000 steps
        setup="from xlsent.models.student import align_bottleneck_tokens, build_student_st\n"
              "s = build_student_st(m, ru_layers=3, repeats=0, bottleneck=128, normalize=False)",
        call="align_bottleneck_tokens(s[0].auto_model, m[0].auto_model, 1000)", steps=1000),
    "int8-distill": _TIMED.format(  # export's quantisation-aware distillation of e5-small, 12 steps of 32 texts
        setup="try:\n    from xlsent.exporter.distill import DistillSettings, distill_for_int8\n"  # before issue 35
              "except ImportError:\n"
              f"    sys.path.insert(0, {str(ROOT / 'benchmarks' / 'export' / 'experiments')!r})\n"
              "    from int8_distill import DistillSettings, distill_for_int8\n"
              "from xlsent.exporter.quantize import Int8Settings",
        call="distill_for_int8(m, Int8Settings(), DistillSettings(steps=12, max_texts=2000), log=lambda _: None)",
        steps=12),
}


def worktree(out: Path, commit: str, name: str) -> Path:
    src = out / f"{name}-src"
    if not src.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(src), commit], check=True)
    return src


def run(recipe: str, src: Path, run_dir: Path, cache: Path | None = None) -> dict:
    """One training run of ``recipe`` with the package at ``src``; loop seconds and process CPU seconds.
    ``cache``: an xlsent cache shared by the runs (else an empty one for this run)."""
    record = run_dir / "stage.json"
    if not record.exists():
        run_dir.mkdir(parents=True, exist_ok=True)
        cache = cache or run_dir / "cache"
        cache.mkdir(parents=True, exist_ok=True)
        from xlsent.utils.io import cache_dir

        if not (cache / "models").exists():
            (cache / "models").symlink_to(cache_dir() / "models")
        env = {**os.environ, "XLSENT_CACHE_DIR": str(cache), "PYTHONPATH": str(src / "src")}
        if recipe in FUNCTIONS:
            cmd = [sys.executable, "-c", FUNCTIONS[recipe], str(run_dir)]
        else:  # the CPU here
            cmd = [sys.executable, "-c", "from xlsent.cli.main import main; main()", *RECIPES[recipe], "-o", str(run_dir),
                   "--no-eval"]
        stats = run_dir / "time.txt"
        with open(run_dir / "log.txt", "w") as log:
            rc = subprocess.call(["/usr/bin/time", "-f", "%e %U %S %M", "-o", str(stats), *cmd], stdout=log,
                                 stderr=subprocess.STDOUT, env=env, cwd=str(src))
        if rc:
            sys.exit(f"{' '.join(cmd)} failed (exit {rc}); see {run_dir / 'log.txt'}")
    wall, user, system, rss = (run_dir / "time.txt").read_text().split()[-4:]
    rec = json.loads(record.read_text())
    return {"loop_s": float(rec["seconds"]), "steps": rec.get("steps") or rec.get("epochs"),
            "cpu_s": float(user) + float(system), "wall_s": float(wall), "peak_mib": int(rss) / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--old", default="4584ebb")
    ap.add_argument("--new", default="HEAD")
    ap.add_argument("--recipes", default=",".join([*RECIPES, *FUNCTIONS]))
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--shared-cache", action="store_true", help="one xlsent cache for every run (encoder features "
                    "are computed once; the loop's seconds are unchanged, the process's CPU seconds exclude them)")
    a = ap.parse_args()
    out = a.output.resolve()
    out.mkdir(parents=True, exist_ok=True)
    old, new = worktree(out, a.old, "old"), worktree(out, a.new, "new")
    rows = []
    for recipe in a.recipes.split(","):
        got: dict[str, list[dict]] = {"old": [], "new": []}
        for k in range(a.rounds):
            for side, src in (("old", old), ("new", new)):
                got[side].append(run(recipe, src, out / f"{recipe}-{side}-{k}",
                                     out / "cache-shared" if a.shared_cache else None))
                print(recipe, side, k, json.dumps(got[side][-1]), flush=True)
        med = {side: {key: statistics.median(r[key] for r in runs) for key in ("loop_s", "cpu_s", "peak_mib")}
               for side, runs in got.items()}
        rows.append((recipe, med))
    print(f"\n{'recipe':<12} {'loop s old':>10} {'loop s new':>10} {'new/old':>8} {'CPU s old':>10} {'CPU s new':>10}"
          f" {'new/old':>8} {'MiB old':>8} {'MiB new':>8}")
    for recipe, m in rows:
        o, n = m["old"], m["new"]
        print(f"{recipe:<12} {o['loop_s']:>10.1f} {n['loop_s']:>10.1f} {n['loop_s'] / o['loop_s']:>8.3f} "
              f"{o['cpu_s']:>10.1f} {n['cpu_s']:>10.1f} {n['cpu_s'] / o['cpu_s']:>8.3f} {o['peak_mib']:>8.0f} "
              f"{n['peak_mib']:>8.0f}")


if __name__ == "__main__":
    main()
