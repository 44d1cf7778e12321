#!/usr/bin/env python3
"""Backends side by side: torch fp32, ONNX fp32, ONNX int8, trimmed vocabulary + int8, low-rank or
product-quantised tail + int8 —
speed, quality, size, memory.

    python benchmarks/export/bench_backends.py [--model e5-small] [--work runs/backends] [--threads 1,2] [--batch 1,32]
                                        [--keep-vocab 80000] [--tail 40000,96] [--tail-pq 40000,96]
                                        [--folder NAME=PATH ...] [--no-quality] [--no-speed] [--mining] [--resume]

``trim-int8`` removes every piece ``--keep-vocab``'s rule does not keep; ``tail-int8`` keeps those pieces at low
rank instead (``xlsent export --keep-vocab HEAD --tail-rank R``, ``--tail HEAD,R``: nothing re-segmented), and
``tailpq-int8`` as product-quantisation codes (``--tail-pq M``, ``--tail-pq HEAD,M`` here). ``--folder NAME=PATH``
adds an export folder made by hand (e.g. ``xlsent export --int8`` with other settings) as one more variant.

Every variant runs in its own child process (so peak memory is its own), one after another, with the
same thread count for torch (``torch.set_num_threads``) and onnxruntime (intra-op threads) — the
``--threads`` of xlsent. Speed: sentences/s on short texts (New-Testament verses) and long texts (eight
consecutive verses joined, ≈ 250 pieces), best of ``--repeats`` after a warm-up, as ratios to torch fp32
of the same run. Quality: P@1 both directions on 1,000 held-out NT verse pairs (seed 0) with bootstrap
CIs, and on every UDHR language (mean and per language). Exports are built once into ``--work``
(the int8 settings are ``xlsent export --int8``'s defaults). ``--mining`` adds ``xlsent eval mining
--dataset bible`` (dev + test corpora, 1,000 gold pairs and ``--mining-distractors`` unrelated sentences a
side each; encoding, search and threshold included), timed, with its test F1.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

VARIANTS = ("torch", "onnx-fp32", "onnx-int8", "trim-int8", "tail-int8", "tailpq-int8")


def build(variant: str, model: str, work: Path, keep_vocab: int, tail: tuple[int, int] = (40000, 96),
          tail_pq: tuple[int, int] = (40000, 96)) -> str:
    """The folder (or model name) a variant runs."""
    from xlsent.exporter.folder import export_model, is_export_folder
    from xlsent.exporter.quantize import default_int8
    from xlsent.models.vocab.trim import VocabSettings

    if variant == "torch":
        return model
    folder = work / variant
    if not is_export_folder(folder):
        print(f"[build] {variant} → {folder}", file=sys.stderr, flush=True)
        int8 = default_int8() if variant.endswith("int8") else None
        vocab = VocabSettings(top=keep_vocab) if variant.startswith("trim") else None
        if variant.startswith("tail-"):
            vocab = VocabSettings(top=tail[0], tail_rank=tail[1])
        if variant.startswith("tailpq-"):
            vocab = VocabSettings(top=tail_pq[0], tail_pq=tail_pq[1])
        export_model(model, folder, int8=int8, keep_vocab=vocab, log=lambda m: print(m, file=sys.stderr))
    return str(folder)


def texts_for_speed(n: int) -> dict[str, list[str]]:
    from xlsent.data.sets.pairs import load_pairs

    ds = load_pairs("bible-en-ny:test", dedupe=False).dataset
    src, tgt = list(ds["src"]), list(ds["tgt"])
    short = (src[: n // 2] + tgt[: n // 2])[:n]
    long = [" ".join(src[i : i + 8]) for i in range(0, 8 * (n // 2), 8)] + \
           [" ".join(tgt[i : i + 8]) for i in range(0, 8 * (n // 2), 8)]
    return {"short": short, "long": long[:n]}


def worker(args) -> None:
    """One variant: speed at each threads × batch × length, then quality; JSON on stdout."""

    from xlsent.exporter.load import load_encoder
    from xlsent.models.registry import quiet_libraries

    quiet_libraries()
    out: dict = {"variant": args.worker, "speed": []}
    texts = texts_for_speed(args.n_speed)
    backend = "torch" if args.worker == "torch" else "onnx"
    for threads in args.threads if args.speed else []:
        enc = load_encoder(args.target, backend=backend, threads=threads)
        for batch in args.batch:
            for kind, pool in texts.items():
                pool = pool[: args.n_batch1] if batch == 1 else pool
                e = enc.replace(batch_size=batch)
                e.encode(pool[: max(batch, 8)])  # warm-up
                best = float("inf")
                for _ in range(args.repeats):
                    t = time.perf_counter()
                    e.encode(pool)
                    best = min(best, time.perf_counter() - t)
                out["speed"].append({"threads": threads, "batch": batch, "texts": kind, "n": len(pool),
                                     "sentences_per_s": len(pool) / best})
                print(f"[{args.worker}] threads {threads} batch {batch} {kind}: {len(pool) / best:.1f}/s",
                      file=sys.stderr, flush=True)
    if args.quality:
        out["quality"] = quality(load_encoder(args.target, backend=backend, threads=max(args.threads), memo=True))
    if args.mining:
        from xlsent.data.formats.comparable import bible_comparable
        from xlsent.evaluation.mining import evaluate_mining
        from xlsent.mining.job import MineConfig

        corpora = [bible_comparable(s, 1000, args.mining_distractors, 0) for s in ("dev", "test")]
        enc = load_encoder(args.target, backend=backend, threads=max(args.threads))
        t = time.perf_counter()
        res = evaluate_mining(enc, corpora[0], corpora[1], MineConfig(), args.worker)
        out["mining"] = {"seconds": time.perf_counter() - t, "f1": res.test.f1,
                         "precision": res.test.precision, "recall": res.test.recall,
                         "test_sentences": [res.test_corpus["src_sentences"], res.test_corpus["tgt_sentences"]]}
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    target = Path(args.target)
    if target.is_dir() and (target / "model.onnx").exists():
        out["size_mib"] = sum(f.stat().st_size for f in target.iterdir() if f.is_file()) / 2**20
        man = json.loads((target / "xlsent_onnx.json").read_text())
        out["parameters"] = (man.get("vocab") or {}).get("model_parameters_after")
    print(json.dumps(out))
    sys.stdout.flush()
    os._exit(0)


def quality(enc) -> dict:
    from xlsent.data.sets.bundled import split_by_language
    from xlsent.data.sets.pairs import load_pairs, side_langs
    from xlsent.evaluation.retrieval import evaluate_many, mean_row

    nt = load_pairs("bible-en-ny:test", dedupe=False, sample=1000, seed=0).dataset
    r = evaluate_many({"nt": (list(nt["src"]), list(nt["tgt"]), *side_langs(nt))}, enc, "", "cosine", 1000, 0, 4,
                      "bible-en-ny:test")[0]
    ud = load_pairs("udhr", dedupe=False).dataset
    groups = {k: (list(p["src"]), list(p["tgt"]), *side_langs(p)) for k, p in split_by_language(ud).items()}
    u = evaluate_many(groups, enc, "", "cosine", 1, 0, 4, "udhr")
    m = mean_row(u)
    return {"nt": {"en2ny": r.src2tgt["p@1"], "ny2en": r.tgt2src["p@1"],
                   "en2ny_ci": r.src2tgt["ci95"]["p@1"], "ny2en_ci": r.tgt2src["ci95"]["p@1"]},
            "udhr_mean": {"en2xx": m["src2tgt"]["p@1"], "xx2en": m["tgt2src"]["p@1"]},
            "udhr": {x.tgt_lang: {"en2xx": x.src2tgt["p@1"], "xx2en": x.tgt2src["p@1"]} for x in u}}


def source_parameters(model: str) -> int:
    from xlsent.models.handle import load_model

    return int(sum(p.numel() for p in load_model(model).model.parameters()))


def report(results: dict, args) -> None:
    torch_speed = {(s["threads"], s["batch"], s["texts"]): s["sentences_per_s"] for s in results["torch"]["speed"]}
    if torch_speed:
        print(f"\nmodel {args.model}; sentences/s (ratio to torch fp32), best of {args.repeats}; "
              f"short = NT verses, long = 8 verses joined")
        head = "| variant | " + " | ".join(f"{t} thr, batch {b}, {k}" for (t, b, k) in torch_speed) + " |"
        print(head)
        print("|" + "---|" * (len(torch_speed) + 1))
    for v, r in results.items() if torch_speed else ():
        cells = []
        for s in r["speed"]:
            key = (s["threads"], s["batch"], s["texts"])
            cells.append(f"{s['sentences_per_s']:.1f} ({s['sentences_per_s'] / torch_speed[key]:.2f}×)")
        print(f"| {v} | " + " | ".join(cells) + " |")
    params = source_parameters(args.model)
    print("\n| variant | NT P@1 en→ny [95% CI] | NT P@1 ny→en [95% CI] | UDHR mean en→xx | UDHR mean xx→en | "
          "parameters | file MiB | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|")
    for v, r in results.items():
        q = r.get("quality")
        if q:
            nt, um = q["nt"], q["udhr_mean"]
            qcells = (f"{100 * nt['en2ny']:.1f} [{100 * nt['en2ny_ci'][0]:.1f}, {100 * nt['en2ny_ci'][1]:.1f}] | "
                      f"{100 * nt['ny2en']:.1f} [{100 * nt['ny2en_ci'][0]:.1f}, {100 * nt['ny2en_ci'][1]:.1f}] | "
                      f"{100 * um['en2xx']:.1f} | {100 * um['xx2en']:.1f}")
        else:
            qcells = "– | – | – | –"
        p = r.get("parameters") or params
        print(f"| {v} | {qcells} | {p / 1e6:.1f}M ({100 * p / params:.0f}%) | {r.get('size_mib', float('nan')):.0f} | "
              f"{r['peak_rss_mib']:.0f} |")
    if all("quality" in r for r in results.values()):
        langs = list(results["torch"]["quality"]["udhr"])
        print("\nUDHR P@1 per language, en→xx / xx→en (×100):\n")
        print("| lang | " + " | ".join(results) + " |")
        print("|---|" + "---|" * len(results))
        for lang in langs:
            print(f"| {lang} | " + " | ".join(
                f"{100 * r['quality']['udhr'][lang]['en2xx']:.0f} / {100 * r['quality']['udhr'][lang]['xx2en']:.0f}"
                for r in results.values()) + " |")
    if all("mining" in r for r in results.values()):
        print(f"\n| variant | eval mining --dataset bible --n-distractors {args.mining_distractors}: seconds (dev + test, "
              "encoding included) | test F1 | P | R |")
        print("|---|---|---|---|---|")
        for v, r in results.items():
            m = r["mining"]
            print(f"| {v} | {m['seconds']:.0f} | {m['f1']:.3f} | {m['precision']:.3f} | {m['recall']:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--work", type=Path, default=Path("runs/backends"))
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batch", default="1,32")
    ap.add_argument("--n-speed", type=int, default=256, help="texts per speed measurement (batch 32)")
    ap.add_argument("--n-batch1", type=int, default=64, help="texts per speed measurement at batch 1")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--keep-vocab", type=int, default=80000)
    ap.add_argument("--tail", default="40000,96", help="tail-int8: full rows for the top HEAD pieces (+ the bundled "
                    "training text's), the rest at rank R")
    ap.add_argument("--tail-pq", default="40000,96", help="tailpq-int8: full rows for the top HEAD pieces (+ the "
                    "bundled training text's), the rest as M product-quantisation codes a row")
    ap.add_argument("--no-quality", dest="quality", action="store_false")
    ap.add_argument("--no-speed", dest="speed", action="store_false")
    ap.add_argument("--out", default="bench.json", help="results file inside --work")
    ap.add_argument("--resume", action="store_true", help="keep the variants already in --out (same settings) and "
                    "run only the others")
    ap.add_argument("--folder", action="append", default=[], help="NAME=PATH: also run this export folder")
    ap.add_argument("--mining", action="store_true")
    ap.add_argument("--mining-distractors", type=int, default=2000, help="unrelated sentences per side and split")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--target", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.threads = [int(x) for x in str(args.threads).split(",")]
    args.batch = [int(x) for x in str(args.batch).split(",")]
    if args.worker:
        return worker(args)
    bad = [f for f in args.folder if "=" not in f or not Path(f.split("=", 1)[1]).is_dir()]
    if bad:
        sys.exit(f"--folder {', '.join(bad)}: give NAME=PATH with PATH an export folder")
    folders = dict(f.split("=", 1) for f in args.folder)
    variants = [v for v in args.variants.split(",") if v] + [f for f in folders if f not in args.variants.split(",")]
    unknown = [v for v in variants if v not in VARIANTS and v not in folders]
    if unknown or "torch" not in variants:
        sys.exit(f"--variants: choose from {', '.join(VARIANTS)}, torch included (the reference)")
    args.work.mkdir(parents=True, exist_ok=True)
    results = {}
    if args.resume and (args.work / args.out).exists():
        done = json.loads((args.work / args.out).read_text())
        results = {v: done[v] for v in variants if v in done}
        print(f"resuming: {', '.join(results) or 'nothing'} already in {args.work / args.out}", file=sys.stderr)
    for v in variants:
        if v in results:
            continue
        head, rank = (int(x) for x in args.tail.split(","))
        pq_head, slots = (int(x) for x in args.tail_pq.split(","))
        target = folders.get(v) or build(v, args.model, args.work, args.keep_vocab, (head, rank), (pq_head, slots))
        cmd = [sys.executable, __file__, "--worker", v, "--target", target, "--threads", ",".join(map(str, args.threads)),
               "--batch", ",".join(map(str, args.batch)), "--n-speed", str(args.n_speed), "--n-batch1",
               str(args.n_batch1), "--repeats", str(args.repeats), "--model", args.model]
        cmd += [] if args.quality else ["--no-quality"]
        cmd += [] if args.speed else ["--no-speed"]
        cmd += ["--mining", "--mining-distractors", str(args.mining_distractors)] if args.mining else []
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"{v} failed:\n{proc.stderr[-3000:]}")
        results[v] = json.loads(proc.stdout.strip().splitlines()[-1])
        (args.work / args.out).write_text(json.dumps(results, indent=1))
    report(results, args)


if __name__ == "__main__":
    main()
