#!/usr/bin/env python3
"""How much of the assistant's token table a rank-B bottleneck keeps: plain vs corpus-weighted SVD.

    python benchmarks/distillation/bottleneck_reconstruction.py [--assistant e5-small] [--pairs bible-en-ny:train]
        [--sizes 128 160 192] [--monolingual runs/l10n.txt]

For each B, the principal directions of the ``vocab × H`` word-embedding table are chosen
uniformly (``models.student.init: svd``) or weighted by each token's count in the training pairs + 1
(``svd-corpus``), and with ``--monolingual`` by the counts of the pairs and that text
(``train.monolingual``). Printed: the relative squared reconstruction error
``Σ w‖E − E P Pᵀ‖² / Σ w‖E‖²`` weighted by the corpus counts (the tokens the student will see),
by the token counts of UDHR's non-English side (47 languages; measured on, never trained on) and
uniformly (the whole vocabulary).
"""

from __future__ import annotations

import argparse


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--assistant", default="e5-small")
    ap.add_argument("--pairs", default="bible-en-ny:train")
    ap.add_argument("--sizes", type=int, nargs="+", default=[128, 160, 192])
    ap.add_argument("--monolingual", default="", help="a train.monolingual file: adds an svd-corpus row with its counts")
    args = ap.parse_args()

    import torch

    from xlsent.data.sets.pairs import load_pairs
    from xlsent.models.handle import load_model
    from xlsent.models.student import count_tokens, principal_directions

    model = load_model(args.assistant).model
    table = model[0].auto_model.embeddings.word_embeddings.weight.detach().double()
    ds = load_pairs(args.pairs).dataset
    counts = count_tokens(model[0].tokenizer, list(ds["src"]) + list(ds["tgt"]), table.shape[0])
    print(f"{args.pairs}: {len(ds)} pairs, {int((counts > 0).sum())} distinct tokens of {table.shape[0]}")
    udhr = load_pairs("udhr", dedupe=False).dataset
    udhr_counts = count_tokens(model[0].tokenizer, list(udhr["tgt"]), table.shape[0])
    inits = [("svd", None), ("svd-corpus", counts + 1.0)]
    if args.monolingual:
        from xlsent.data.formats.readers import read_sentences

        mono, _ = read_sentences(args.monolingual)
        inits.append(("+ monolingual", counts + count_tokens(model[0].tokenizer, mono, table.shape[0]) + 1.0))
        print(f"{args.monolingual}: {len(mono)} sentences")

    def error(p: torch.Tensor, w: torch.Tensor) -> float:
        r = table - table @ p.double() @ p.double().T
        return float(((r**2).sum(1) * w).sum() / ((table**2).sum(1) * w).sum())

    uniform = torch.ones_like(counts)
    print(f"{'B':>4} {'init':>14} {'error (corpus tokens)':>22} {'error (UDHR xx tokens)':>23} {'error (whole vocab)':>20}")
    for size in args.sizes:
        for name, weights in inits:
            p = principal_directions(table, size, weights)
            print(f"{size:>4} {name:>14} {error(p, counts):>22.3f} {error(p, udhr_counts):>23.3f} {error(p, uniform):>20.3f}")


if __name__ == "__main__":
    main()
