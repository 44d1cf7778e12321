#!/usr/bin/env python3
"""Memory of merging IVF sub-indexes into one (``xlsent.mining.index.merge_parts``, what a search worker does on
loading a side's index or one search group of it) against the part files' bytes, and against a balanced merge.

    python benchmarks/mining/merge_parts_memory.py [--parts 20] [--rows 1000000] [--bits 128] [--nlist 256] [-o DIR]

Builds ``--parts`` binary IVF sub-indexes of ``--rows`` random codes each (copies of one trained index, global
ids, as a mining job's), then, each in a fresh process: the resident memory the merged index holds and the peak
while merging, for ``merge_parts`` (in order, then the freed heap handed back) and for a balanced merge (runs of
equal numbers of parts, as a binary counter adds), each beside the part files' total bytes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

MEASURE = r"""
import resource, sys, faiss
from pathlib import Path
from xlsent.mining.index import _trim_heap, merge_parts

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024

paths = sorted(Path(sys.argv[1]).glob("part-*.faiss"))
base = rss()
if sys.argv[2] == "in-order":
    index = merge_parts(paths, faiss.read_index_binary)
else:  # balanced: runs of equal numbers of parts merged, then the smaller runs take in the larger
    runs = []
    for p in paths:
        index, n = faiss.read_index_binary(str(p)), 1
        while runs and runs[-1][1] == n:
            first, m = runs.pop()
            index.merge_from(first, 0)
            del first
            n += m
        runs.append((index, n))
    index = runs.pop()[0]
    while runs:
        larger = runs.pop()[0]
        index.merge_from(larger, 0)
        del larger
    _trim_heap()
files = sum(p.stat().st_size for p in paths) / 2**20
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - base
print(f"{sys.argv[2]}: {index.ntotal:,} rows; holds {rss() - base:,.0f} MiB ({(rss() - base) / files:.2f}× the files), "
      f"peak {peak:,.0f} MiB ({peak / files:.2f}×); part files {files:,.0f} MiB", flush=True)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", type=int, default=20)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--bits", type=int, default=128)
    ap.add_argument("--nlist", type=int, default=256)
    ap.add_argument("-o", "--output", type=Path, default=None, help="keep the part files here (default: temporary)")
    a = ap.parse_args()
    import faiss
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        out = a.output or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(0)
        trained = faiss.IndexBinaryIVF(faiss.IndexBinaryFlat(a.bits), a.bits, a.nlist)
        trained.train(rng.integers(0, 256, (max(50_000, 64 * a.nlist), a.bits // 8), dtype=np.uint8))
        for p in range(a.parts):
            part = faiss.clone_binary_index(trained)
            part.add_with_ids(rng.integers(0, 256, (a.rows, a.bits // 8), dtype=np.uint8),
                              np.arange(p * a.rows, (p + 1) * a.rows))
            faiss.write_index_binary(part, str(out / f"part-{p:05d}.faiss"))
            del part
        for how in ("in-order", "balanced"):
            subprocess.run([sys.executable, "-c", MEASURE, str(out), how], check=True)


if __name__ == "__main__":
    main()
