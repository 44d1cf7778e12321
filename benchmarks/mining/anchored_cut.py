#!/usr/bin/env python3
"""The automatic cut anchored on held-out translations, as ``train bootstrap`` anchors it: which rule, on dev.

    python benchmarks/training/bootstrap_dev.py -o runs/bootstrap-dev --split dev --seeds 100  # the models, rounds kept
    python benchmarks/mining/anchored_cut.py runs/bootstrap-dev/seed-100/bootstrap \
        --data runs/bootstrap-dev/seed-100/data

``benchmarks/mining/mining_cut.py --known`` draws its known pairs among the *mined gold candidates*: pairs the model
already retrieves, the best case. Bootstrap's known pairs are held-out seed pairs, translations the model never
trained on — some of which it does not retrieve, and which then score low. Here, for each round's model of a
bootstrap run (``round-N/run/model``: the benchmark keeps them), the run's plain texts are mined once (every
one-to-one candidate, its runner-up, whether it is one of the hidden true pairs); the dev pairs the run scores on
(``eval.tsv``: in neither plain text nor the seed, never trained on) are scored in the same pool
(``MiningJob.known_margins``), and ``--draws`` times ``n`` of them (20: a 100-pair seed's held-out fifth; 60: a
300-pair seed's) are the known pairs. For each rule: the F1 points below the best cut over the draws (mean, 90th
percentile, max), and the precision of the kept candidates (mean, min, share of draws under 0.9 — bootstrap's
target for the pairs it keeps):

* ``unanchored``: ``--threshold auto`` alone (no draw changes it);
* ``all known, ¾``: every known pair, the cut ¾ of the way to the mixture's (the rule before this benchmark);
* ``all known, n/(n+20)``: every known pair, the weight the rule has now;
* ``retrieved, n/(n+20)``: the rule now — only the known pairs the model retrieves, that weight.

Candidates and known margins are cached in ``--cache`` (``runs/anchored-cut``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mining_cut import best_cut, f1_at  # noqa: E402  (the same F1 and best cut as the mining benchmark)


def pool(model: Path, data: Path, cache: Path) -> dict[str, np.ndarray]:
    """Every one-to-one candidate of the plain texts (score, runner-up, gold) and the eval pairs' known margins and
    retrieval, under ``model``; read from ``cache`` when mined before."""
    key = hashlib.sha1(f"{model.resolve()}|{data.resolve()}".encode()).hexdigest()[:12]
    path = cache / f"{key}.npz"
    if path.exists():
        return dict(np.load(path))
    from xlsent.mining.job import MineConfig, MiningJob
    from xlsent.mining.margin import select_from_candidates
    from xlsent.mining.tasks import load_candidates

    src = (data / "en.txt").read_text(encoding="utf-8").splitlines()
    tgt = (data / "ny.txt").read_text(encoding="utf-8").splitlines()
    truth = {(j["src"], j["tgt"]) for j in map(json.loads, (data / "truth.jsonl").read_text(encoding="utf-8")
                                                .splitlines())}
    ev = [line.split("\t") for line in (data / "eval.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    with tempfile.TemporaryDirectory(prefix="anchored-cut-") as tmp:
        job = MiningJob(tmp, src, tgt, str(model), MineConfig(threshold=None))
        job.run(show_progress=False)
        fwd, bwd = load_candidates(job.score_paths("fwd")), load_candidates(job.score_paths("bwd"))
        p = select_from_candidates(fwd, bwd, "max", None)
        enc = job.encoder.replace(normalize=True, show_progress=False, memo=False)
        known, retrieved = job.known_margins(enc.encode([a for a, _ in ev]), enc.encode([b for _, b in ev]))
        out = {"score": p.score.astype(np.float64), "decoy": np.maximum(fwd.second[p.src], bwd.second[p.tgt]),
               "gold": np.array([(a, b) in truth for a, b in zip(job.texts("src", p.src), job.texts("tgt", p.tgt))]),
               "n_gold": np.array(len(truth)), "known": known, "retrieved": retrieved}
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, **out)
    return out


RULES = ("all known, ¾", "all known, n/(n+20)", "retrieved, n/(n+20)")


def study(c: dict[str, np.ndarray], sizes: list[int], draws: int) -> dict:
    from xlsent.mining.threshold import anchored_threshold, auto_threshold

    score, decoy, gold, n_gold = c["score"], c["decoy"], c["gold"], int(c["n_gold"])
    known, retrieved = c["known"], c["retrieved"]
    _, best = best_cut(score, gold, n_gold)
    base = auto_threshold(score, decoy)
    f1, p, _ = f1_at(score, gold, n_gold, base.threshold)
    out = {"candidates": len(score), "best_f1": best, "retrieved_share": float(retrieved.mean()),
           "unanchored": {"gap": 100 * (best - f1), "precision": p}, "anchored": {}}
    rng = np.random.default_rng(0)
    for n in sizes:
        rows: dict[str, list] = {r: [] for r in RULES}
        for _ in range(draws):
            d = rng.choice(len(known), n, replace=False)
            for rule in RULES:
                k = known[d][retrieved[d]] if rule.startswith("retrieved") else known[d]
                cut = anchored_threshold(score, decoy, k, weight=0.75 if rule.endswith("¾") else None, base=base)
                f, prec, _ = f1_at(score, gold, n_gold, cut.threshold)
                rows[rule].append((100 * (best - f), prec))
        out["anchored"][n] = {
            rule: {"gap_mean": float(v[:, 0].mean()), "gap_p90": float(np.quantile(v[:, 0], 0.9)),
                   "gap_max": float(v[:, 0].max()), "precision_mean": float(v[:, 1].mean()),
                   "precision_min": float(v[:, 1].min()), "under_0.9": float((v[:, 1] < 0.9).mean())}
            for rule, v in ((r, np.array(x)) for r, x in rows.items())}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="bootstrap output folders (their round-N/run/model)")
    ap.add_argument("--data", type=Path, required=True, help="the benchmark's data folder of those runs")
    ap.add_argument("--known", default="20,60", help="known pairs a draw")
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--cache", type=Path, default=Path("runs/anchored-cut"))
    ap.add_argument("--json", type=Path, default=None, help="also write every figure here")
    a = ap.parse_args()
    sizes = [int(x) for x in a.known.split(",") if x]
    models = sorted(m for run in a.runs for m in run.glob("round-*/run/model"))
    if not models:
        raise SystemExit(f"no round-N/run/model under {', '.join(map(str, a.runs))} — run bootstrap_dev.py (it keeps every "
                         "round's model)")
    results = {}
    print("| model | rule | known | F1 points off the best: mean / p90 / max | precision: mean / min | draws "
          "under 0.9 |\n|---|---|---|---|---|---|")
    for m in models:
        r = study(pool(m, a.data, a.cache), sizes, a.draws)
        name = str(m.parent.parent.relative_to(m.parents[3]))
        results[name] = r
        print(f"| {name} | unanchored | – | {r['unanchored']['gap']:.1f} | {r['unanchored']['precision']:.3f} | – |")
        for n in sizes:
            for rule, v in r["anchored"][n].items():
                print(f"| {name} | {rule} | {n} | {v['gap_mean']:.1f} / {v['gap_p90']:.1f} / {v['gap_max']:.1f} | "
                      f"{v['precision_mean']:.3f} / {v['precision_min']:.3f} | {v['under_0.9']:.0%} |")
        print(f"| {name} | (known pairs retrieved: {r['retrieved_share']:.1%}; candidates {r['candidates']}, "
              f"best F1 {r['best_f1']:.3f}) | | | | |")
    if a.json:
        a.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
