#!/usr/bin/env python3
"""Matryoshka widths (issue 50 §1): P@1 at each cut width for adapt trained with ``loss.matryoshka_dims``, plain
adapt cut to the same widths, and e5-small cut.

    python benchmarks/training/matryoshka.py -o runs/matryoshka --split dev [--widths 384,256,128,64]
        [--train-dims 384,256,128,64] [--set KEY=VALUE …] [--tag NAME] [--mix]

Both adapt models are ``xlsent train adapt`` with its defaults (``configs/adapt.yaml``: 1,000 pairs drawn from the
Old Testament, 100 held out to choose the step) — the Matryoshka one with
``--set loss.matryoshka_dims=<train-dims>`` (+ any ``--set``) — each trained in its own process (``--no-eval``) and
reused when finished. ``--split dev`` trains on ``bible-en-ny:dev-train`` (the Old Testament without the dev books)
and scores on ``bible-en-ny:dev`` (1,000 pairs drawn, seed 0) and ``udhr-dev`` (24 languages, mean); ``--split
test`` trains on the default ``bible-en-ny:train`` and scores on ``bible-en-ny:test`` (NT, 1,000 pairs, seed 0) and
``udhr`` (47 languages, mean) — read once, after the setting was chosen on dev.

``--mix`` trains the Matryoshka model on other languages too (issue 51's several sources, 1,000 pairs drawn from
each): on dev, the Bible pairs + the `udhr-all:dev` languages that are not in `udhr-dev` (written to
``OUT/udhr-all-dev-minus-udhr-dev.jsonl``, so udhr-dev stays unseen); on test, the Bible pairs + every
`udhr-all:dev` language (the 47 `udhr` languages are all in `udhr-all:test`). Plain adapt stays on the Bible alone.

Scoring is :func:`xlsent.evaluate` (what ``xlsent eval retrieval --dataset D [--sample 1000] --dimensions N``
computes: tie-aware cosine P@1 over the whole pool, both ways), with each text encoded once a model and each
width cut from the full vector (``v[:N] / ‖v[:N]‖``, :func:`xlsent.encoding.width.cut` — exactly what
``--dimensions N`` gives). The table gives P@1 at each width, the ratio to the same model's full width, and the
Matryoshka model's full-width difference from plain adapt. Scores are kept in ``OUT/results-<split>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SPLITS = {"dev": ("bible-en-ny:dev-train", "bible-en-ny:dev", "udhr-dev"),
          "test": ("bible-en-ny:train", "bible-en-ny:test", "udhr")}
COLUMNS = ("bible xx→en", "bible en→xx", "UDHR xx→en", "UDHR en→xx")


def train(run: Path, pairs: str, sets: list[str]) -> Path:
    """``xlsent train adapt`` in its own process (skipped by the recipe itself when finished with this config)."""
    cmd = [sys.executable, "-m", "xlsent", "train", "adapt", "-o", str(run), "--no-eval",
           "--set", f"train.pairs={pairs}", *(x for s in sets for x in ("--set", s))]
    run.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with open(run / "bench-log.txt", "a") as log:
        rc = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT, env=os.environ)
    if rc:
        sys.exit(f"{' '.join(cmd)} failed (exit {rc}); see {run / 'bench-log.txt'}")
    print(f"{run.name}: trained or reused in {time.time() - t0:.0f} s", flush=True)
    return run / "model"


def cut_view(full, width: int):
    """An encoder giving ``full``'s vectors cut to ``width`` — ``full`` remembers each text's full vector, so a
    model encodes every text once for all widths."""
    from xlsent.encoding.encoder import Encoder
    from xlsent.encoding.width import cut

    class Cut(Encoder):
        def __init__(self) -> None:
            self.__dict__.update(full.__dict__)
            self.dimensions = width

        def encode(self, texts, lang=None):
            return cut(full.encode(texts, lang), width)

        __call__ = encode

    return Cut()


def mixture(out: Path) -> Path:
    """``udhr-all:dev`` without ``udhr-dev``'s languages, as a pairs JSONL (src, tgt and each side's language)."""
    from xlsent.data.sets.bundled import load_bundled

    path = out / "udhr-all-dev-minus-udhr-dev.jsonl"
    held = set(load_bundled("udhr-dev")["tgt_lang"])
    rows = [r for r in load_bundled("udhr-all:dev") if r["tgt_lang"] not in held]
    text = "".join(json.dumps({"src": r["src"], "tgt": r["tgt"], "src_lang": r["src_lang"], "tgt_lang": r["tgt_lang"]},
                              ensure_ascii=False) + "\n" for r in rows)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    print(f"{path}: {len(rows)} units of {len({r['tgt_lang'] for r in rows})} languages (udhr-dev's {len(held)} "
          "left out)", flush=True)
    return path


def score(model: str, bible: str, udhr: str, widths: list[int]) -> dict:
    import xlsent
    from xlsent.encoding.encoder import Encoder

    full = Encoder.load(model, memo=True)
    out = {}
    for w in widths:
        enc = cut_view(full, w)
        b = xlsent.evaluate(enc, "retrieval", dataset=bible, sample=1000, seed=0, beside=False)
        u = xlsent.evaluate(enc, "retrieval", dataset=udhr, beside=False, resamples=1)
        r = b.results[0]
        n = len(u.results)
        out[str(w)] = {"bible xx→en": r.tgt2src["p@1"], "bible en→xx": r.src2tgt["p@1"],
                       "bible xx→en ci": r.tgt2src["ci95"]["p@1"], "bible en→xx ci": r.src2tgt["ci95"]["p@1"],
                       "UDHR xx→en": sum(x.tgt2src["p@1"] for x in u.results) / n,
                       "UDHR en→xx": sum(x.src2tgt["p@1"] for x in u.results) / n, "udhr languages": n}
        print(f"  {Path(model).parent.name if '/' in model else model} {w}: "
              + ", ".join(f"{c} {out[str(w)][c]:.3f}" for c in COLUMNS), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", required=True, type=Path)
    ap.add_argument("--split", choices=sorted(SPLITS), default="dev")
    ap.add_argument("--widths", default="384,256,128,64")
    ap.add_argument("--train-dims", default="384,256,128,64")
    ap.add_argument("--set", action="append", default=[], help="extra override for the Matryoshka run")
    ap.add_argument("--tag", default="", help="names the Matryoshka variant (its run folder and row)")
    ap.add_argument("--mix", action="store_true", help="the Matryoshka model also trains on other UDHR languages")
    a = ap.parse_args()
    widths = [int(x) for x in a.widths.split(",")]
    train_pairs, bible, udhr = SPLITS[a.split]
    out = a.output
    out.mkdir(parents=True, exist_ok=True)
    if a.mix:
        a.set.append(f"train.pairs={train_pairs},{mixture(out) if a.split == 'dev' else 'udhr-all:dev'}")
    res_path = out / f"results-{a.split}.json"
    results = json.loads(res_path.read_text()) if res_path.exists() else {}
    mrl = f"adapt-mrl{'-' + a.tag if a.tag else ''}"
    models = {"e5-small": "e5-small",
              "adapt": str(train(out / f"{a.split}-adapt", train_pairs, [])),
              mrl: str(train(out / f"{a.split}-{mrl}", train_pairs,
                             [f"loss.matryoshka_dims={a.train_dims}", *a.set]))}
    for name, model in models.items():
        have = results.get(name, {})
        if all(str(w) in have for w in widths):
            continue
        results[name] = {**have, **score(model, bible, udhr, [w for w in widths if str(w) not in have])}
        stage = Path(model).parent / "stage.json"
        if stage.exists():
            rec = json.loads(stage.read_text())
            results[name]["train"] = {"seconds": rec.get("seconds"), "steps": rec.get("steps"),
                                      "chosen_step": rec.get("selection", {}).get("chosen_step"),
                                      "matryoshka": rec.get("matryoshka")}
        res_path.write_text(json.dumps(results, indent=1, ensure_ascii=False))
    table(results, models, widths, a.split, bible, udhr, mrl)


def table(results: dict, models: dict, widths: list[int], split: str, bible: str, udhr: str, mrl: str) -> None:
    full = str(max(widths))
    print(f"\n{split}: P@1 on {bible} (1,000 pairs, seed 0) and the mean over {udhr}'s languages, both ways; "
          "(ratio to the same model's full width)")
    print("| model | width | " + " | ".join(COLUMNS) + " |")
    print("|---|---|" + "---|" * len(COLUMNS))
    for name in models:
        for w in widths:
            r = results[name][str(w)]
            cells = [f"{r[c]:.3f}" + ("" if str(w) == full else f" ({r[c] / results[name][full][c]:.1%})")
                     for c in COLUMNS]
            print(f"| {name} | {w} | " + " | ".join(cells) + " |")
    if "128" in results[mrl]:
        worst = min(results[mrl]["128"][c] / results[mrl][full][c] for c in COLUMNS)
        print(f"\n{mrl} at 128: worst column {worst:.2%} of its full width (target ≥ 97%: "
              f"{'met' if worst >= 0.97 else 'not met'})")
        worst_plain = min(results["adapt"]["128"][c] / results["adapt"][full][c] for c in COLUMNS)
        print(f"plain adapt at 128: worst column {worst_plain:.2%}")
    deltas = [100 * (results[mrl][full][c] - results["adapt"][full][c]) for c in COLUMNS]
    print(f"{mrl} − adapt at {full} (points): " + ", ".join(f"{c} {d:+.1f}" for c, d in zip(COLUMNS, deltas))
          + f" (target: each ≥ −0.5: {'met' if min(deltas) >= -0.5 else 'not met'})")
    for name in ("adapt", mrl):
        t = results[name].get("train") or {}
        if t:
            print(f"{name}: {t.get('steps')} steps, {t.get('seconds') or 0:.0f} s training, step "
                  f"{t.get('chosen_step')} chosen")


if __name__ == "__main__":
    main()
