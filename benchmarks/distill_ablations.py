#!/usr/bin/env python3
"""Paper-001 ablations (Ding et al. 2022, Tables 3–6) on English–Chichewa, CPU-sized.

    python benchmarks/distill_ablations.py --reference RUN [--only NAME ...]

``RUN`` is a finished ``xlsent train multistage --preset compress -o RUN`` run: its stage-1
assistant is reused (``stages.stage1=false``, ``assistant=RUN/stage1-assistant/model``), so
every variant distils from the same assistant on the same pairs with the same seed, and only
the changed stages train. Each variant's student is evaluated on the held-out New-Testament
pool (1,000 verse pairs) and the 47 UDHR languages, P@1 (cosine) with 95% bootstrap CIs.
Results go to ``RUN/ablations/<name>/metrics.json`` and a summary is printed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

VARIANTS: list[tuple[str, list[str]]] = [
    ("w/o MCL", ["mcl.variant=off"]),
    ("w/o Rec.", ["student.repeats=1"]),
    ("single-stage, random init", ["stages.mode=single-random"]),
    ("single-stage, pre-distillation", ["stages.mode=single-predistill"]),
    ("MCL bool", ["mcl.variant=bool"]),
    ("MCL ce", ["mcl.variant=ce"]),
]


def slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-").replace("--", "-")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, type=Path)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    ref = args.reference
    assistant = ref / "stage1-assistant" / "model"
    if not (assistant / "modules.json").exists():
        sys.exit(f"{ref}: no finished stage-1 assistant — run xlsent train multistage --preset compress -o {ref} first")
    summary = {}
    previous = None
    for name, sets in VARIANTS:
        if args.only and name not in args.only:
            continue
        out = ref / "ablations" / slug(name)
        if previous is not None and not out.exists() and "stages.mode=single-predistill" not in sets:
            # share finished stages: identical stage configs hash alike and are skipped
            out.mkdir(parents=True)
            for stage in ("stage2-embedding", "stage3-recurrence"):
                if (previous / stage / "stage.json").exists():
                    shutil.copytree(previous / stage, out / stage)
        cmd = [sys.executable, "-m", "xlsent.cli.main", "train", "multistage", "--preset", "compress", "-o", str(out),
               "--set", "stages.stage1=false", "--set", f"assistant={assistant}", "--set", "eval.each_stage=false", "--set", "eval.base=false",
               *[x for s in sets for x in ("--set", s)]]
        if "stages.mode=single-predistill" in sets:
            cmd[cmd.index(f"assistant={assistant}")] = "assistant=e5-small"
        print("$", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        m = json.loads((out / "metrics.json").read_text())["models"]["student"]
        summary[name] = m
        previous = out if "stages.mode" not in " ".join(sets) else previous
    for name, m in summary.items():
        r, u = m["retrieval"], m.get("udhr", {}).get("mean", {})
        print(f"{name:32s} NT ny→en {r['tgt2src']['p@1']:.3f}  en→ny {r['src2tgt']['p@1']:.3f}  "
              f"UDHR xx→en {u.get('tgt2src', {}).get('p@1', float('nan')):.3f}  "
              f"triplet {m['triplets']['accuracy']['cosine']['accuracy']:.3f}")


if __name__ == "__main__":
    main()
