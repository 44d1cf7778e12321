#!/usr/bin/env python3
"""Mining F1 and bytes a sentence at each embedding precision (``xlsent mine --precision``), on development data.

    python benchmarks/mining_precision.py [-m e5-small] [--langs all|CODE,…] [-o runs/mining-precision.json]

The comparable corpora of ``benchmarks/centering_dev.py`` (``xlsent eval mining --dataset udhr-dev:CODE``: every
second paragraph of a development language without its English, 2,000 English Bible verses as distractors; the
threshold tuned on the first half, F1 on the second). Every distinct text is embedded once (float32), then each
corpus is mined from a lookup table of those vectors with the store at float32, float16, int8 and ubinary — the
same vectors, so the figures differ only by the precision. Printed per precision: mean F1 over the languages at
the tuned threshold and at ``xlsent mine``'s automatic one, and bytes a sentence (stored; in the search index).
No test set is read.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-m", "--model", default="e5-small")
    ap.add_argument("--langs", default="all", help="udhr-dev languages: all, or CODE,CODE,…")
    ap.add_argument("-o", "--output", type=Path, default=Path("runs/mining-precision.json"))
    args = ap.parse_args()

    import numpy as np

    from xlsent.data.bundled import load_bundled, split_by_language
    from xlsent.data.comparable import udhr_comparable
    from xlsent.encoding.encoder import Encoder, FunctionBackend
    from xlsent.evaluation.mining import evaluate_mining
    from xlsent.mining.job import MineConfig
    from xlsent.mining.store import DTYPES, bytes_per_sentence

    langs = list(split_by_language(load_bundled("udhr-dev"))) if args.langs == "all" else args.langs.split(",")
    enc = Encoder.load(args.model)
    corpora = {code: [udhr_comparable(code, s, 2000, 0, "udhr-dev") for s in ("dev", "test")] for code in langs}
    texts = list(dict.fromkeys(t for pair in corpora.values() for c in pair for _, t in (*c.src, *c.tgt)))
    table = dict(zip(texts, enc.replace(normalize=True, show_progress=True).encode(texts)))
    lookup = Encoder(FunctionBackend(lambda batch: np.stack([table[t] for t in batch]), f"{args.model} (table)",
                                     enc.dimension, normalizes=True))
    out: dict = {"model": args.model, "languages": langs, "precisions": {}}
    for precision in DTYPES:
        t0 = time.perf_counter()
        rows = [evaluate_mining(lookup, dev, test, MineConfig(dtype=precision), args.model)
                for dev, test in corpora.values()]
        f1 = float(np.mean([r.test.f1 for r in rows]))
        auto = float(np.mean([r.auto_test.f1 for r in rows]))
        size = bytes_per_sentence(precision, enc.dimension)
        out["precisions"][precision] = {"f1": f1, "f1_auto_threshold": auto, "bytes": size,
                                        "seconds": time.perf_counter() - t0,
                                        "per_language": {c: r.test.f1 for c, r in zip(corpora, rows)}}
        print(f"{precision:>8}: mining F1 {f1:.3f} (auto threshold {auto:.3f}) over {len(rows)} languages; "
              f"{size['stored']} bytes a sentence stored, {size['index']} in the search index "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(out, indent=1))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
