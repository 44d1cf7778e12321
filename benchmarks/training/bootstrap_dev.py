#!/usr/bin/env python3
"""From a few pairs and plain text (issue 76): ``xlsent train bootstrap`` against adapt on the seed alone and adapt
on the seed plus every true pair hidden in the plain text.

    python benchmarks/training/bootstrap_dev.py -o runs/bootstrap-dev --split dev --seeds 100,300      # choosing
    python benchmarks/training/bootstrap_dev.py -o runs/bootstrap-test --split test --seeds 100,300    # read once
    python benchmarks/training/bootstrap_dev.py -o runs/bootstrap-dsrt --split dev --seeds 100 --script Dsrt
        [--lines 5000] [--hidden 2500] [--runs floor,ceiling,bootstrap] [--set KEY=VALUE …] [--boot-arg ARG …]

The data (a **substitute** for a user's: built from the bundled sets, seeded):

* pairs drawn from ``bible-en-ny:dev-train`` (``--split dev``) or ``bible-en-ny:train`` (``--split test``); the
  first ``--seeds`` of them are the seed (English first, the language of ``--src-texts``);
* the plain text, ``--lines`` a side: ``--hidden`` true pairs split over the two sides (each side its half, shuffled
  apart); unrelated verses (the English of some verses, the Chichewa of others: no translation of each other); and
  the UDHR in English on the English side with its translations into five neighbouring Bantu languages on the
  Chichewa side (dev: Yao, Tonga, Shona, Chokwe, Makhuwa; test: Bemba, Lozi, Makonde, Nyankore, Umbundu — each
  ``udhr-all`` language of the split) — true translations into the wrong language, the crawl's main noise;
* scored on ``bible-en-ny:dev`` (``:test`` for the test split): tie-aware cosine P@1 over the whole pool, both ways.

With ``--script Dsrt`` (or ``Shaw``) every Chichewa text — the seed, the plain text and the scored pool — is written
by sound in Deseret (Shavian), a **substitute** for a script e5-small cannot read
(:func:`xlsent.data.text.transliterate.by_sound`), and every run starts from e5-small romanised as the guide says
(``xlsent models romanize e5-small --texts NY.txt``, on the plain text's Chichewa side).

Runs, each in its own process (reused when finished):

* ``floor`` — ``xlsent train adapt SEED --set train.holdout=0`` (the seed alone, all of it, the last step);
* ``ceiling`` — the same on the seed plus every hidden true pair (what a perfect miner would give);
* ``bootstrap`` — ``xlsent train bootstrap SEED --src-texts EN --tgt-texts NY`` with its defaults (timed whole;
  ``--keep-rounds``, so that every round's model is scored).

Printed: P@1 each way for each run, the share of the floor-to-ceiling gap the bootstrap closes each way, the
precision of the pairs each round kept (a kept pair is right when it is a hidden true pair), every round's model's
P@1 (whether the stop rule chose well), and the wall time.
Results: ``OUT/results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

SPLITS = {"dev": ("bible-en-ny:dev-train", "bible-en-ny:dev", ("yao", "toi", "sna", "cjk", "vmw")),
          "test": ("bible-en-ny:train", "bible-en-ny:test", ("bem", "loz", "kde", "nyn", "umb"))}


def build(out: Path, split: str, seed_n: int, lines: int, hidden: int, seed: int = 0, script: str = "") -> dict:
    """The seed file, the two plain texts, the hidden true pairs (``truth.jsonl``) and the scored pool
    (``eval.tsv``) in ``out``; with ``script``, the Chichewa side written by sound in it."""
    from xlsent.data.sets.bundled import load_bundled
    from xlsent.data.sets.pairs import load_pairs
    from xlsent.data.text.transliterate import by_sound

    out.mkdir(parents=True, exist_ok=True)
    if (out / "data.json").exists() and (out / "eval.tsv").exists():
        return json.loads((out / "data.json").read_text())
    train_name, _, neighbours = SPLITS[split]
    ds = load_pairs(train_name).dataset
    en_first = ds["src_lang"][0] in ("eng", "en") if "src_lang" in ds.column_names else True
    pairs = [(a, b) if en_first else (b, a) for a, b in zip(ds["src"], ds["tgt"])]
    pairs = list(dict.fromkeys(pairs))
    rng = random.Random(seed)
    rng.shuffle(pairs)
    udhr = load_bundled("udhr-all")
    wrong = [(r["src"], r["tgt"]) for r in udhr if r["tgt_lang"] in neighbours and r["split"] == split]
    udhr_en = list(dict.fromkeys(a for a, _ in wrong))
    udhr_xx = list(dict.fromkeys(b for _, b in wrong))
    if script:  # the Chichewa side in a script the model cannot read (the neighbours' text too: a crawl's is)
        pairs = [(a, by_sound(b, script)) for a, b in pairs]
        wrong = [(a, by_sound(b, script)) for a, b in wrong]
        udhr_xx = [by_sound(b, script) for b in udhr_xx]
    ev = load_pairs(SPLITS[split][1]).dataset
    with open(out / "eval.tsv", "w", encoding="utf-8") as f:
        f.write("eng\tnya\n")
        for a, b in zip(ev["src"], ev["tgt"]):
            f.write(f"{a}\t{by_sound(b, script) if script else b}\n")
    seed_pairs = pairs[:seed_n]
    true = pairs[seed_n:seed_n + hidden]
    rest = pairs[seed_n + hidden:]
    n_en = lines - hidden - len(udhr_en)
    n_xx = lines - hidden - len(udhr_xx)
    en = [a for a, _ in true] + [a for a, _ in rest[:n_en]] + udhr_en
    xx = [b for _, b in true] + [b for _, b in rest[n_en:n_en + n_xx]] + udhr_xx
    rng.shuffle(en)
    rng.shuffle(xx)
    (out / "seed.tsv").write_text("eng\tnya\n" + "".join(f"{a}\t{b}\n" for a, b in seed_pairs), encoding="utf-8")
    (out / "en.txt").write_text("\n".join(en) + "\n", encoding="utf-8")
    (out / "ny.txt").write_text("\n".join(xx) + "\n", encoding="utf-8")
    (out / "ceiling.tsv").write_text("eng\tnya\n" + "".join(f"{a}\t{b}\n" for a, b in seed_pairs + true),
                                     encoding="utf-8")
    with open(out / "truth.jsonl", "w", encoding="utf-8") as f:
        for a, b in true:
            f.write(json.dumps({"src": a, "tgt": b}, ensure_ascii=False) + "\n")
    info = {"seed": len(seed_pairs), "hidden_true": len(true), "en_lines": len(en), "ny_lines": len(xx),
            "neighbour_lines": len(udhr_xx), "udhr_en_lines": len(udhr_en), "neighbours": list(neighbours),
            "unrelated": {"en": n_en, "ny": n_xx}}
    (out / "data.json").write_text(json.dumps(info, indent=1))
    return info


def xlsent_cli(*args: str, log: Path) -> float:
    t = time.perf_counter()
    with open(log, "a", encoding="utf-8") as f:
        rc = subprocess.call([sys.executable, "-m", "xlsent", *args], stdout=f, stderr=subprocess.STDOUT,
                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
    if rc:
        sys.exit(f"failed (rc {rc}): xlsent {' '.join(args)} — see {log}")
    return time.perf_counter() - t


def score(model: str, pool: Path) -> dict:
    import xlsent

    r = xlsent.evaluate(model, "retrieval", pairs=str(pool), beside=False).results[0]
    return {"xx→en": r.tgt2src["p@1"], "en→xx": r.src2tgt["p@1"], "n": r.n}


def precision(folder: Path, truth: set) -> list[dict]:
    rec = json.loads((folder / "bootstrap.json").read_text())
    out = []
    for r in rec["rounds"]:
        kept = [line.split("\t") for line in (folder / f"round-{r['round']}" / "pairs.tsv").read_text(
            encoding="utf-8").splitlines() if line]
        right = sum((s, t) in truth for _, s, t in kept)
        out.append({"round": r["round"], "kept": len(kept), "true": right,
                    "precision": right / len(kept) if kept else None, "recall": right / len(truth),
                    "held_out_p_at_1": r["held_out"]["p_at_1"], "counts": r["counts"]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", required=True, type=Path)
    ap.add_argument("--split", choices=sorted(SPLITS), default="dev")
    ap.add_argument("--seeds", default="100,300", help="seed sizes, comma-separated")
    ap.add_argument("--lines", type=int, default=5000, help="plain lines a side")
    ap.add_argument("--hidden", type=int, default=2500, help="true pairs hidden in the plain text")
    ap.add_argument("--runs", default="floor,ceiling,bootstrap")
    ap.add_argument("--set", action="append", default=[], help="adapt override for every run (KEY=VALUE)")
    ap.add_argument("--boot-arg", action="append", default=[], help="an extra argument of xlsent train bootstrap "
                    "(e.g. --boot-arg=--start=last); its runs go to a folder named after them")
    ap.add_argument("--script", default="", choices=["", "Dsrt", "Shaw"], help="the Chichewa side by sound in this "
                    "script (a substitute for one the model cannot read); every run starts from e5-small romanised")
    ap.add_argument("--tag", default="", help="name of the bootstrap run's folder (default: from --boot-arg)")
    a = ap.parse_args()
    runs = a.runs.split(",")
    sets = [x for s in a.set for x in ("--set", s)]
    results_path = a.output / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    for n in (int(x) for x in a.seeds.split(",")):
        folder = a.output / f"seed-{n}"
        info = build(folder / "data", a.split, n, a.lines, a.hidden, script=a.script)
        res = results.setdefault(str(n), {"data": info})
        log = folder / "log.txt"
        eval_set = folder / "data" / "eval.tsv"
        if a.script:  # e5-small romanised on the plain text's Chichewa side, the base of every run
            base = folder / "e5-romanized"
            if not (base / "xlsent_romanization.json").exists():
                xlsent_cli("models", "romanize", "e5-small", "--texts", str(folder / "data" / "ny.txt"), "-o",
                           str(base), log=log)
            sets = [*sets, "--set", f"models.student={base}"]
        truth = {(json.loads(x)["src"], json.loads(x)["tgt"]) for x in
                 (folder / "data" / "truth.jsonl").read_text(encoding="utf-8").splitlines()}
        for run in runs:
            tag = a.tag or ("bootstrap" + "".join(x.replace("--", "_").replace("=", "-") for x in a.boot_arg)
                            + "".join("_" + s.replace("=", "-") for s in a.set))
            name = tag if run == "bootstrap" else run + "".join("_" + s.replace("=", "-") for s in a.set)
            run_dir = folder / name
            if name in res and "score" in res[name]:
                for r in res[name].get("rounds", []):  # a run from before the rounds were scored
                    if "score" not in r:
                        r["score"] = score(str(run_dir / f"round-{r['round']}" / "run" / "model"), eval_set)
                continue
            if run == "bootstrap":
                secs = xlsent_cli("train", "bootstrap", str(folder / "data" / "seed.tsv"), "--src-texts",
                                  str(folder / "data" / "en.txt"), "--tgt-texts", str(folder / "data" / "ny.txt"),
                                  "-o", str(run_dir), "--keep-rounds", *sets, *a.boot_arg, log=log)
                entry = {"seconds": secs, "rounds": precision(run_dir, truth)}
                for r in entry["rounds"]:  # every round's model on the dev pool: did the stop rule pick well?
                    r["score"] = score(str(run_dir / f"round-{r['round']}" / "run" / "model"), eval_set)
            else:
                data = folder / "data" / ("seed.tsv" if run == "floor" else "ceiling.tsv")
                secs = xlsent_cli("train", "adapt", str(data), "-o", str(run_dir), "--no-eval",
                                  "--set", "train.holdout=0", "--set", "eval.pairs=bible-en-ny:dev", *sets, log=log)
                entry = {"seconds": secs}
            entry["score"] = score(str(run_dir / "model"), eval_set)
            res[name] = entry
            results_path.write_text(json.dumps(results, indent=1, ensure_ascii=False))
            print(f"seed {n} {name}: {entry['score']} in {secs / 60:.1f} min", flush=True)
        for name, entry in res.items():
            if not name.startswith("bootstrap") or "score" not in entry or "floor" not in res or "ceiling" not in res:
                continue
            closed = {d: (entry["score"][d] - res["floor"]["score"][d]) /
                      max(1e-9, res["ceiling"]["score"][d] - res["floor"]["score"][d]) for d in ("xx→en", "en→xx")}
            entry["gap_closed"] = closed
            print(f"seed {n} {name}: floor {res['floor']['score']} ceiling {res['ceiling']['score']} → "
                  f"gap closed xx→en {closed['xx→en']:.0%}, en→xx {closed['en→xx']:.0%}; "
                  f"{entry['seconds'] / 60:.1f} min; kept-pair precision by round "
                  + ", ".join(f"{r['round']}: {r['precision'] if r['precision'] is None else round(r['precision'], 3)}"
                              f" ({r['kept']})" for r in entry["rounds"])
                  + "; each round's model: " + ", ".join(
                      f"{r['round']}: {r['score']['xx→en']:.3f}/{r['score']['en→xx']:.3f}" for r in entry["rounds"]
                      if "score" in r))
        results_path.write_text(json.dumps(results, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
