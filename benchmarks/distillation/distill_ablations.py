#!/usr/bin/env python3
"""Paper-001 ablations (Ding et al. 2022, Tables 3–6) on English–Chichewa, at an equal reduced CPU budget.

    python benchmarks/distillation/distill_ablations.py --output DIR [--reference RUN] [--only NAME ...]
                                           [--stage3-steps 100] [--stage4-steps 60] [--eval-sample 500]

Every variant is ``xlsent train multistage --preset compress`` (self-distillation of e5-small:
B = 128 bottleneck, |RU| = 6, one pass) with stage 3 and stage 4 cut to the same small number
of steps, so the variants differ only in the switch named. Finished stages are shared: a
variant's folder starts as a copy of the reference variant's stages, and the recipe re-trains
exactly the stages whose config hash changed. ``--reference RUN`` (a finished
``--preset compress`` run) lends its stage-2 embedding, which these budgets leave unchanged.

Variants (the paper's ablations):

* ``w/o MCL`` — ``mcl.variant=off``: stage 4 without the MCL term. Everything else is the
  reference's, so stage 4 still has the KD MSE **and** xlsent's in-batch InfoNCE
  (``mcl.infonce_weight: 1`` of the compress preset), and stages 2–3 are the reference's own
  (shared). It is the paper's "w/o MCL" plus that InfoNCE term. With the assistant used as given
  (no stage 1), the paper's "single-stage, pre-distillation" baseline is the same run.
* ``single-stage`` — ``stages.mode=single-random``: no stages 2–3 at all; a randomly initialised
  bottleneck (fresh positions) on the assistant's first M layers is trained by stage 4 alone for
  as many steps as the reference's stages 3 + 4 together, with the KD MSE and the same in-batch
  InfoNCE (the mode turns MCL off). It therefore starts from a different state than every other
  variant (no trained stage-2 embedding) — that difference is the ablation (Table 6 "single-stage").
* ``Rec. (|RU| 3 × 2)`` vs ``w/o Rec. (|RU| 3 × 1)`` — the paper's recurrence ablation: the
  same three unique layers run twice or once (Tables 3–4 "w/o Rec.").
* ``stage-3 MSE only`` — the paper's stage-3 loss instead of xlsent's MSE + in-batch InfoNCE.
* ``MCL bool`` / ``MCL ce`` — Table 5's MCL variants.

Variants run in this order; ``--only`` picks some (a variant starts from another's stages
only when that one has run). Each student is scored on the held-out New-Testament pool (P@1 both directions, cosine, 95%
bootstrap CIs; triplet accuracy). Results: ``DIR/<variant>/metrics.json`` and
``DIR/ablations.json``; a summary table is printed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # _ablation, in benchmarks/

from _ablation import slug, xlsent  # noqa: E402

STAGE_DIRS = ("stage2-embedding", "stage3-recurrence", "stage4-mcl")


REFERENCE = "reference (multi-stage, MCL soft)"


def variants(s3: int, s4: int) -> list[tuple[str, list[str], str | None]]:
    """(name, --set overrides, the variant whose finished stages it starts from)."""
    return [
        (REFERENCE, [], None),
        ("w/o MCL", ["mcl.variant=off"], REFERENCE),
        ("single-stage", ["stages.mode=single-random", f"stage4.max_steps={s3 + s4}"], None),
        ("Rec. (|RU| 3 x 2)", ["models.student.ru_layers=3", "models.student.repeats=2"], None),
        ("w/o Rec. (|RU| 3 x 1)", ["models.student.ru_layers=3", "models.student.repeats=1"], "Rec. (|RU| 3 x 2)"),
        ("stage-3 MSE only (Eq. 4)", ["stage3.loss=mse"], REFERENCE),
        ("MCL bool", ["mcl.variant=bool"], REFERENCE),
        ("MCL ce", ["mcl.variant=ce"], REFERENCE),
    ]


def seed_stages(src: Path, dst: Path) -> None:
    """Copy ``src``'s finished stages into a new variant folder (the recipe re-checks their hashes)."""
    dst.mkdir(parents=True, exist_ok=True)
    for stage in STAGE_DIRS:
        if (src / stage / "stage.json").exists() and not (dst / stage).exists():
            shutil.copytree(src / stage, dst / stage)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--output", required=True, type=Path)
    ap.add_argument("--reference", type=Path, default=None, help="a finished --preset compress run (lends stage 2)")
    ap.add_argument("--only", nargs="*", default=None, help="variant names to run (default: all)")
    ap.add_argument("--stage3-steps", type=int, default=100)
    ap.add_argument("--stage4-steps", type=int, default=60)
    ap.add_argument("--eval-sample", type=int, default=500)
    args = ap.parse_args()
    common = [f"stage3.max_steps={args.stage3_steps}", f"stage4.max_steps={args.stage4_steps}",
              f"eval.sample={args.eval_sample}", "eval.udhr=false", "eval.each_stage=false", "eval.base=false"]
    summary_file = args.output / "ablations.json"
    summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    for name, sets, start in variants(args.stage3_steps, args.stage4_steps):
        if args.only and name not in args.only:
            continue
        out = args.output / slug(name)
        if name == REFERENCE and args.reference is not None and not out.exists():
            seed_stages(args.reference, out)
            shutil.rmtree(out / "stage3-recurrence", ignore_errors=True)  # other budget: retrain
            shutil.rmtree(out / "stage4-mcl", ignore_errors=True)
        elif start is not None and (args.output / slug(start)).exists():
            seed_stages(args.output / slug(start), out)
        xlsent("train", "multistage", "--preset", "compress", "-o", str(out), *[x for s in common + sets for x in ("--set", s)])
        metrics = json.loads((out / "metrics.json").read_text())
        summary[name] = {"sets": sets, "student": metrics["models"]["student"],
                         "stages": metrics.get("stages", {}), "sizes": metrics.get("sizes", {})}
        summary_file.write_text(json.dumps(summary, indent=1))
    print(f"\nablations at stage 3 = {args.stage3_steps} steps, stage 4 = {args.stage4_steps} steps "
          f"(NT pool of {args.eval_sample} pairs):")
    for name, r in summary.items():
        m = r["student"]
        ret = m["retrieval"]
        ci = ret["tgt2src"]["ci95"]["p@1"]
        print(f"{name:36s} ny→en {ret['tgt2src']['p@1']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]  "
              f"en→ny {ret['src2tgt']['p@1']:.3f}  triplet {m['triplets']['accuracy']['cosine']['accuracy']:.3f}")


if __name__ == "__main__":
    main()
