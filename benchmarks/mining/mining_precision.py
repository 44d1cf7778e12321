#!/usr/bin/env python3
"""Mining F1 and bytes a sentence at each width × precision (``xlsent mine --dimensions N --precision P``).

    python benchmarks/mining/mining_precision.py [-m e5-small[,MODEL…]] [--dimensions 384,256,128,64]
        [--precisions float32,float16,int8,ubinary] [--rescore 4] [--corpora udhr-dev,bible]
        [--langs all|CODE,…] [--bible-distractors 3000] [-o runs/mining-precision.json]

Corpora (what ``xlsent eval mining`` reads; the threshold is tuned on the first half, F1 is the second half's):

* ``udhr-dev`` — ``xlsent eval mining --dataset udhr-dev:CODE`` for each development language: every second
  paragraph of a half without its English, 2,000 English Bible verses as distractors; the figure is the mean over
  the languages. Development data: the choice of a recommended setting is made on it.
* ``udhr`` — the same over the 47 ``udhr`` languages (``--dataset udhr:CODE``): the test, read once a setting is
  chosen on ``udhr-dev``.
* ``bible`` — ``xlsent eval mining --dataset bible`` with ``--bible-distractors`` unrelated verses a side (the
  command's default is 7,000; 3,000 here to keep a model's encoding short on two cores): 1,000 gold pairs a half,
  **New-Testament verses** — no adapt model trains on them, but they are the NT: reported beside, not chosen on.

Every distinct text is embedded once a model (float32, full width); each width is cut from the full vector as
``--dimensions`` cuts it (``v[:N] / ‖v[:N]‖``) and each corpus is mined from a lookup table of those vectors with
the store at each precision — the same vectors, so the figures differ only by width and precision. Exact search
(the corpora are small: ``auto`` picks exact, a binary flat index for ``ubinary``); ``ubinary`` re-scores
k × ``--rescore`` Hamming candidates with its int8 vectors (each ``--rescore`` value is a row), and with
``--search-dimensions B`` finds them by the sign bits of the first B coordinates only (``xlsent mine
--search-dimensions B``: B/8 bytes a sentence in the index) before re-scoring at the row's width. Printed per model ×
width × precision: F1 at the tuned threshold and at ``xlsent mine``'s automatic one, their change from the
model's float16 full width (the default), and bytes a sentence (stored; in the search index).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-m", "--model", default="e5-small", help="one model or several, comma-separated")
    ap.add_argument("--dimensions", default="", help="widths, comma-separated (default: the full width only)")
    ap.add_argument("--precisions", default="float32,float16,int8,ubinary")
    ap.add_argument("--rescore", default="4", help="ubinary: k × this many Hamming candidates re-scored (comma list)")
    ap.add_argument("--search-dimensions", default="0", help="ubinary: index bits of the first N coordinates, the "
                    "candidates re-scored at the full width (comma list; 0 = every coordinate)")
    ap.add_argument("--center-codes", default="target", help="ubinary: what the bits are taken against — none, "
                    "target (the searched side's mean, the default) or own (each side's); comma list = a row each")
    ap.add_argument("--cache", type=Path, default=None, help="keep each model's vectors here (an .npy a model) and "
                    "reuse them")
    ap.add_argument("--corpora", default="udhr-dev", help="udhr-dev, udhr (the test: 47 languages), bible, or "
                    "several (comma-separated)")
    ap.add_argument("--langs", default="all", help="udhr-dev languages: all, or CODE,CODE,…")
    ap.add_argument("--bible-distractors", type=int, default=3000)
    ap.add_argument("-o", "--output", type=Path, default=Path("runs/mining-precision.json"))
    args = ap.parse_args()

    import numpy as np

    from xlsent.data.formats.comparable import bible_comparable, udhr_comparable
    from xlsent.data.sets.bundled import load_bundled, split_by_language
    from xlsent.encoding.encoder import Encoder, FunctionBackend
    from xlsent.encoding.width import cut
    from xlsent.evaluation.mining import evaluate_mining
    from xlsent.mining.index import IndexConfig
    from xlsent.mining.job import MineConfig
    from xlsent.mining.store import bytes_per_sentence

    corpora: dict[str, dict[str, list]] = {}
    for name in args.corpora.split(","):
        if name in ("udhr-dev", "udhr"):
            langs = (list(split_by_language(load_bundled(name))) if args.langs == "all"
                     else args.langs.split(","))
            corpora[name] = {c: [udhr_comparable(c, s, 2000, 0, name) for s in ("dev", "test")] for c in langs}
        elif name == "bible":
            corpora[name] = {"eng-nya": [bible_comparable(s, 1000, args.bible_distractors, 0)
                                         for s in ("dev", "test")]}
        else:
            ap.error(f"unknown corpus {name!r}: use udhr-dev, udhr or bible")
    texts = list(dict.fromkeys(t for per in corpora.values() for pair in per.values() for c in pair
                               for _, t in (*c.src, *c.tgt)))
    rescores = [int(x) for x in args.rescore.split(",")]
    prefixes = [int(x) for x in args.search_dimensions.split(",")]
    centers = args.center_codes.split(",")
    out = json.loads(args.output.read_text()) if args.output.exists() else {}
    for model in args.model.split(","):
        enc = Encoder.load(model)
        widths = [int(x) for x in args.dimensions.split(",")] if args.dimensions else [enc.dimension]
        t0 = time.perf_counter()
        import hashlib

        digest = hashlib.sha1(json.dumps([model, texts]).encode()).hexdigest()[:12]
        cached = args.cache / f"{digest}.npy" if args.cache else None
        if cached is not None and cached.exists():
            full = np.load(cached)
        else:
            full = enc.replace(normalize=True, show_progress=False).encode(texts)
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                np.save(cached, full)
        print(f"{model}: {len(texts)} texts embedded in {time.perf_counter() - t0:.0f} s", flush=True)
        rows = out.setdefault(model, {})
        for width in widths:
            vectors = cut(full, width) if width != enc.dimension else full
            table = dict(zip(texts, vectors))
            lookup = Encoder(FunctionBackend(lambda batch: np.stack([table[t] for t in batch]), f"{model} (table)",
                                             width, normalizes=True))
            for precision in args.precisions.split(","):
                binary = precision == "ubinary"
                for rescore, bits, centered in ([(r, b, c) for c in centers for b in prefixes if b < width
                                                 for r in rescores] if binary else [(None, 0, "")]):
                    key = (f"{width}/{precision}" + (f"/r{rescore}" if binary else "") + (f"/b{bits}" if bits else "")
                           + (f"/{centered}" if binary else ""))
                    cfg = MineConfig(dtype=precision, index=IndexConfig(rescore=rescore or 4, bits=bits,
                                                                        center_codes=centered or "target"))
                    t = time.perf_counter()
                    size = bytes_per_sentence(precision, width)
                    rec: dict = {"width": width, "precision": precision, "rescore": rescore, "bits": bits,
                                 "center_codes": centered,
                                 "bytes": {**size, "index": bits // 8} if bits else size}
                    for name, per in corpora.items():
                        res = [evaluate_mining(lookup, dev, test, cfg, model) for dev, test in per.values()]
                        rec[name] = {"f1": float(np.mean([r.test.f1 for r in res])),
                                     "f1_auto_threshold": float(np.mean([r.auto_test.f1 for r in res])),
                                     "per_language": {c: r.test.f1 for c, r in zip(per, res)}}
                    rec["seconds"] = time.perf_counter() - t
                    rows[key] = rec
                    print(f"  {key:>18}: " + "; ".join(f"{n} F1 {rec[n]['f1']:.3f} (auto {rec[n]['f1_auto_threshold']:.3f})"
                                                       for n in corpora)
                          + f"; {rec['bytes']['stored']} B stored, {rec['bytes']['index']} B in the index", flush=True)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(out, indent=1))
    report(out, list(corpora))
    print(f"wrote {args.output}")


def report(out: dict, corpora: list[str]) -> None:
    """A markdown table: each model × width × precision, F1 (tuned / automatic threshold) and its change in points
    from the same model's float16 full width (``xlsent mine``'s default)."""
    print("\n| model | width | precision | bytes stored / in the index | "
          + " | ".join(f"{n} F1 tuned (Δ) | {n} F1 auto (Δ)" for n in corpora) + " |")
    print("|---|---|---|---|" + "---|---|" * len(corpora))
    for model, rows in out.items():
        full = max(r["width"] for r in rows.values())
        base = rows.get(f"{full}/float16")
        for key, r in rows.items():
            if not all(n in r for n in corpora):
                continue
            cells = []
            for n in corpora:
                for f in ("f1", "f1_auto_threshold"):
                    d = f" ({100 * (r[n][f] - base[n][f]):+.1f})" if base and n in base else ""
                    cells.append(f"{r[n][f]:.3f}{d}")
            prec = r["precision"] + (f" (k × {r['rescore']} re-scored)" if r["rescore"] else "") + (
                f", index of the first {r['bits']} coordinates' bits" if r.get("bits") else "") + (
                f", bits against {r['center_codes']}" if r.get("center_codes") else "")
            print(f"| {Path(model).parent.name if '/' in model else model} | {r['width']} | {prec} | "
                  f"{r['bytes']['stored']} / {r['bytes']['index']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
