#!/usr/bin/env python3
"""A script the model cannot read, at a user's size (issue 62 §2): adapt, extend-vocab + adapt, romanise + adapt,
against adapt on the Latin original — on **substitutes**: Chichewa written by sound in Deseret and in Shavian.

    python benchmarks/unreadable_script/romanize.py -o runs/romanize-dev --split dev --train 500
        [--scripts Dsrt,Shaw,Dsrt-pua] [--runs base,latin,romanize,adapt,extend,both,mlm] [--mono 2000]
        [--set KEY=VALUE …]

The substitutes (:func:`xlsent.data.text.transliterate.by_sound`) write each Chichewa sound as the script's letter for
the nearest English sound, so that romanising gives back an approximate Latin spelling, as a real script's does
(Deseret merges i into e, Shavian doubles the long vowels); e5-small reads neither script (every letter ``<unk>``).
``Dsrt-pua`` is the Deseret text with its five vowel letters (and their capitals) moved to the private-use plane
(U+F0000…), where a script not yet in Unicode lives in its users' fonts (XLM-R's vocabulary holds 202 characters of
the BMP's private-use area, none of that plane's): no romaniser knows them, so romanising leaves the vowels
``<unk>`` and ``both`` (romanise, then extend what is left) has something to extend. Every figure
is on a substitute, not on a real language.

Data (:data:`extend_vocab.SPLITS`): ``--train`` pairs drawn (seed 0) from ``bible-en-ny:dev-train`` (``--split
dev``, for choosing) or ``bible-en-ny:train`` (``--split test``, read once), the test pool ``--test`` pairs drawn
(seed 0) from ``bible-en-ny:dev`` or ``bible-en-ny:test``. Runs, each ``xlsent train adapt`` with its defaults in
its own process with ``--no-eval`` (reused when finished), per script:

* ``base`` — e5-small as it is, and romanised untrained (``xlsent models romanize e5-small --texts <the
  training pairs' Chichewa side>``);
* ``adapt`` — e5-small adapted to the pairs in the script;
* ``extend`` — ``xlsent models extend-vocab`` (``--pieces``) then adapt (the added rows at 300× the learning rate);
* ``romanize`` — ``xlsent models romanize`` then adapt;
* ``both`` — ``xlsent models romanize --extend [--pieces N]`` then adapt (the added rows at 300×), for each N of
  ``--both-pieces`` (``default``: no ``--pieces``, one piece a character left; a number: the characters left
  first, then longer pieces learnt from the romanised text); on Deseret
  and Shavian nothing is left to extend, so it is ``romanize``: run it on ``Dsrt-pua``;
* ``mlm`` — the MLM stage (``benchmarks/unreadable_script/mlm_stage.py``, ``--train`` from ``--mlm-train``, its other
  defaults) on ``--mono`` monolingual lines, then adapt, from the romanised and from the extended model: whether the
  stage adds to either path;
* ``latin`` — adapt on the Latin original: what the substitute aims at.

The monolingual lines are the Chichewa side of ``--mono`` pairs drawn (seed 1) from the training split (the user's
text beyond the pairs; they may include the training pairs' own side), in the script.

Scored with :func:`xlsent.evaluate` (tie-aware cosine P@1 over the whole pool, both ways); ``xx→en``: a Chichewa
query finds its English verse. The ratio to the Latin original is printed per run. ``OUT/results.json`` keeps
every figure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # extend_vocab, beside this file

# the same runs and scoring as extend-vocab's
from extend_vocab import SPLITS, adapt, draw, run, score, write_pairs  # noqa: E402

SCRIPTS = {"Dsrt": "Deseret", "Shaw": "Shavian", "Dsrt-pua": "Deseret, private-use vowels"}
RUNS = ("base", "latin", "romanize", "adapt", "extend", "both", "mlm")


def written(text: str, script: str) -> str:
    """A Chichewa text in the substitute ``script`` (``Dsrt-pua``: Deseret by sound, its vowels in U+F0000…)."""
    from xlsent.data.text.transliterate import by_sound

    if script != "Dsrt-pua":
        return by_sound(text, script)
    vowels = {by_sound(v, "Dsrt"): chr(0xF0000 + i) for i, v in enumerate("aeiouAEIOU")}
    return "".join(vowels.get(ch, ch) for ch in by_sound(text, "Dsrt"))


def data(out: Path, n_train: int, n_test: int, split: str, scripts: list[str], n_mono: int) -> dict:
    folder = out / "data"
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    train_name, test_name = SPLITS[split]
    for part, name, n in (("train", train_name, n_train), ("test", test_name, n_test)):
        english, ny = draw(name, n)
        files[f"{part}-latin"] = write_pairs(folder / f"{part}-latin.tsv", english, ny)
        for s in scripts:
            side = [written(t, s) for t in ny]
            files[f"{part}-{s}"] = write_pairs(folder / f"{part}-{s}.tsv", english, side)
            if part == "train":
                files[f"texts-{s}"] = folder / f"train-{s}.txt"
                files[f"texts-{s}"].write_text("".join(t + "\n" for t in side), encoding="utf-8")
    if n_mono:
        ny = draw(train_name, n_mono, seed=1)[1]
        for s in scripts:
            files[f"mono-{s}"] = folder / f"mono-{s}.txt"
            files[f"mono-{s}"].write_text("".join(written(t, s) + "\n" for t in ny), encoding="utf-8")
    return files


def built(out: Path, name: str, command: list[str], record: str) -> Path:
    """A model folder made by an xlsent command (reused when its record is there)."""
    folder = out / name
    if not (folder / record).exists():
        seconds = run([sys.executable, "-m", "xlsent", *command, "-o", str(folder), "--json"], out / f"{name}-log.txt")
        print(f"{name}: {seconds:.0f} s", flush=True)
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", required=True, type=Path)
    ap.add_argument("--train", type=int, default=1000, help="training pairs")
    ap.add_argument("--test", type=int, default=500, help="test pairs")
    ap.add_argument("--split", choices=sorted(SPLITS), default="dev")
    ap.add_argument("--scripts", default="Dsrt,Shaw")
    ap.add_argument("--pieces", type=int, default=2000, help="extend-vocab --pieces")
    ap.add_argument("--both-pieces", default="default", type=lambda v: [x.strip() for x in v.split(",")],
                    help="romanize --extend --pieces for the both runs, e.g. default,2000 (default: no --pieces, "
                         "one piece a character left — on Dsrt-pua the ten private-use vowels, so 10 is the same)")
    ap.add_argument("--mono", type=int, default=2000, help="monolingual lines for the mlm runs")
    ap.add_argument("--mlm-train", choices=("rows", "all"), default="rows",
                    help="the MLM stage's --train: the token table only, or the whole encoder")
    ap.add_argument("--runs", default="base,latin,romanize,adapt,extend")
    ap.add_argument("--set", action="append", default=[], help="extra adapt override for every run")
    a = ap.parse_args()
    scripts = [s.strip() for s in a.scripts.split(",")]
    if any(s not in SCRIPTS for s in scripts):
        sys.exit(f"--scripts: choose from {', '.join(SCRIPTS)}")
    order = [r.strip() for r in a.runs.split(",")]
    if any(r not in RUNS for r in order):
        sys.exit(f"--runs: choose from {','.join(RUNS)}")
    out = a.output
    out.mkdir(parents=True, exist_ok=True)
    files = data(out, a.train, a.test, a.split, scripts, a.mono if "mlm" in order else 0)
    res_path = out / "results.json"
    results = json.loads(res_path.read_text()) if res_path.exists() else {}
    romanized = {s: (lambda s=s: built(out, f"e5-romanized-{s}", ["models", "romanize", "e5-small", "--texts",
                                                                   str(files[f"texts-{s}"])],
                                       "xlsent_romanization.json")) for s in scripts}
    both = {(s, k): (lambda s=s, k=k: built(out, f"e5-romanized-extended-{k}-{s}", [
        "models", "romanize", "e5-small", "--texts", str(files[f"texts-{s}"]), "--extend",
        *(["--pieces", k] if k != "default" else [])], "xlsent_romanization.json"))
        for s in scripts for k in a.both_pieces}
    extended = {s: (lambda s=s: built(out, f"e5-extended-{s}", ["models", "extend-vocab", "e5-small", "--texts",
                                                                 str(files[f"texts-{s}"]), "--pieces", str(a.pieces)],
                                      "xlsent_added_pieces.json")) for s in scripts}
    def mlm(name: str, model: Path, s: str) -> Path:
        folder = out / name
        if not (folder / "mlm_stage.json").exists():
            seconds = run([sys.executable, str(Path(__file__).with_name("mlm_stage.py")), str(model),
                           str(files[f"mono-{s}"]), "-o", str(folder), "--train", a.mlm_train],
                          out / f"{name}-log.txt")
            print(f"{name}: {seconds:.0f} s", flush=True)
        return folder

    runs: dict[str, list] = {r: [] for r in RUNS}
    runs["latin"].append(("adapt (Latin original)", lambda: adapt(out, "adapt-latin", "e5-small",
                                                                   files["train-latin"], a.set, 1.0),
                          files["test-latin"]))
    runs["base"].append(("e5-small (Latin original)", lambda: "e5-small", files["test-latin"]))
    for s in scripts:
        pool, pairs, label = files[f"test-{s}"], files[f"train-{s}"], SCRIPTS[s]
        runs["base"] += [(f"e5-small ({label})", lambda: "e5-small", pool),
                         (f"romanised, untrained ({label})", lambda s=s: str(romanized[s]()), pool)]
        runs["adapt"].append((f"adapt ({label})", lambda s=s, p=pairs: adapt(out, f"adapt-{s}", "e5-small", p,
                                                                             a.set, 1.0), pool))
        runs["extend"].append((f"extend-vocab + adapt ({label})", lambda s=s, p=pairs: adapt(
            out, f"extend-adapt-{s}", str(extended[s]()), p, a.set, 300.0), pool))
        runs["romanize"].append((f"romanize + adapt ({label})", lambda s=s, p=pairs: adapt(
            out, f"romanize-adapt-{s}", str(romanized[s]()), p, a.set, 300.0), pool))
        runs["both"] += [(f"romanize --extend{'' if k == 'default' else f' --pieces {k}'} + adapt ({label})", lambda s=s, p=pairs, k=k: adapt(
            out, f"both-{k}-adapt-{s}", str(both[s, k]()), p, a.set, 300.0), pool) for k in a.both_pieces]
        m = a.mlm_train
        runs["mlm"] += [
            (f"extend-vocab + MLM ({m}) + adapt ({label})", lambda s=s, p=pairs: adapt(
                out, f"extend-mlm-{m}-adapt-{s}", str(mlm(f"e5-extended-mlm-{m}-{s}", extended[s](), s)), p,
                a.set, 300.0), pool),
            (f"romanize + MLM ({m}) + adapt ({label})", lambda s=s, p=pairs: adapt(
                out, f"romanize-mlm-{m}-adapt-{s}", str(mlm(f"e5-romanized-mlm-{m}-{s}", romanized[s](), s)), p,
                a.set, 300.0), pool)]
    for name, get, pool in (row for r in order for row in runs[r]):
        if name not in results:
            model = get()
            results[name] = score(str(model), pool)
            stage = Path(model).parent / "stage.json"
            if stage.exists():
                rec = json.loads(stage.read_text())
                results[name]["train"] = {"seconds": rec.get("seconds"), "steps": rec.get("steps")}
            print(f"  {name}: xx→en {results[name]['xx→en']:.3f}, en→xx {results[name]['en→xx']:.3f}", flush=True)
            res_path.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    results["_settings"] = {"train": a.train, "test": a.test, "split": a.split, "scripts": scripts,
                            "pieces": a.pieces, "both_pieces": a.both_pieces, "mono": a.mono,
                            "mlm_train": a.mlm_train, "set": a.set}
    res_path.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    latin = results.get("adapt (Latin original)")
    print(f"\nSubstitutes: Chichewa by sound in {', '.join(SCRIPTS[s] for s in scripts)}. P@1 on {a.test} pairs of "
          f"{SPLITS[a.split][1]}, both ways; adapt on {a.train} pairs of {SPLITS[a.split][0]} (seed 0).")
    print("| run | xx→en P@1 [95% CI] | en→xx P@1 [95% CI] | share of adapt on Latin (xx→en / en→xx) | unk rate | "
          "pieces/word |")
    print("|---|---|---|---|---|---|")
    for name in (n for r in RUNS for n, _, _ in runs[r] if n in results):
        r = results[name]
        share = (f"{r['xx→en'] / latin['xx→en']:.0%} / {r['en→xx'] / latin['en→xx']:.0%}"
                 if latin and latin["xx→en"] and latin["en→xx"] else "")
        print(f"| {name} | {r['xx→en']:.3f} [{r['xx→en ci'][0]:.3f}, {r['xx→en ci'][1]:.3f}] | {r['en→xx']:.3f} "
              f"[{r['en→xx ci'][0]:.3f}, {r['en→xx ci'][1]:.3f}] | {share} | {r['unk_rate']:.3f} | "
              f"{r['pieces_per_word']:.2f} |")


if __name__ == "__main__":
    main()
