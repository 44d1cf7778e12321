"""xlsent's task runner against MTEB itself, on the same offline tasks and model (issue 49 §2).

For each task, ``xlsent.evaluate_tasks`` and ``mteb.evaluate(SentenceTransformer(folder), tasks=mteb_tasks(…))``
score the same model; the script prints both main scores, their difference (the test suite requires ≤ 0.005)
and each side's wall time, then the wall time of the ``lite`` suite (a first look "in a few minutes on two CPU
cores").

    python benchmarks/cpu/mteb_agreement.py                       # e5-small, bible-en-ny:dev and udhr-dev
    python benchmarks/cpu/mteb_agreement.py --model runs/x/model --tasks retrieval:udhr-all:dev --no-lite

Needs ``pip install 'xlsent[mteb]'``.
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--tasks", default="retrieval:bible-en-ny:dev,retrieval:udhr-dev")
    ap.add_argument("--no-lite", action="store_true", help="skip timing the lite suite")
    args = ap.parse_args()

    import mteb
    from sentence_transformers import SentenceTransformer

    import xlsent
    from xlsent.evaluation.tasks import mteb_tasks
    from xlsent.models.registry import resolve_model_path

    names = args.tasks.split(",")
    t0 = time.perf_counter()
    ours = {r.declaration.mteb_name: r for r in xlsent.evaluate_tasks(args.model, names)}
    t_ours = time.perf_counter() - t0
    folder = resolve_model_path(args.model)
    t0 = time.perf_counter()
    result = mteb.evaluate(SentenceTransformer(str(folder), device="cpu"), tasks=mteb_tasks(names), cache=None,
                           show_progress_bar=False)
    t_theirs = time.perf_counter() - t0
    print(f"model {args.model}; xlsent {t_ours:.0f} s (with bootstrap CIs and P@k both ways), MTEB {t_theirs:.0f} s")
    # MTEB's main score for the type (BitextMining: f1) against the figure xlsent writes under that name (the rows'
    # main_score in MTEB's format); xlsent's own main score (retrieval: P@1, both directions) beside it
    print(f"{'task':40} {'xlsent':>8} {'MTEB':>8} {'diff':>8}  subsets  xlsent main score")
    for r in result.task_results:
        mine = ours[r.task_name]
        theirs_name = sum(row["main_score"] for row in mine.scores) / len(mine.scores)
        print(f"{mine.task:40} {theirs_name:8.4f} {r.get_score():8.4f} {theirs_name - r.get_score():+8.4f}"
              f"  {len(mine.scores):7d}  {mine.main_score_name} {mine.main_score:.4f}")
    if not args.no_lite:
        t0 = time.perf_counter()
        runs = xlsent.evaluate_tasks(args.model, "lite")
        print(f"lite suite: {time.perf_counter() - t0:.0f} s for {len(runs)} tasks: "
              + ", ".join(f"{r.task} {r.main_score_name} {r.main_score:.4f}" for r in runs))


if __name__ == "__main__":
    main()
