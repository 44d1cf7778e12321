#!/usr/bin/env python3
"""What a training step of ``xlsent train adapt`` costs with its batch run in sorted chunks (``loss.sorted_chunk``),
against the same batch in one padded pass a column — step time ratios measured in one process, interleaved.

    python benchmarks/training/sorted_chunks.py                       # fp32, chunks of 0 (one pass), 4, 8, 12, 16
    python benchmarks/training/sorted_chunks.py --precisions fp32,bf16 --rows 0,8,16 --batches 10

The batches are random batches of 32 pairs of the demo's mixture on the development split (2,000
``bible-en-ny:dev-train`` pairs and 2,000 ``udhr-all:dev`` pairs, as ``benchmarks/training/adapt_speed.py`` trains
on), the model the default (e5-small, its token table frozen, dropout off: adapt's defaults). Each batch runs forward
and backward through adapt's loss (``RankingDistillLoss``, the distillation targets random unit vectors: their values
do not change the cost) once per setting — in bf16 under the trainer's attention rule
(:func:`xlsent.utils.device.training_attention`: plain attention on the CPU) — the settings in a rotating order so that a machine whose speed drifts
over minutes charges every setting alike; the first batch warms up and is not counted. The ratio is the geometric
mean over batches of each setting's time over the first setting's on the same batch. Also printed: the tokens each
setting pays for (padding included) as a share of one pass a column — what the chunks save in principle.

Run on an otherwise idle machine: ``torch`` uses ``--threads`` threads (2, the CI machine's cores).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--precisions", default="fp32", help="comma-separated: fp32, bf16 (CPU autocast)")
    ap.add_argument("--rows", default="0,4,8,12,16", help="comma-separated loss.sorted_chunk values (0 = off)")
    ap.add_argument("--batches", type=int, default=8, help="batches timed (the first warms up)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--model", default="e5-small")
    args = ap.parse_args(argv)

    import torch

    from xlsent.data.sets.pairs import load_train_pairs
    from xlsent.losses import RankingDistillLoss
    from xlsent.losses.sorted_forward import embed_sorted
    from xlsent.models.handle import load_model
    from xlsent.recipes.config import load_config
    from xlsent.training.batching import padded_tokens
    from xlsent.utils.device import training_attention

    torch.set_num_threads(args.threads)
    cfg = load_config("adapt", overrides=["train.pairs=bible-en-ny:dev-train,udhr-all:dev", "train.sample=2000"])
    pairs = load_train_pairs(cfg.train, 0)
    handle = load_model(args.model, max_seq_length=128)
    model = handle.model
    model.eval()  # dropout off (models.dropout: false); gradients still flow
    model[0].auto_model.get_input_embeddings().weight.requires_grad_(False)  # models.freeze_word_embeddings
    prompt = handle.prompt or ""
    loss = RankingDistillLoss(model)
    settings = [(p, int(r)) for p in args.precisions.split(",") for r in args.rows.split(",")]
    rng = np.random.default_rng(1)
    times: dict = {s: [] for s in settings}
    tokens: dict = {s: 0 for s in settings}
    for k in range(args.batches):
        rows = rng.choice(len(pairs.english), 32, replace=False)
        cols = [model.preprocess([prompt + pairs.other[i] for i in rows]),
                model.preprocess([prompt + pairs.english[i] for i in rows])]
        labels = torch.nn.functional.normalize(torch.randn(32, model.get_embedding_dimension()), dim=-1)
        lengths = np.sort(np.concatenate([c["attention_mask"].sum(1).numpy() for c in cols]))
        for j in range(len(settings)):
            prec, chunk = settings[(j + k) % len(settings)]
            tokens[(prec, chunk)] += (int(padded_tokens([np.arange(len(lengths))], lengths, chunk)[0]) if chunk
                                      else sum(c["attention_mask"].numel() for c in cols))
            start = time.perf_counter()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=prec == "bf16"), training_attention(prec, "cpu"):
                value = loss.compute_loss_from_embeddings(embed_sorted(model, [dict(c) for c in cols], chunk), labels)
            value.backward()
            model.zero_grad(set_to_none=True)
            if k:
                times[(prec, chunk)].append(time.perf_counter() - start)
    first = np.asarray(times[settings[0]])
    print(f"{'precision':<10}{'sorted_chunk':>16}{'s a step':>10}{'× ' + '/'.join(map(str, settings[0])):>12}"
          f"{'tokens paid':>13}")
    for s in settings:
        t = np.asarray(times[s])
        ratio = float(np.exp(np.mean(np.log(t / first))))
        print(f"{s[0]:<10}{s[1]:>16}{t.mean():>10.2f}{ratio:>12.3f}{tokens[s] / tokens[(s[0], 0)] if (s[0], 0) in tokens else float('nan'):>13.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
