#!/usr/bin/env python3
"""How much injected noise the default pair filters remove, and how many true pairs they lose.

    python benchmarks/filter_noise.py [--split dev|test] [--n 2000] [--seed 0]

2,000 Bible pairs (``bible-en-ny:dev`` to choose settings, ``bible-en-ny:test`` — the New Testament — reported
once), of which 5% each get one kind of noise: the target replaced by its English (the source), the target
copied from the source with its case and punctuation changed, the target replaced by a UDHR sentence of another
language (not English, not Chichewa), the pair replaced by a near-duplicate of an earlier pair (case and
punctuation changed on both sides), the target cut to its first third. The default filters of
``xlsent data filter-pairs`` run with the declared languages (``--src-lang en --tgt-lang ny``); printed: the
share of each noise kind removed, of all noise, and of the true pairs (target: ≥ 95% and < 1%), and what each
filter removed.
"""

from __future__ import annotations

import argparse
import json
import random


def noisy_pairs(split: str, n: int, seed: int):
    from xlsent.data.bundled import load_bundled

    rng = random.Random(seed)
    ds = load_bundled(f"bible-en-ny:{split}")
    n = min(n, len(ds))
    rows = rng.sample(range(len(ds)), n)
    src, tgt = [ds[i]["src"] for i in rows], [ds[i]["tgt"] for i in rows]
    udhr = load_bundled("udhr")
    other = [t for t, lang in zip(udhr["tgt"], udhr["tgt_lang"]) if lang not in ("nya", "eng")]
    kinds = ["english", "copy", "other-language", "near-duplicate", "cut"]
    label = ["true"] * n
    per = n // 20
    chosen = rng.sample(range(per * 2, n), per * len(kinds))  # leave the first rows true: duplicates need earlier rows
    for k, kind in enumerate(kinds):
        for i in chosen[k * per:(k + 1) * per]:
            label[i] = kind
            if kind == "english":
                tgt[i] = src[i]
            elif kind == "copy":
                tgt[i] = src[i].lower().rstrip(".;:,") + "!"
            elif kind == "other-language":
                tgt[i] = rng.choice(other)
            elif kind == "near-duplicate":
                j = rng.choice([j for j in range(i) if label[j] == "true"])
                src[i], tgt[i] = src[j].upper().rstrip(".") + " .", tgt[j].lower().replace(",", "")
            else:
                tgt[i] = tgt[i][: max(1, len(tgt[i]) // 3)]
    return src, tgt, label, kinds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="dev", choices=("dev", "test"))
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-z", type=float, default=4.0)
    args = ap.parse_args()
    from xlsent.data.noise_filters import apply_noise_filters

    src, tgt, label, kinds = noisy_pairs(args.split, args.n, args.seed)
    keep, report = apply_noise_filters(src, tgt, ("en", "ny"), max_z=args.max_z)
    out = {"split": f"bible-en-ny:{args.split}", "pairs": len(src)}
    for kind in kinds + ["true"]:
        idx = [i for i, x in enumerate(label) if x == kind]
        out[kind] = {"pairs": len(idx), "removed": sum(not keep[i] for i in idx)}
    noise = [i for i, x in enumerate(label) if x != "true"]
    true = [i for i, x in enumerate(label) if x == "true"]
    out["noise_removed"] = sum(not keep[i] for i in noise) / len(noise)
    out["true_removed"] = sum(not keep[i] for i in true) / len(true)
    out["filters"] = [{"filter": f.name, "removed": f.removed} for f in report.filters]
    lost = [(src[i], tgt[i]) for i in true if not keep[i]]
    print(json.dumps(out, indent=1))
    print(f"noise removed {out['noise_removed']:.1%} (target ≥ 95%), true pairs removed {out['true_removed']:.2%} "
          f"(target < 1%)")
    for s, t in lost[:10]:
        print(f"  true pair removed: {s[:70]!r} ||| {t[:70]!r}")


if __name__ == "__main__":
    main()
