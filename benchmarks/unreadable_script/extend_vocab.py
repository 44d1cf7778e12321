#!/usr/bin/env python3
"""A script the model cannot read (issue 51 §3): ``xlsent models extend-vocab`` + ``xlsent train adapt`` against
adapt alone, on a **substitute**: Chichewa written in Deseret letters.

    python benchmarks/unreadable_script/extend_vocab.py -o runs/extend-vocab [--train 1000] [--test 500] [--pieces 2000]
        [--set KEY=VALUE …]

No bundled language is in a script e5-small cannot read, so the Chichewa side of ``bible-en-ny`` is rewritten
letter by letter into Deseret (:mod:`xlsent.data.text.transliterate`: a fixed one-to-one map, every letter ``<unk>`` to
e5-small's tokenizer) — the same language, sentences and pairs, in a script the model has never seen. Every
figure is on that substitute, not on a real language.

Data: ``--train`` pairs drawn (seed 0) from ``bible-en-ny:train`` (Old Testament), the pairs of every run; the
test pool ``--test`` pairs drawn (seed 0) from ``bible-en-ny:test`` (New Testament). Runs, each ``xlsent train
adapt`` with its defaults (``configs/adapt.yaml``: 10% of the pairs held out to choose the step, token table
frozen) in its own process with ``--no-eval``, reused when finished:

* ``adapt`` — e5-small adapted to the Deseret pairs;
* ``extend+adapt`` — ``xlsent models extend-vocab e5-small --texts <the Deseret side of the training pairs>
  --pieces N``, then adapted to the same pairs (the added rows train, the old ones stay frozen);
* ``adapt (Latin)`` — e5-small adapted to the original Latin-script pairs: the ceiling the substitute aims at.

Scored with :func:`xlsent.evaluate` (``xlsent eval retrieval --pairs FILE``: tie-aware cosine P@1 over the whole
pool, both ways), on the Deseret test pool except the Latin rows. ``xx→en``: a Chichewa (Deseret or Latin) query
finds its English verse. Scores are kept in ``OUT/results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def write_pairs(path: Path, english: list[str], other: list[str]) -> Path:
    path.write_text("en\tny\n" + "".join(f"{e}\t{o}\n" for e, o in zip(english, other)), encoding="utf-8")
    return path


SPLITS = {"test": ("bible-en-ny:train", "bible-en-ny:test"), "dev": ("bible-en-ny:dev-train", "bible-en-ny:dev")}


def draw(name: str, n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n`` pairs of a bundled set drawn with ``seed``: (English side, Chichewa side)."""
    from xlsent.data.sets.pairs import english_side, load_pairs

    ds = load_pairs(name, sample=n, seed=seed).dataset
    other, en = english_side(ds)
    return list(ds[en]), list(ds[other])


def data(out: Path, n_train: int, n_test: int, split: str = "test") -> dict:
    from xlsent.data.text.transliterate import to_deseret

    folder = out / "data"
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    train_name, test_name = SPLITS[split]
    for split, name, n in (("train", train_name, n_train), ("test", test_name, n_test)):
        english, ny = draw(name, n)
        files[f"{split}-latin"] = write_pairs(folder / f"{split}-latin.tsv", english, ny)
        files[f"{split}-dsrt"] = write_pairs(folder / f"{split}-dsrt.tsv", english, [to_deseret(t) for t in ny])
        if split == "train":
            files["texts"] = folder / "train-dsrt.txt"
            files["texts"].write_text("".join(to_deseret(t) + "\n" for t in ny), encoding="utf-8")
    return files


def run(cmd: list[str], log: Path) -> float:
    t0 = time.time()
    with open(log, "a") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, env=os.environ)
    if rc:
        sys.exit(f"{' '.join(cmd)} failed (exit {rc}); see {log}")
    return time.time() - t0


def adapt(out: Path, name: str, model: str, pairs: Path, sets: list[str], lr_scale: float) -> Path:
    """``xlsent train adapt`` in its own process; ``lr_scale``: the added rows' learning-rate multiple
    (``xlsent.models.vocab.extend.ADDED_ROWS_LR_SCALE``, set in that process)."""
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    launch = [
        "-c", "import sys, xlsent.models.vocab.extend as e; e.ADDED_ROWS_LR_SCALE = float(sys.argv[1]); "
              "sys.argv = ['xlsent', *sys.argv[2:]]; from xlsent.cli.main import main; main()", str(lr_scale)]
    cmd = [sys.executable, *launch, "train", "adapt", "-o", str(folder), "--no-eval",
           "--set", f"train.pairs={pairs}", "--set", f"models.student={model}", "--set", "train.sample=0",
           *(x for s in sets for x in ("--set", s))]
    seconds = run(cmd, folder / "bench-log.txt")
    print(f"{name}: trained or reused in {seconds:.0f} s", flush=True)
    return folder / "model"


def score(model: str, pairs: Path) -> dict:
    import xlsent
    from transformers import AutoTokenizer

    from xlsent.data.sets.stats import piece_stats
    from xlsent.models.registry import resolve_model_path

    r = xlsent.evaluate(model, "retrieval", pairs=str(pairs), beside=False).results[0]
    other = [line.split("\t")[1] for line in pairs.read_text(encoding="utf-8").splitlines()[1:]]
    tok = AutoTokenizer.from_pretrained(str(resolve_model_path(model)), local_files_only=True)
    stats = piece_stats(tok(other, add_special_tokens=False)["input_ids"], tok.unk_token_id, other)
    return {"xx→en": r.tgt2src["p@1"], "en→xx": r.src2tgt["p@1"], "n": r.n,
            "xx→en ci": r.tgt2src["ci95"]["p@1"], "en→xx ci": r.src2tgt["ci95"]["p@1"],
            "unk_rate": stats["unk_rate"], "pieces_per_word": stats["pieces_per_word"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", required=True, type=Path)
    ap.add_argument("--train", type=int, default=1000, help="training pairs drawn from bible-en-ny:train")
    ap.add_argument("--test", type=int, default=500, help="test pairs drawn from bible-en-ny:test")
    ap.add_argument("--pieces", type=int, default=2000, help="extend-vocab --pieces")
    ap.add_argument("--set", action="append", default=[], help="extra adapt override for every run")
    ap.add_argument("--split", choices=sorted(SPLITS), default="test",
                    help="test: bible-en-ny:train → :test; dev: :dev-train → :dev (for choosing settings)")
    ap.add_argument("--lr-scale", default="1", help="the added rows' learning-rate multiples to try, e.g. 1,100")
    ap.add_argument("--no-latin", action="store_true", help="leave out the Latin-script rows")
    ap.add_argument("--runs", default="base,adapt,extend,latin",
                    help="which runs, in the order they train (e.g. extend,latin,adapt for the longest ones)")
    a = ap.parse_args()
    order = [r.strip() for r in a.runs.split(",")]
    unknown = [r for r in order if r not in ("base", "adapt", "extend", "latin")]
    if unknown:
        sys.exit(f"--runs: unknown run {unknown[0]!r}; choose from base,adapt,extend,latin")
    out = a.output
    out.mkdir(parents=True, exist_ok=True)
    files = data(out, a.train, a.test, a.split)
    res_path = out / "results.json"
    results = json.loads(res_path.read_text()) if res_path.exists() else {}
    ext = out / "e5-extended"
    if not (ext / "xlsent_added_pieces.json").exists():
        seconds = run([sys.executable, "-m", "xlsent", "models", "extend-vocab", "e5-small", "--texts",
                       str(files["texts"]), "--pieces", str(a.pieces), "-o", str(ext), "--json"],
                      out / "extend-log.txt")
        print(f"extend-vocab: {seconds:.0f} s", flush=True)
    record = json.loads((ext / "xlsent_added_pieces.json").read_text(encoding="utf-8"))
    dsrt, latin = files["test-dsrt"], files["test-latin"]
    # name → (how to get the model, its test pool); trained and scored in --runs order, so the figures that
    # matter most are on disk first on a long run (the whole Old Testament: about an hour a run on 2 cores)
    runs = {
        "base": [("e5-small (Deseret)", lambda: "e5-small", dsrt),
                 ("extend-vocab, untrained (Deseret)", lambda: str(ext), dsrt)]
                + ([] if a.no_latin else [("e5-small (Latin original)", lambda: "e5-small", latin)]),
        "adapt": [("adapt (Deseret)",
                   lambda: adapt(out, "adapt-dsrt", "e5-small", files["train-dsrt"], a.set, 1.0), dsrt)],
        "extend": [(f"extend-vocab + adapt{'' if s == 1.0 else f', added rows at {s:g}× lr'} (Deseret)",
                    lambda s=s: adapt(out, "extend-adapt-dsrt" + ("" if s == 1.0 else f"-x{s:g}"), str(ext),
                                      files["train-dsrt"], a.set, s), dsrt)
                   for s in (float(x) for x in a.lr_scale.split(","))],
        "latin": [] if a.no_latin else [("adapt (Latin original)", lambda: adapt(
            out, "adapt-latin", "e5-small", files["train-latin"], a.set, 1.0), latin)],
    }
    for name, get, pairs in (row for r in order for row in runs[r]):
        if name not in results:
            model = get()
            results[name] = score(str(model), pairs)
            stage = Path(model).parent / "stage.json"
            if stage.exists():
                rec = json.loads(stage.read_text())
                results[name]["train"] = {"seconds": rec.get("seconds"), "steps": rec.get("steps"),
                                          "chosen_step": rec.get("selection", {}).get("chosen_step")}
            print(f"  {name}: xx→en {results[name]['xx→en']:.3f}, en→xx {results[name]['en→xx']:.3f}", flush=True)
            res_path.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    shown = [name for r in ("base", "adapt", "extend", "latin") for name, _, _ in runs[r] if name in results]
    results["_extend_vocab"] = {k: record[k] for k in ("added", "new_characters", "unk_rate_before",
                                                       "unk_rate_after", "from_subpieces", "default_init")}
    results["_settings"] = {"train": a.train, "test": a.test, "pieces": a.pieces, "set": a.set, "split": a.split,
                            "lr_scale": a.lr_scale}
    res_path.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    print(f"\nSubstitute: Chichewa in Deseret letters. P@1 on {a.test} pairs of {SPLITS[a.split][1]} (seed 0), both "
          f"ways; adapt on {a.train} pairs of {SPLITS[a.split][0]} (seed 0); extend-vocab added {record['added']} pieces "
          f"(unknown-piece rate of the training text {record['unk_rate_before']:.3f} → {record['unk_rate_after']:.3f})")
    print("| model | test script | xx→en P@1 [95% CI] | en→xx P@1 [95% CI] | unk rate (xx side) | pieces/word |")
    print("|---|---|---|---|---|---|")
    for name in sorted(shown, key=lambda n: "Latin" in n):  # stable: the Deseret rows, then the Latin ones
        r = results[name]
        unk = f"{r['unk_rate']:.3f}" if r.get("unk_rate") is not None else ""
        print(f"| {name.rsplit(' (', 1)[0]} | {name.rsplit(' (', 1)[1][:-1]} | {r['xx→en']:.3f} "
              f"[{r['xx→en ci'][0]:.3f}, {r['xx→en ci'][1]:.3f}] | {r['en→xx']:.3f} "
              f"[{r['en→xx ci'][0]:.3f}, {r['en→xx ci'][1]:.3f}] | {unk} | {r['pieces_per_word']:.2f} |")


if __name__ == "__main__":
    main()
