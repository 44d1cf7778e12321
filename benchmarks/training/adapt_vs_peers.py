#!/usr/bin/env python3
"""``xlsent train adapt`` against what a user would otherwise run, on pairs of the size a user has.

    python benchmarks/training/adapt_vs_peers.py -o runs/adapt-peers [--sizes 500,1000,3000]
        [--systems base,st,siamese,triplet-kd,adapt] [--dev] [--set KEY=VALUE …] [--tag NAME]

For each size N, N pairs are drawn (seed 0, after cleaning) from the training split and every system trains
on exactly those pairs, each in its own process, timed by ``/usr/bin/time`` (CPU = user + system seconds,
wall, peak RSS) with an empty xlsent cache (teacher vectors and encoder features are computed inside the
timed run):

* ``base``  — multilingual-e5-small, untrained;
* ``st``    — sentence-transformers' standard recipe as its documentation shows it (MNRL, 1 epoch, batch 32,
  lr 2e-5, every parameter trained; ``benchmarks/training/st_standard_recipe.py``);
* ``siamese``, ``triplet-kd`` — those recipes' shipped defaults on the same pairs;
* ``adapt`` — ``xlsent train adapt`` with its defaults (+ ``--set`` overrides; ``--tag`` names the variant).

Then every model is scored in this process, the same way: P@1 both ways on 1,000 held-out pairs of the
trained language (tie-aware cosine; the Bible's New Testament), and the mean P@1 both ways over every other
UDHR language (forgetting: the trained language's own UDHR pool is left out of the mean).

``--dev`` chooses settings without touching the test sets: training pairs from ``bible-en-ny:dev-train``,
scored on ``bible-en-ny:dev`` and ``udhr-dev``. Finished runs and scores are reused (``OUT/results.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SYSTEMS = ("base", "st", "siamese", "triplet-kd", "adapt")


def sample_file(out: Path, train: str, n: int) -> Path:
    """N cleaned pairs of ``train`` (seed 0) as JSONL with their book and chapter (triplet-kd's negatives)."""
    from xlsent.data.sets.pairs import load_pairs

    path = out / f"pairs-{n}.jsonl"
    if not path.exists():
        ds = load_pairs(train, sample=n, seed=0).dataset
        keep = [c for c in ("src", "tgt", "src_lang", "tgt_lang", "book", "chapter") if c in ds.column_names]
        path.write_text("".join(json.dumps({c: r[c] for c in keep}, ensure_ascii=False) + "\n" for r in ds),
                        encoding="utf-8")
    return path


def fresh_cache(run: Path) -> dict:
    """An empty xlsent cache for one timed run, the prepared models linked in (nothing else carried over)."""
    from xlsent.utils.io import cache_dir

    cache = run / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    if not (cache / "models").exists():
        (cache / "models").symlink_to(cache_dir() / "models")
    return {**os.environ, "XLSENT_CACHE_DIR": str(cache)}


def timed(cmd: list[str], run: Path) -> dict:
    """Run ``cmd`` under /usr/bin/time; CPU seconds, wall seconds, peak RSS (MiB)."""
    stats = run / "time.txt"
    with open(run / "log.txt", "w") as log:
        rc = subprocess.call(["/usr/bin/time", "-f", "%e %U %S %M", "-o", str(stats), *cmd], stdout=log,
                             stderr=subprocess.STDOUT, env=fresh_cache(run))
    if rc:
        sys.exit(f"{' '.join(cmd)} failed (exit {rc}); see {run / 'log.txt'}")
    wall, user, system, rss = stats.read_text().split()[-4:]
    return {"wall_s": float(wall), "cpu_s": float(user) + float(system), "peak_mib": int(rss) / 1024}


def train(system: str, pairs: Path, run: Path, sets: list[str]) -> Path:
    from xlsent.models.registry import resolve_model_path

    model = run / "model"
    if system == "st":
        cmd = [sys.executable, str(HERE / "st_standard_recipe.py"), str(resolve_model_path("e5-small")), str(pairs),
               str(run)]
    else:
        cmd = [sys.executable, "-m", "xlsent", "train", system, "-o", str(run), "--no-eval",
               "--set", f"train.pairs={pairs}", "--set", "train.sample=0", "--set", "train.min_words=0",
               *[x for s in (sets if system == "adapt" else []) for x in ("--set", s)]]
    done = run / "timing.json"
    if not done.exists():
        run.mkdir(parents=True, exist_ok=True)
        done.write_text(json.dumps(timed(cmd, run)))
    return model


def score(model: str, test: str, udhr: str, trained_lang: str) -> dict:
    from xlsent.data.sets.bundled import load_bundled, split_by_language
    from xlsent.data.sets.pairs import load_pairs
    from xlsent.encoding.encoder import Encoder
    from xlsent.evaluation.retrieval import evaluate_many, evaluate_retrieval, mean_row

    enc = Encoder.load(model)
    held = load_pairs(test, dedupe=False, sample=1000, seed=0).dataset
    r = evaluate_retrieval(list(held["src"]), list(held["tgt"]), enc, n_resamples=1000)
    pools = {k: (list(p["src"]), list(p["tgt"]), p["src_lang"][0], p["tgt_lang"][0])
             for k, p in split_by_language(load_bundled(udhr)).items() if p["tgt_lang"][0] != trained_lang}
    u = mean_row(evaluate_many(pools, enc, model, "cosine", 1000, 0, 4, udhr))
    return {"xx2en": r.tgt2src["p@1"], "en2xx": r.src2tgt["p@1"],
            "xx2en_ci": r.tgt2src["ci95"]["p@1"], "en2xx_ci": r.src2tgt["ci95"]["p@1"],
            "others_xx2en": u["tgt2src"]["p@1"], "others_en2xx": u["src2tgt"]["p@1"], "other_languages": len(pools)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--sizes", default="500,1000,3000")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--dev", action="store_true", help="train on dev-train, score on bible-en-ny:dev and udhr-dev")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="override for adapt (repeatable)")
    ap.add_argument("--tag", default="", help="name of the adapt variant (with --set)")
    a = ap.parse_args()
    systems = [s for s in a.systems.split(",") if s]
    bad = [s for s in systems if s not in SYSTEMS]
    if bad:
        sys.exit(f"--systems: unknown {', '.join(bad)}; use some of {', '.join(SYSTEMS)}")
    if a.sets and not a.tag:
        sys.exit("--set changes adapt: name the variant with --tag NAME")
    sizes = [int(x) for x in a.sizes.split(",")]
    train_set, test, udhr = (("bible-en-ny:dev-train", "bible-en-ny:dev", "udhr-dev") if a.dev
                             else ("bible-en-ny:train", "bible-en-ny:test", "udhr"))
    out = a.output
    out.mkdir(parents=True, exist_ok=True)
    res_path = out / "results.json"
    results = json.loads(res_path.read_text()) if res_path.exists() else {}
    from xlsent.models.registry import resolve_model_path

    resolve_model_path("e5-small")  # prepared once, outside the timed runs
    for n in sizes:
        pairs = sample_file(out, train_set, n)
        for system in systems:
            name = f"adapt-{a.tag}" if system == "adapt" and a.tag else system
            key = f"{name}@{n}"
            if key in results:
                continue
            if system == "base":
                row = {"model": "e5-small"}
                base_key = next((k for k in results if k.startswith("base@")), None)
                row.update({k: v for k, v in results[base_key].items() if k != "n"} if base_key else
                           score("e5-small", test, udhr, "nya"))
            else:
                run = out / f"{name}-{n}"
                model = train(system, pairs, run, a.sets)
                row = {"model": str(model), **json.loads((run / "timing.json").read_text()),
                       **score(str(model), test, udhr, "nya")}
            row["n"] = n
            results[key] = row
            res_path.write_text(json.dumps(results, indent=1))
            print(key, json.dumps(row), flush=True)
    print_table(results, test, udhr)


def print_table(results: dict, test: str, udhr: str) -> None:
    print(f"\nP@1 on {test} (1,000 pairs) and the mean over the other {udhr} languages; CPU = user + system s")
    print(f"{'system':<22}{'N':>6}{'ny→en':>8}{'en→ny':>8}{'oth xx→en':>11}{'oth en→xx':>11}{'CPU s':>8}"
          f"{'× st':>7}{'wall s':>8}{'peak MiB':>10}")
    for key, r in sorted(results.items(), key=lambda kv: (kv[1]["n"], kv[0])):
        st = results.get(f"st@{r['n']}")
        ratio = f"{r['cpu_s'] / st['cpu_s']:.2f}" if st and "cpu_s" in r else ""
        print(f"{key.split('@')[0]:<22}{r['n']:>6}{r['xx2en']:>8.3f}{r['en2xx']:>8.3f}{r['others_xx2en']:>11.3f}"
              f"{r['others_en2xx']:>11.3f}{r.get('cpu_s', 0):>8.0f}{ratio:>7}{r.get('wall_s', 0):>8.0f}"
              f"{r.get('peak_mib', 0):>10.0f}")


if __name__ == "__main__":
    main()
