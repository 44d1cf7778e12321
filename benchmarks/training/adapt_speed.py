#!/usr/bin/env python3
"""What each faster-step setting of ``xlsent train adapt`` buys, measured alone (issue 60 §2).

    python benchmarks/training/adapt_speed.py -o runs/adapt-speed                       # every variant, dev split
    python benchmarks/training/adapt_speed.py -o runs/adapt-speed --only base,grouped   # some of them

The demo's training job (``configs/adapt-demo.yaml``: 2,000 Bible pairs + 2,000 UDHR pairs of other languages, 10%
held out to choose the step) on the development split of ``benchmarks/training/multilingual_adapt.py --split dev``: the
Bible side is ``bible-en-ny:dev-train`` (the Old Testament without the dev books), the UDHR side ``udhr-all:dev``
without 40 of its languages; every run is scored on those 40 unseen languages and on ``bible-en-ny:dev``. Each
variant changes one setting against the recipe as it was (``--set`` values below), and ``all`` combines them:

* ``base``     — the recipe before issue 60 (random batches, dropout, every block trained, fp32);
* ``grouped``  — ``optim.group_by_length=true``: batches of similar length, no text twice in a batch;
* ``nodrop``   — ``models.dropout=false``;
* ``top6``     — ``models.train_layers=6``: the top 6 of 12 blocks trained;
* ``bf16``     — ``optim.precision=bf16`` (CPU autocast; fast only on a CPU with AMX / AVX-512 bf16);
* ``all``      — grouped + nodrop + top6;
* ``nodrop+top6``, ``nodrop+bf16``, ``nodrop+top8``, ``nodrop+bf16+top8`` — combinations;
* ``nodrop+sorted`` — dropout off and ``loss.sorted_chunk=8``: each batch's texts sorted by length and run 8 at a
  time, each chunk padded to its own longest (the same batches; the default on a CPU since issue 60);
* ``nodrop+sorted+bf16`` — the same in bf16 (autocast, plain attention: the default on a CPU with AMX since issue 60).

``--steps N`` times the first N steps of each variant only (no held-out part, nothing scored): the same random
batches for every variant but ``grouped`` and ``all`` (whose first batch is the longest), so their step costs compare
directly — the ratio to ``base`` is each setting's gain alone.

Each run is ``xlsent train adapt PAIRS -o OUT/NAME --no-eval --set …`` in its own process: its training time
(``stage.json``: the steps alone, without loading or scoring) and the process's peak resident memory (its own
``ru_maxrss``, as ``/usr/bin/time -v`` reports it). Run on an otherwise idle machine; finished runs are skipped and
their scores kept in ``OUT/results.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # multilingual_adapt, beside this file
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # _ablation, in benchmarks/

from _ablation import xlsent_measured  # noqa: E402
from multilingual_adapt import DEV, directions, held_out, score  # noqa: E402

BASE = {"optim.group_by_length": "false", "models.dropout": "true", "models.train_layers": "0",
        "optim.precision": "fp32", "loss.sorted_chunk": "0"}
VARIANTS = {
    "base": {},
    "grouped": {"optim.group_by_length": "true"},
    "nodrop": {"models.dropout": "false"},
    "top6": {"models.train_layers": "6"},
    "bf16": {"optim.precision": "bf16"},
    "all": {"optim.group_by_length": "true", "models.dropout": "false", "models.train_layers": "6"},
    "nodrop+top6": {"models.dropout": "false", "models.train_layers": "6"},
    "nodrop+bf16": {"models.dropout": "false", "optim.precision": "bf16"},
    "nodrop+top8": {"models.dropout": "false", "models.train_layers": "8"},
    "nodrop+bf16+top8": {"models.dropout": "false", "optim.precision": "bf16", "models.train_layers": "8"},
    "nodrop+sorted": {"models.dropout": "false", "loss.sorted_chunk": "8"},
    "nodrop+sorted+bf16": {"models.dropout": "false", "loss.sorted_chunk": "8", "optim.precision": "bf16"},
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", required=True, type=Path)
    ap.add_argument("--only", default=",".join(VARIANTS), help="comma-separated variants (default: all)")
    ap.add_argument("--sample", type=int, default=2000, help="train.sample: pairs drawn from each source")
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--steps", type=int, default=0, help="time the first N steps only (nothing held out or scored)")
    args = ap.parse_args(argv)
    out = args.output
    out.mkdir(parents=True, exist_ok=True)
    extra, held = held_out(out, 40)
    pairs = f"{DEV[0]},{extra}"
    cache = out / "results.json"
    results = json.loads(cache.read_text()) if cache.exists() else {}
    for name in args.only.split(","):
        # the UDHR side is a file here: train.sample_files draws from it as train.sample does from the bundled set
        settings = {**BASE, **VARIANTS[name], "train.sample": str(args.sample), "train.sample_files": str(args.sample)}
        key = f"{name}|{args.sample}" + (f"|steps{args.steps}" if args.steps else "")
        run = out / (f"{name}-{args.sample}" + (f"-steps{args.steps}" if args.steps else ""))
        if args.steps:
            settings.update({"optim.max_steps": str(args.steps), "train.holdout": "0", "eval.pairs": DEV[2].split(":", 1)[1]})
        if key not in results:
            sets = [x for k, v in settings.items() for x in ("--set", f"{k}={v}")]
            measured = xlsent_measured("train", "adapt", pairs, "-o", str(run), "--no-eval", *sets)
            rec = json.loads((run / "stage.json").read_text())
            results[key] = {"train_seconds": rec["seconds"], "steps": rec["steps"], "estimate": rec.get("estimate"),
                            "process_seconds": measured["seconds"], "max_rss_mb": measured["max_rss_mb"]}
            if not args.steps:
                print(f"scoring {name}…", file=sys.stderr)
                results[key]["scores"] = score(str(run / "model"), args.resamples, [DEV[2]], held)
            cache.write_text(json.dumps(results, indent=1))
    print(f"{'variant':<12}{'steps':>6}{'train s':>9}{'× base':>8}{'est. s':>8}{'peak GB':>9}"
          f"{'unseen en→xx':>14}{'unseen xx→en':>14}{'dev en→xx':>11}{'dev xx→en':>11}")
    tail = f"|steps{args.steps}" if args.steps else ""
    base = results.get(f"base|{args.sample}{tail}")
    for name in VARIANTS:
        r = results.get(f"{name}|{args.sample}{tail}")
        if r is None:
            continue
        if "scores" not in r:
            r["scores"] = {"held": [("", "", float("nan"), float("nan"))], DEV[2]: [("", "", float("nan"), float("nan"))]}
        unseen, nt = directions(r["scores"]["held"]), directions(r["scores"][DEV[2]])
        ratio = f"{r['train_seconds'] / base['train_seconds']:.2f}" if base else "—"
        est = (r.get("estimate") or {}).get("seconds")
        print(f"{name:<12}{r['steps']:>6}{r['train_seconds']:>9.0f}{ratio:>8}{est or 0:>8.0f}"
              + (f"{r['max_rss_mb'] / 1024:>9.2f}" if r.get("max_rss_mb") else f"{'—':>9}") + f"{unseen[0]:>14.3f}{unseen[1]:>14.3f}{nt[0]:>11.3f}{nt[1]:>11.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
