#!/usr/bin/env python3
"""Per-language centering and CSLS / margin scoring, measured on development data only.

    python benchmarks/mining/centering_dev.py [-m MODEL …] [-o runs/centering-dev.json] [--mining-langs all|CODE,…]

For each model (default: e5-small), with the encoder loaded once:

1. **retrieval P@1** both ways on the OT development books (``bible-en-ny:dev``, 1,000 pairs, seed 0) and on
   the 24 ``udhr-dev`` languages (mean over languages): plain cosine, centered cosine, CSLS, centered CSLS,
   ratio margin, centered margin (``xlsent eval retrieval`` reports the same figures beside its main one);
2. **mining F1** on comparable corpora built from the ``udhr-dev`` languages (``xlsent eval mining
   --dataset udhr-dev:CODE``: every second paragraph without its English, 2,000 English Bible verses as
   distractors; the threshold tuned on the first half, F1 on the second) with and without ``--center``, at the
   tuned threshold and at ``xlsent mine``'s automatic one; mean over languages.

What wins here is what the task defaults adopt (``docs/results.md``, "Centering"); no test set is read.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def retrieval(enc, name: str) -> dict:
    from xlsent.data.sets.bundled import load_bundled, split_by_language
    from xlsent.data.sets.pairs import load_pairs, side_langs
    from xlsent.evaluation.retrieval import evaluate_many, mean_row

    out = {}
    bible = load_pairs("bible-en-ny:dev", dedupe=False, sample=1000, seed=0).dataset
    groups = {"bible-en-ny:dev": (list(bible["src"]), list(bible["tgt"]), *side_langs(bible))}
    r = evaluate_many(groups, enc, name, "cosine", 200, 0, 4, "bible-en-ny:dev", beside=True)[0]
    out["bible-en-ny:dev"] = {"cosine": {"src2tgt": r.src2tgt["p@1"], "tgt2src": r.tgt2src["p@1"]}, **r.beside}
    pools = {k: (list(p["src"]), list(p["tgt"]), p["src_lang"][0], p["tgt_lang"][0])
             for k, p in split_by_language(load_bundled("udhr-dev")).items()}
    m = mean_row(evaluate_many(pools, enc, name, "cosine", 200, 0, 4, "udhr-dev", beside=True))
    out["udhr-dev (mean)"] = {"cosine": {d: m[d]["p@1"] for d in ("src2tgt", "tgt2src")}, **m["beside"]}
    return out


def mining(enc, name: str, langs: list[str]) -> dict:
    """Every distinct text of every corpus is embedded once (the 2,000 English distractors are shared), then
    each corpus is mined from a lookup table of those vectors, with and without centering."""
    import numpy as np

    from xlsent.data.formats.comparable import udhr_comparable
    from xlsent.encoding.encoder import Encoder, FunctionBackend
    from xlsent.evaluation.mining import evaluate_mining
    from xlsent.mining.job import MineConfig

    corpora = {code: [udhr_comparable(code, s, 2000, 0, "udhr-dev") for s in ("dev", "test")] for code in langs}
    texts = list(dict.fromkeys(t for pair in corpora.values() for c in pair for _, t in (*c.src, *c.tgt)))
    table = dict(zip(texts, enc.replace(normalize=True, show_progress=True).encode(texts)))
    lookup = Encoder(FunctionBackend(lambda batch: np.stack([table[t] for t in batch]), f"{name} (table)",
                                     enc.dimension, normalizes=True))
    rows: dict = {"plain": [], "center": []}
    for code, (dev, test) in corpora.items():
        for label, center in (("plain", False), ("center", True)):
            res = evaluate_mining(lookup, dev, test, MineConfig(center=center), name)
            rows[label].append({"lang": code, "f1": res.test.f1, "auto_f1": res.auto_test.f1})
    return {label: {"f1": sum(r["f1"] for r in v) / len(v), "auto_f1": sum(r["auto_f1"] for r in v) / len(v),
                    "languages": v} for label, v in rows.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-m", "--model", action="append", default=[])
    ap.add_argument("-o", "--output", type=Path, default=Path("runs/centering-dev.json"))
    ap.add_argument("--mining-langs", default="all", help="udhr-dev codes for the mining part, or all, or none")
    a = ap.parse_args()
    from xlsent.data.sets.bundled import load_bundled, split_by_language
    from xlsent.encoding.encoder import Encoder

    langs = ([] if a.mining_langs == "none" else list(split_by_language(load_bundled("udhr-dev")))
             if a.mining_langs == "all" else a.mining_langs.split(","))
    results = {}
    for model in a.model or ["e5-small"]:
        t0 = time.perf_counter()
        enc = Encoder.load(model, memo=True)
        res = {"retrieval": retrieval(enc, model)}
        if langs:
            res["mining"] = mining(enc, model, langs)
        res["seconds"] = time.perf_counter() - t0
        results[model] = res
        print(f"\n{model} — P@1 src→tgt / tgt→src (en→xx / xx→en)")
        for pool, scorings in res["retrieval"].items():
            print(f"  {pool}")
            for s, v in scorings.items():
                print(f"    {s:<15}{v['src2tgt']:.3f} / {v['tgt2src']:.3f}")
        for label, v in res.get("mining", {}).items():
            print(f"  mining F1 over {len(v['languages'])} udhr-dev languages, {label}: tuned {v['f1']:.3f}, "
                  f"auto threshold {v['auto_f1']:.3f}")
    a.output.parent.mkdir(parents=True, exist_ok=True)
    a.output.write_text(json.dumps(results, indent=1))
    print(f"wrote {a.output}")


if __name__ == "__main__":
    main()
