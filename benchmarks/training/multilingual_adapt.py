#!/usr/bin/env python3
"""Does adding other languages to ``xlsent train adapt`` help the languages nobody trained on? (issue 51 §2)

    python benchmarks/training/multilingual_adapt.py -o runs/multilingual-adapt
    python benchmarks/training/multilingual_adapt.py -o runs/multilingual-adapt --temperature 2 --tag t2
    python benchmarks/training/multilingual_adapt.py -o runs/multilingual-adapt --sample 1000 --set optim.epochs=1
    python benchmarks/training/multilingual_adapt.py -o runs/multilingual-adapt --split dev --temperature 2

Two adapt runs on the recipe's defaults (``configs/adapt.yaml``: 1,000 pairs drawn from each source, 10% held out
to choose the step), the same seed:

* ``alone`` — ``xlsent train adapt bible-en-ny:train`` (English–Chichewa, the Old Testament);
* ``mix``   — ``xlsent train adapt bible-en-ny:train,udhr-all:dev --set train.language_temperature=T``: the same
  Chichewa pairs plus ``udhr-all:dev`` (211 UDHR languages, none of them in ``udhr-all:test`` or ``udhr``), the
  languages mixed with temperature T (default: the recipe's, 1 — by size);

i.e. the commands

    xlsent train adapt bible-en-ny:train -o OUT/alone --no-eval
    xlsent train adapt bible-en-ny:train,udhr-all:dev -o OUT/mix-T1 --set train.language_temperature=1 --no-eval

Then the base model and both runs are scored the same way, ``xlsent.evaluate_tasks(model,
["retrieval:udhr-all:test", "retrieval:bible-en-ny:test", "retrieval:udhr"])`` (tie-aware cosine P@1, both
directions), and the script prints, each direction, the mean P@1 over:

* **unseen** — ``udhr-all:test``'s languages that neither run trained on (Chichewa left out);
* **NT** — the New Testament, English–Chichewa (``bible-en-ny:test``), the trained language;
* **47** — the 47 UDHR languages of ``udhr`` (Chichewa among them), the figure every xlsent table reports.

The target: the mixture lifts the unseen languages' mean P@1 by ≥ 5 points in each direction over ``alone``
without losing more than 1 point on the NT. Finished runs are skipped and scores reused (``OUT/results.json``);
``--set KEY=VALUE`` is passed to both runs (``--tag`` names the variant).

``--split dev`` chooses settings without reading the test: ``alone`` trains on ``bible-en-ny:dev-train`` (the Old
Testament without the dev books), ``mix`` adds ``udhr-all:dev`` without ``--held`` of its languages (default 40,
drawn at random, seed 0, into ``OUT/dev-held.json``; the rest is ``OUT/udhr-all-dev-minus-held.jsonl``); both are
scored on the held-out languages' declarations (unseen by either run: a stand-in for ``udhr-all:test``, drawn from
the same population — not ``udhr-dev``, whose 24 well-resourced languages leave little room, 0.88 / 0.90 after
Bible-only adapt) and ``bible-en-ny:dev`` (the NT's stand-in), and the same target is checked there. Dev runs are
named ``dev-…``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

TASKS = ["retrieval:udhr-all:test", "retrieval:bible-en-ny:test", "retrieval:udhr"]
ALONE = "bible-en-ny:train"
EXTRA = "udhr-all:dev"
# --split dev: (trained alone on, unseen languages' task, the NT's stand-in)
DEV = ("bible-en-ny:dev-train", "held", "retrieval:bible-en-ny:dev")


def _value(text: str):
    import yaml

    return yaml.safe_load(text)


def train(out: Path, name: str, pairs: str, settings: dict, device: str) -> Path:
    import xlsent

    run = xlsent.train("adapt", pairs, output=out / name, settings=settings, device=device, evaluate=False,
                       on_note=lambda line: print(f"  [{name}] {line}", file=sys.stderr))
    return Path(run.model_path)


def trained_languages(run: Path) -> set[str]:
    """The languages a run trained on, from its stage record."""
    rec = json.loads((run / "stage.json").read_text())
    return set(rec.get("train_data", {}).get("languages", []))


def held_out(out: Path, n: int) -> tuple[Path, list[str]]:
    """``n`` languages of ``udhr-all:dev`` drawn at random (seed 0) as the dev split's unseen ones, and the pairs
    of the others as a JSONL file (src, tgt and each side's language) for the mix to train on."""
    import numpy as np
    from xlsent.data.sets.bundled import load_bundled

    rows = load_bundled("udhr-all:dev")
    langs = sorted(set(rows["tgt_lang"]))
    held = sorted(np.random.default_rng(0).choice(langs, min(n, len(langs) - 1), replace=False).tolist())
    path = out / "udhr-all-dev-minus-held.jsonl"
    text = "".join(json.dumps({k: r[k] for k in ("src", "tgt", "src_lang", "tgt_lang")}, ensure_ascii=False) + "\n"
                   for r in rows if r["tgt_lang"] not in held)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    (out / "dev-held.json").write_text(json.dumps(held) + "\n")
    print(f"{path}: the {len(langs) - len(held)} udhr-all:dev languages the mix trains on; {len(held)} held out "
          f"unseen: {' '.join(held)}", file=sys.stderr)
    return path, held


def score_held(model: str, held: list[str], resamples: int) -> list:
    """[(src_lang, tgt_lang, P@1 both ways), …]: one pool per held-out declaration of ``udhr-all:dev``, every
    paragraph of it, tie-aware cosine P@1 (as ``--dataset udhr-all:test`` scores each language)."""
    from xlsent.data.sets.bundled import load_bundled
    from xlsent.encoding.encoder import Encoder
    from xlsent.evaluation.retrieval import Pool, evaluate_many

    pools: dict[str, Pool] = {}
    for r in load_bundled("udhr-all:dev"):
        if r["tgt_lang"] in held:
            p = pools.setdefault(r["udhr_code"], Pool([], [], r["src_lang"], r["tgt_lang"]))
            p.src.append(r["src"])
            p.tgt.append(r["tgt"])
    results = evaluate_many(pools, Encoder.load(model), model, n_resamples=resamples)
    return [(r.src_lang, r.tgt_lang, float(r.src2tgt["p@1"]), float(r.tgt2src["p@1"])) for r in results]


def score(model: str, resamples: int, tasks: list[str], held: list[str] | None = None) -> dict:
    """{task: [(src_lang, tgt_lang, src→tgt P@1, tgt→src P@1), …]} over the tasks (and ``held``'s pools)."""
    import xlsent

    out = {"held": score_held(model, held, resamples)} if held else {}
    for run in xlsent.evaluate_tasks(model, tasks, options={"resamples": resamples}):
        out[run.task] = [(r.src_lang, r.tgt_lang, float(r.src2tgt["p@1"]), float(r.tgt2src["p@1"]))
                         for r in run.results]
    return out


def directions(rows: list, skip: set[str] = frozenset()) -> tuple[float, float, int]:
    """(mean en→xx P@1, mean xx→en P@1, languages) over the rows whose other language is not in ``skip``."""
    en2xx, xx2en = [], []
    for sl, tl, fwd, bwd in rows:
        english_src = sl in ("eng", "en")
        other = tl if english_src else sl
        if other in skip:
            continue
        en2xx.append(fwd if english_src else bwd)
        xx2en.append(bwd if english_src else fwd)
    n = max(1, len(en2xx))
    return sum(en2xx) / n, sum(xx2en) / n, len(en2xx)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", required=True, type=Path)
    ap.add_argument("--temperature", type=float, default=None,
                    help="train.language_temperature of the mix (default: the recipe's)")
    ap.add_argument("--sample", type=int, default=None, help="train.sample: pairs drawn from each source")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--tag", default="", help="a name for this variant's runs")
    ap.add_argument("--held", type=int, default=40, help="--split dev: udhr-all:dev languages held out unseen")
    ap.add_argument("--split", choices=["dev", "test"], default="test",
                    help="dev: choose settings on udhr-dev and bible-en-ny:dev (test: read the test sets)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of each P@1's CI")
    ap.add_argument("--skip-base", action="store_true", help="score only the two runs (the base model's figures are "
                    "in docs/experiments/long-tail.md and docs/results.md)")
    args = ap.parse_args(argv)

    from xlsent.recipes.config import load_config

    out = args.output
    out.mkdir(parents=True, exist_ok=True)
    settings = {k: _value(v) for k, v in (x.split("=", 1) for x in args.overrides)}
    if args.sample is not None:
        settings["train.sample"] = args.sample
    temperature = args.temperature
    if temperature is None:
        temperature = float(load_config("adapt", None, []).train.language_temperature)
    tag = f"-{args.tag}" if args.tag else ""
    dev = args.split == "dev"
    if dev:
        extra_path, held = held_out(out, args.held)
        alone, extra, tasks = DEV[0], str(extra_path), [DEV[2]]
        unseen_task, nt_task = DEV[1], DEV[2]
    else:
        alone, extra, tasks, held = ALONE, EXTRA, TASKS, None
        unseen_task, nt_task = TASKS[0], TASKS[1]
    pre = "dev-" if dev else ""
    runs = {f"{pre}alone": (alone, settings),
            f"{pre}mix-T{temperature:g}": (f"{alone},{extra}", {**settings, "train.language_temperature": temperature})}
    models = {} if args.skip_base else {
        f"{pre}base": str(settings.get("models.student") or load_config("adapt", None, []).models.student)}
    for name, (pairs, s) in runs.items():
        print(f"training {name}{tag}: {pairs} {s}", file=sys.stderr)
        models[name] = str(train(out, name + tag, pairs, s, args.device))
    seen = set().union(*(trained_languages(out / (name + tag)) for name in runs))

    cache = out / "results.json"
    results = json.loads(cache.read_text()) if cache.exists() else {}
    for name, model in models.items():
        key = f"{name}{'' if name.endswith('base') else tag}|{args.resamples}" + (f"|held{args.held}" if dev else "")
        if key not in results:
            print(f"scoring {name}…", file=sys.stderr)
            results[key] = score(model, args.resamples, tasks, held)
            cache.write_text(json.dumps(results, indent=1))

    head = f"{'model':<14}{'unseen en→xx':>14}{'unseen xx→en':>14}{'NT en→xx':>10}{'NT xx→en':>10}" \
           + ("" if dev else f"{'47 en→xx':>10}{'47 xx→en':>10}")
    print(head)
    table = {}
    for name in models:
        r = results[f"{name}{'' if name.endswith('base') else tag}|{args.resamples}" + (f"|held{args.held}" if dev else "")]
        unseen = directions(r[unseen_task], seen - {"eng", "en"})
        nt = directions(r[nt_task])
        u47 = None if dev else directions(r["retrieval:udhr"])
        table[name] = (unseen, nt, u47)
        print(f"{name:<14}{unseen[0]:>14.3f}{unseen[1]:>14.3f}{nt[0]:>10.3f}{nt[1]:>10.3f}"
              + ("" if dev else f"{u47[0]:>10.3f}{u47[1]:>10.3f}"))
    mix = next(n for n in models if n.startswith(f"{pre}mix"))
    (u_a, nt_a, _), (u_m, nt_m, _) = table[f"{pre}alone"], table[mix]
    print(f"\nunseen languages: {u_a[2]} ("
          + (f"{args.held} udhr-all:dev languages held out)" if dev else
             f"udhr-all:test without the trained ones: {', '.join(sorted(seen & {'nya'}))})"))
    lift = (100 * (u_m[0] - u_a[0]) + 0.0, 100 * (u_m[1] - u_a[1]) + 0.0)
    loss = (100 * (nt_a[0] - nt_m[0]) + 0.0, 100 * (nt_a[1] - nt_m[1]) + 0.0)
    ok = min(lift) >= 5 and max(loss) <= 1
    print(f"{mix} − alone: unseen {lift[0]:+.1f} / {lift[1]:+.1f} points (en→xx / xx→en), "
          f"NT {0.0 - loss[0]:+.1f} / {0.0 - loss[1]:+.1f} — target (≥ +5 each way on unseen, ≥ −1 on NT): "
          + ("met" if ok else "not met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
