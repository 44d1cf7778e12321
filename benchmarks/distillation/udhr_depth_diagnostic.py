#!/usr/bin/env python3
"""Where does a compressed e5 student lose UDHR languages: the depth cut, the bottleneck, or training?

    python benchmarks/distillation/udhr_depth_diagnostic.py --run runs/compress [--layers 6]

Evaluates, with no training, (1) e5-small cut to its first ``layers`` layers (full embedding
table) and (2) the run's stage-2 bottleneck in front of e5's copied layers 1..``layers``
(``stage2-embedding/model`` with repeats = 1), on the 47 UDHR languages (xx→en P@1, cosine;
10 bootstrap resamples — the CIs are not used). Prints the mean and each language.
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True, help="a multistage run folder (its stage2-embedding is used)")
    ap.add_argument("--layers", type=int, default=6)
    args = ap.parse_args()

    from xlsent.data.sets.bundled import split_by_language
    from xlsent.data.sets.pairs import load_pairs
    from xlsent.encoding.embed import embed
    from xlsent.evaluation.retrieval import evaluate_many
    from xlsent.models.handle import load_model
    from xlsent.models.registry import quiet_libraries
    from xlsent.models.student import load_student

    quiet_libraries()
    udhr = split_by_language(load_pairs("udhr", dedupe=False).dataset)
    groups = {lang: (list(p["src"]), list(p["tgt"]), "eng", lang) for lang, p in udhr.items()}

    def report(name: str, st) -> None:
        st.max_seq_length = 128
        res = evaluate_many(groups, lambda t: embed(st, t, normalize=True, show_progress=False), name,
                            n_resamples=10, dataset="udhr")
        per = {r.tgt_lang: round(r.tgt2src["p@1"], 2) for r in res}
        print(f"{name}: mean xx→en P@1 {np.mean(list(per.values())):.3f}\n  {json.dumps(per)}", flush=True)

    cut = load_model("e5-small").model
    bert = cut[0].auto_model
    bert.encoder.layer = bert.encoder.layer[: args.layers]
    bert.config.num_hidden_layers = args.layers
    report(f"e5-small, first {args.layers} layers", cut)
    report(f"stage-2 bottleneck + e5 layers 1–{args.layers}",
           load_student(f"{args.run}/stage2-embedding/model", repeats=1, normalize=True))


if __name__ == "__main__":
    main()
