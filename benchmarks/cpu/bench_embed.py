#!/usr/bin/env python3
"""``xlsent embed`` against sentence-transformers' ``encode``: same model, same texts, same cores, one process.

    python benchmarks/cpu/bench_embed.py [--model e5-small] [--n 1000] [--split dev] [--batch-size 64] [--repeats 3]
                                     [--onnx] [--work runs/bench-embed]

Texts: ``n`` New-Testament verse pairs of ``bible-en-ny:SPLIT`` (both languages, 2n texts). Timed, the two in
turn (``repeats`` rounds, best of each, after one untimed warm-up each):

* **sentence-transformers** — ``SentenceTransformer.encode`` in fp32, its own batching (the peer);
* **xlsent** — the :class:`~xlsent.encoding.encoder.Encoder` every command runs (``xlsent embed``'s path), with
  ``--dtype auto``: batches sorted by piece count, and bf16 autocast where this CPU was timed faster in bf16
  (:mod:`xlsent.utils.cpu_bf16`; the verdict is printed);
* **xlsent fp32** — the same encoder in fp32 (what sorting alone buys);
* with ``--onnx``: **xlsent onnx** — the model exported once to ONNX (fp32, cached) and run by onnxruntime, the
  ``--backend onnx`` path, and **xlsent onnx int8** — ``xlsent export --int8``'s graph (built into ``--work``).

Printed: sentences/s of each, the ratios to sentence-transformers, the smallest and mean cosine of xlsent's vectors
to sentence-transformers' fp32 vectors, and P@1 both ways over the n pairs (plain argmax) for each. Run on an
otherwise idle machine (torch's threads: all cores).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def p_at_1(src: np.ndarray, tgt: np.ndarray) -> tuple[float, float]:
    s = src / np.linalg.norm(src, axis=1, keepdims=True)
    t = tgt / np.linalg.norm(tgt, axis=1, keepdims=True)
    sim = s @ t.T
    gold = np.arange(len(s))
    return float((sim.argmax(1) == gold).mean()), float((sim.argmax(0) == gold).mean())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--split", default="dev", choices=("dev", "test"))
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--onnx", action="store_true", help="also the ONNX backends (fp32 and int8)")
    ap.add_argument("--work", default="runs/bench-embed", help="where --onnx builds the int8 export")
    args = ap.parse_args(argv)

    import torch

    from xlsent.data.sets.pairs import load_pairs
    from xlsent.encoding.encoder import Encoder
    from xlsent.models.handle import load_model
    from xlsent.models.registry import quiet_libraries
    from xlsent.utils.cpu_bf16 import cpu_name, describe, shape_of
    from xlsent.utils.device import use_device, use_encoding_dtype

    quiet_libraries()
    use_device("cpu")
    ds = load_pairs(f"bible-en-ny:{args.split}", dedupe=False, sample=args.n, seed=0).dataset
    src, tgt = list(ds["src"]), list(ds["tgt"])
    texts = src + tgt
    handle = load_model(args.model)
    model = handle.model
    rows = describe(shape_of(model))
    print(f"model {args.model}, {len(texts)} texts of bible-en-ny:{args.split}, batch {args.batch_size}, "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads, CPU {cpu_name()}")
    print(f"this CPU's encoding verdict: {rows['CPU encoding']}")
    use_encoding_dtype("auto")
    auto = Encoder.load(handle, batch_size=args.batch_size, show_progress=False)
    use_encoding_dtype("fp32")
    fp32 = Encoder.load(handle, batch_size=args.batch_size, show_progress=False)
    use_encoding_dtype("auto")

    def st() -> np.ndarray:
        with torch.inference_mode():
            return model.encode(texts, batch_size=args.batch_size, show_progress_bar=False, convert_to_numpy=True,
                                prompt=handle.prompt)

    runs = {"sentence-transformers": st, f"xlsent ({auto.backend.dtype})": lambda: auto.encode(texts),
            "xlsent fp32": lambda: fp32.encode(texts)}
    if args.onnx:
        from pathlib import Path

        from xlsent.exporter.load import load_encoder

        onnx = load_encoder(args.model, backend="onnx").replace(batch_size=args.batch_size, show_progress=False)
        runs["xlsent onnx"] = lambda: onnx.encode(texts)
        int8_dir = Path(args.work) / f"{Path(str(args.model)).name}-int8"
        if not int8_dir.exists():
            import subprocess
            import sys

            subprocess.run([str(Path(sys.executable).with_name("xlsent")), "export", str(args.model), "-o",
                            str(int8_dir), "--int8"], check=True)
        int8 = Encoder.load(str(int8_dir), batch_size=args.batch_size, show_progress=False)
        runs["xlsent onnx int8"] = lambda: int8.encode(texts)
    out: dict[str, np.ndarray] = {}
    best = {name: float("inf") for name in runs}
    for name, run in runs.items():  # warm-up
        out[name] = run()
    for _ in range(args.repeats):
        for name, run in runs.items():
            t = time.perf_counter()
            out[name] = run()
            best[name] = min(best[name], time.perf_counter() - t)
    ref = out["sentence-transformers"]
    peer = best["sentence-transformers"]
    print(f"{'':>24} {'sent/s':>8} {'× ST':>6} {'cos min':>8} {'cos mean':>9} {'P@1 ny→en':>10} {'P@1 en→ny':>10}")
    for name, seconds in best.items():
        v = out[name]
        cos = (v * ref).sum(1) / np.linalg.norm(v, axis=1) / np.linalg.norm(ref, axis=1)
        fwd, back = p_at_1(v[len(src):], v[: len(src)])
        print(f"{name:>24} {len(texts) / seconds:8.1f} {peer / seconds:6.2f} {cos.min():8.5f} {cos.mean():9.5f} "
              f"{fwd:10.4f} {back:10.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
