#!/usr/bin/env python3
"""Encoding speed and size of a multi-stage student against the model it was distilled from.

    python benchmarks/distillation/bench_student_speed.py --student RUN/model [--assistant e5-small] [--threads 2]

Both models encode the same held-out New-Testament verses (``bible-en-ny:test``, English and
Chichewa sides) with sentence-transformers' ``encode`` in this process, alternating runs
(best of ``--repeats``), on ``--threads`` CPU threads (2 = the target machine). Prints
sentences/s, the speed ratio, and parameter counts (Ding et al. Tables 1–2 style).
Without ``--student`` an untrained student of the given shape is built (speed does not
depend on the weights).
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--student", default=None)
    ap.add_argument("--assistant", default="e5-small")
    ap.add_argument("--bottleneck", type=int, default=128)
    ap.add_argument("--ru-layers", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--n", type=int, default=512, help="sentences per run (half English, half Chichewa)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats-timing", type=int, default=3)
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from xlsent.data.sets.bundled import load_bundled
    from xlsent.models.handle import load_model
    from xlsent.models.registry import quiet_libraries
    from xlsent.models.student import build_student_st, load_student, size_report

    quiet_libraries()
    ds = load_bundled("bible-en-ny:test").shuffle(seed=0).select(range(args.n // 2))
    texts = list(ds["src"]) + list(ds["tgt"])
    assistant = load_model(args.assistant).model
    student = (load_student(args.student) if args.student else
               build_student_st(assistant, args.ru_layers, args.repeats, args.bottleneck))
    for m in (assistant, student):
        m.max_seq_length = 128
        m.encode(texts[:32], batch_size=args.batch_size)  # warm-up
    best = {"assistant": float("inf"), "student": float("inf")}
    for _ in range(args.repeats_timing):
        for name, m in (("assistant", assistant), ("student", student)):
            t0 = time.perf_counter()
            with torch.inference_mode():
                m.encode(texts, batch_size=args.batch_size)
            best[name] = min(best[name], time.perf_counter() - t0)
    a, s = size_report(assistant[0].auto_model), size_report(student[0].auto_model)
    out = {
        "threads": args.threads, "sentences": len(texts),
        "assistant_sent_per_s": len(texts) / best["assistant"], "student_sent_per_s": len(texts) / best["student"],
        "speed_ratio": best["assistant"] / best["student"],
        "assistant_params": a.to_dict(), "student_params": s.to_dict(), "param_share": s.total / a.total,
    }
    print(f"{len(texts)} verses, {args.threads} threads, best of {args.repeats_timing}")
    print(f"assistant {args.assistant}: {out['assistant_sent_per_s']:.1f} sent/s, {a.total / 1e6:.2f}M params "
          f"(embedding {a.embedding / 1e6:.2f}M, encoder {a.encoder / 1e6:.2f}M, {a.layer_passes} layer passes)")
    print(f"student: {out['student_sent_per_s']:.1f} sent/s, {s.total / 1e6:.2f}M params "
          f"(embedding {s.embedding / 1e6:.2f}M, encoder {s.encoder / 1e6:.2f}M, {s.unique_layers} layers × "
          f"{s.layer_passes // max(s.unique_layers, 1)} = {s.layer_passes} passes)")
    print(f"speed ratio student/assistant: {out['speed_ratio']:.2f}×; parameters: {100 * out['param_share']:.1f}%")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
