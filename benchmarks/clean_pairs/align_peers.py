#!/usr/bin/env python3
"""Sentence alignment side by side on the bundled gold: xlsent's Vecalign, a plain 1-1 cosine DP, Gale–Church.

    pip install -e '.[bench]'     # nltk, for its Gale–Church aligner (the peer)
    python benchmarks/clean_pairs/align_peers.py [--split dev|test] [--model e5-small] [--speed]

Both variants of ``bible-align`` (``--split test``: the held-out New Testament, each chapter a document; ``dev``:
the development books): verses split into sentences (1-N and N-M blocks), and 5% of verses deleted on one side.
Systems, all on the same documents:

* ``xlsent`` — ``xlsent align`` (Vecalign: overlaps of up to 3 sentences, normalised costs, deletions; plus a
  Gale–Church length cost at weight 0.1);
* ``plain`` — ``xlsent align --plain``: the same DP with 1-1 steps, deletions and a cost of 1 − cosine (no
  length cost), on the same model's vectors;
* ``gale-church`` — nltk's ``nltk.translate.gale_church.align_blocks`` on the sentences' character lengths
  (no model), each chapter one block.

Printed: strict and lax P/R/F1 (Vecalign's scorer) per system and variant. Targets: xlsent's strict F1 ≥ 0.95 on
the split-verse variant and ≥ 15 points above Gale–Church on the deletion variant. ``--speed``: one document pair
of 2,000 × 2,000 sentences (the split's first 2,000 sentences on each side), aligned from the text (embedding
included) — wall seconds (target ≤ 60 s on 2 cores) and the peak resident memory above the loaded model (target
< 1 GB).
"""

from __future__ import annotations

import argparse
import json
import threading
import time


def gale_church(src: list[str], tgt: list[str]):
    """nltk's Gale–Church alignment of one document, as blocks (aligned sentence pairs joined into connected
    runs; sentences it leaves out become deletions)."""
    from nltk.translate.gale_church import align_blocks

    from xlsent.data.formats.alignment import Alignment

    links = align_blocks([len(s) for s in src], [len(t) for t in tgt])
    blocks: list[tuple[list[int], list[int]]] = []
    for i, j in sorted(links):
        if blocks and (i in blocks[-1][0] or j in blocks[-1][1]):
            if i not in blocks[-1][0]:
                blocks[-1][0].append(i)
            if j not in blocks[-1][1]:
                blocks[-1][1].append(j)
        else:
            blocks.append(([i], [j]))
    seen_s = {i for b in blocks for i in b[0]}
    seen_t = {j for b in blocks for j in b[1]}
    out = Alignment([], [], [])
    for s, t in blocks:
        out.src.append(sorted(s))
        out.tgt.append(sorted(t))
    out.src += [[i] for i in range(len(src)) if i not in seen_s]
    out.tgt += [[] for i in range(len(src)) if i not in seen_s]
    out.src += [[] for j in range(len(tgt)) if j not in seen_t]
    out.tgt += [[j] for j in range(len(tgt)) if j not in seen_t]
    out.score = [0.0] * len(out.src)
    return out


class PeakRss:
    """The process's peak resident memory while inside the block, sampled every 10 ms (from /proc)."""

    def __enter__(self):
        self.base = self.peak = self._rss()
        self._stop = False
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self):
        while not self._stop:
            self.peak = max(self.peak, self._rss())
            time.sleep(0.01)

    @staticmethod
    def _rss() -> int:
        with open("/proc/self/statm") as f:
            import os

            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def __exit__(self, *exc):
        self._stop = True
        self._thread.join()
        self.peak = max(self.peak, self._rss())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="dev", choices=("dev", "test"))
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--max-overlap", default="3", help="one value, or several comma-separated (a grid: every "
                    "combination of the three options is run for xlsent, the embeddings computed once)")
    ap.add_argument("--deletion-quantile", default="0.02")
    ap.add_argument("--length-weight", default="0.1", help="weight of the Gale–Church length cost (one or several)")
    ap.add_argument("--runs", default="mean", help="mean | concat (or both, comma-separated)")
    ap.add_argument("--speed-backends", default="torch,onnx", help="backends the --speed document pair is "
                    "embedded with (onnx: the model exported once, fp32, into the cache)")
    ap.add_argument("--speed", action="store_true", help="also time a 2,000 × 2,000-sentence document pair")
    ap.add_argument("--systems", default="xlsent,plain,gale-church", help="'' with --speed: the timing alone")
    ap.add_argument("-o", "--output", default=None, help="write the figures as JSON here")
    args = ap.parse_args()

    from xlsent.aligner.vecalign import EMBED_BATCH, AlignConfig, align_documents
    from xlsent.data.formats.alignment import bible_align
    from xlsent.encoding.encoder import Encoder
    from xlsent.evaluation.alignment import evaluate_alignment
    from xlsent.exporter.load import load_encoder

    encoder = Encoder.load(args.model, normalize=True, memo=True, batch_size=EMBED_BATCH)  # memo: variants share runs
    import itertools

    grid = list(itertools.product([int(x) for x in args.max_overlap.split(",")],
                                  [float(x) for x in args.deletion_quantile.split(",")], args.runs.split(","),
                                  [float(x) for x in args.length_weight.split(",")]))
    cfgs = {}
    for system in filter(None, args.systems.split(",")):
        if system == "xlsent":
            for m, q, r, w in grid:
                name = "xlsent" if len(grid) == 1 else f"xlsent N={m} q={q} {r} w={w}"
                cfgs[name] = AlignConfig(max_overlap=m, deletion_quantile=q, runs=r, length_weight=w)
        elif system == "plain":
            cfgs["plain"] = AlignConfig(max_overlap=1, normalise=False, deletion_quantile=grid[0][1], runs="mean",
                                         length_weight=0.0)
        else:
            cfgs[system] = None
    systems = list(cfgs)
    m, q, r, w = grid[0]
    speed_cfg = AlignConfig(max_overlap=m, deletion_quantile=q, runs=r, length_weight=w)
    names = ("bible-align:dev", "bible-align:dev-deletions") if args.split == "dev" else (
        "bible-align", "bible-align:deletions")
    results: dict = {"model": args.model, "split": args.split, "config": vars(args)}
    for name in names:
        docs = bible_align(name)
        for system in systems:
            t0 = time.perf_counter()
            if system == "gale-church":
                scores, _ = evaluate_alignment(docs, lambda d: gale_church(d.src, d.tgt))
            else:
                scores, _ = evaluate_alignment(docs, lambda d, c=cfgs[system]: align_documents(
                    d.src, d.tgt, encoder.encode, encoder.dimension, c, ("en", "ny")))
            s = scores
            results[f"{name} / {system}"] = {**s.to_dict(), "seconds": round(time.perf_counter() - t0, 1)}
            print(f"{name:28s} {system:26s} strict F1 {s.strict_f1:.3f} (P {s.strict_precision:.3f} R "
                  f"{s.strict_recall:.3f})  lax F1 {s.lax_f1:.3f}  [{time.perf_counter() - t0:.0f} s]", flush=True)
    if args.speed:
        docs = bible_align(names[0])
        src = [s for d in docs for s in d.src][:2000]
        tgt = [t for d in docs for t in d.tgt][:2000]
        for backend in args.speed_backends.split(","):
            fresh = load_encoder(args.model, backend=backend, normalize=True, batch_size=EMBED_BATCH)  # no memo
            fresh.encode(["warm-up"])
            with PeakRss() as mem:
                t0 = time.perf_counter()
                a = align_documents(src, tgt, fresh.encode, fresh.dimension, speed_cfg, ("en", "ny"))
                wall = time.perf_counter() - t0
            results[f"speed {backend}"] = {"sentences": [len(src), len(tgt)], "seconds": round(wall, 1),
                                           "peak_above_model_mib": round((mem.peak - mem.base) / 2**20),
                                           "blocks": len(a.src)}
            print(f"{backend}: {len(src)} × {len(tgt)} sentences aligned in {wall:.1f} s (embedding included; "
                  f"target ≤ 60 s), peak {(mem.peak - mem.base) / 2**20:,.0f} MiB above the loaded model "
                  "(target < 1,024)", flush=True)
    if args.output:
        from xlsent.utils.io import write_json_atomic

        write_json_atomic(args.output, results)
    else:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
