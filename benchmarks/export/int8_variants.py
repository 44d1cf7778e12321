#!/usr/bin/env python3
"""int8 variants of one model compared on development data: P@1 both directions and cosine to fp32.

    python benchmarks/export/int8_variants.py [--model e5-small] [--dataset bible-en-ny:dev] [--n 500]
                                       [--work runs/int8-variants] [--variants NAME=JSON ...]

The fp32 graph is exported once; each variant quantises it with the given fields (JSON) — the library's
:class:`Int8Settings`, or the options measured and not adopted (per-token scales, outlier channels, static ranges,
the per-input α search: ``benchmarks/export/experiments/int8_options.py``) — is scored, and is deleted. The default
variant list is the one in ``docs/results.md``
("Choosing the int8 recipe on development data"). Results go to ``WORK/variants.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "experiments"))

DEFAULT_VARIANTS = {
    "weights": {},
    "ffn_out_fp32": {"fp32_parts": ["ffn_out"]},
    "ffn_in_fp32": {"fp32_parts": ["ffn_in"]},
    "qkv_fp32": {"fp32_parts": ["query", "key", "value"]},
    "attention_output_fp32": {"fp32_parts": ["attention_output"]},
    "smooth0.5_ffn_out_fp32": {"smooth": 0.5, "fp32_parts": ["ffn_out"]},
    "smooth0.65": {"smooth": 0.65},
    "smooth0.8": {"smooth": 0.8},
    "smooth0.8_calib1024": {"smooth": 0.8, "calibration_texts": 1024},
    "smooth0.9": {"smooth": 0.9},
    "smooth0.65_attention": {"smooth": 0.65, "attention": True},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--dataset", default="bible-en-ny:dev")
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", type=Path, default=Path("runs/int8-variants"))
    ap.add_argument("--variants", nargs="*", help="NAME=JSON of Int8Settings or Int8Experiment fields (default: the "
                    "documented list)")
    args = ap.parse_args()

    from xlsent.data.sets.pairs import load_pairs, side_langs
    from xlsent.encoding.encoder import Encoder
    from xlsent.encoding.onnx_backend import OnnxBackend
    from xlsent.evaluation.retrieval import evaluate_many
    from xlsent.exporter.folder import export_model, is_export_folder
    from int8_options import Int8Experiment, quantize_experimental
    from xlsent.models.handle import load_model
    from xlsent.models.registry import quiet_libraries

    quiet_libraries()
    variants = dict(v.split("=", 1) for v in args.variants) if args.variants else None
    variants = {k: json.loads(v) for k, v in variants.items()} if variants else DEFAULT_VARIANTS
    fp32 = args.work / "fp32"
    if not is_export_folder(fp32):
        export_model(args.model, fp32)
    ds = load_pairs(args.dataset, sample=args.n, seed=0).dataset
    groups = {"dev": (list(ds["src"]), list(ds["tgt"]), *side_langs(ds))}
    texts = groups["dev"][0] + groups["dev"][1]
    ref = Encoder(OnnxBackend(fp32, threads=args.threads)).encode(texts)
    model = load_model(args.model).model
    out_file = args.work / "variants.json"
    results = json.loads(out_file.read_text()) if out_file.exists() else {}

    def score(folder: Path) -> dict:
        enc = Encoder(OnnxBackend(folder, threads=args.threads), memo=True)
        r = evaluate_many(groups, enc, "", "cosine", 1, 0, 4, args.dataset)[0]
        cos = (enc.encode(texts) * ref).sum(1)
        n = len(groups["dev"][0])
        return {"en2ny": r.src2tgt["p@1"], "ny2en": r.tgt2src["p@1"], "cos_src": float(cos[:n].mean()),
                "cos_tgt": float(cos[n:].mean()), "cos_min": float(cos.min())}

    results["fp32"] = score(fp32)
    print("fp32", results["fp32"], flush=True)
    for name, fields in variants.items():
        folder = args.work / name
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(fp32, folder)
        quantize_experimental(fp32 / "model.onnx", folder / "model.q.onnx", Int8Experiment(**fields), model=model,
                              log=lambda m: None)
        (folder / "model.q.onnx").replace(folder / "model.onnx")
        results[name] = {**score(folder), "settings": fields}
        shutil.rmtree(folder)
        print(name, results[name], flush=True)
        out_file.write_text(json.dumps(results, indent=1))
    print("\n| variant | P@1 src→tgt | P@1 tgt→src | mean cos to fp32 (src / tgt) | min cos |\n|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {100 * r['en2ny']:.1f} | {100 * r['ny2en']:.1f} | {r['cos_src']:.4f} / {r['cos_tgt']:.4f} | "
              f"{r['cos_min']:.4f} |")


if __name__ == "__main__":
    main()
