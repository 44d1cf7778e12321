#!/usr/bin/env python3
"""An MLM stage before adapt (issue 62 §1): continued masked-language training of a model folder on a user's
monolingual text, to measure whether it adds to the romanised or the extended path (it is kept in the library only
if it does: ``docs/experiments/romanize.md``).

    python benchmarks/unreadable_script/mlm_stage.py MODEL TEXTS -o OUT [--train rows|all] [--epochs 1] [--lr …]
        [--added-lr-scale 20]

* **Head**: e5-small ships no MLM head; a BERT head is built, its output matrix the token table and its dense
  layer starting as the identity (a few hundred steps cannot train a random one), 15% of the non-special pieces masked by
  ``transformers``' collator (80/10/10), the loss on the masked pieces only.
* **What trains** (``--train``): ``rows`` (the default, the issue's "the new or romanised rows") — the token table
  and the head only, the encoder's layers frozen, at ``--lr`` 1e-3; ``all`` — the whole encoder too, at 1e-4. AdamW,
  linear decay after 10% warm-up, no weight decay on the token table, LayerNorms and biases. A romanised model's
  token table trains (the rows its romanised text uses move); an extended model's old rows stay frozen and the rows
  extend-vocab added train at ``--added-lr-scale`` times the rate
  (:class:`xlsent.models.vocab.extend.AddedRowsEmbedding`: they start from noise).
* **Data**: one text a line, up to 128 pieces each, batch 32, ``--epochs`` passes in a seeded order.

The folder written is the input folder with the trained encoder (the head is dropped): it loads with
``SentenceTransformer`` and ``xlsent train adapt`` trains from it like any folder. ``OUT/mlm_stage.json`` records
the settings, the loss per 10 steps and the seconds.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("texts", type=Path)
    ap.add_argument("-o", "--output", required=True, type=Path)
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--train", choices=("rows", "all"), default="rows")
    ap.add_argument("--lr", type=float, default=None, help="default: 1e-3 (rows), 1e-4 (all)")
    ap.add_argument("--added-lr-scale", type=float, default=20.0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    import torch
    from transformers import DataCollatorForLanguageModeling, get_linear_schedule_with_warmup

    import xlsent.models.vocab.extend as ev
    from xlsent.models.handle import load_model
    from xlsent.models.registry import resolve_model_path
    from xlsent.recipes.scp import masked_batch

    torch.manual_seed(a.seed)
    st = load_model(resolve_model_path(a.model), device="cpu").model
    tok, enc = st.tokenizer, st[0].auto_model
    ev.ADDED_ROWS_LR_SCALE = a.added_lr_scale
    extended = ev.freeze_old_rows(enc) is not None
    lr = a.lr if a.lr is not None else (1e-3 if a.train == "rows" else 1e-4)
    if a.train == "rows":
        for name, p in enc.named_parameters():
            if "word_embeddings" not in name:
                p.requires_grad_(False)
    head = untied_head(enc)
    lines = [t.strip() for t in a.texts.read_text(encoding="utf-8").splitlines() if t.strip()]
    ids = tok(lines, truncation=True, max_length=128)["input_ids"]
    order = list(range(len(ids)))
    steps_per_epoch = (len(ids) + a.batch - 1) // a.batch
    total = max(1, round(a.epochs * steps_per_epoch))
    table = enc.get_input_embeddings()
    no_decay = [p for n, p in list(enc.named_parameters()) + [("head." + n, p) for n, p in head.named_parameters()]
                if p.requires_grad and ("word_embeddings" in n or "LayerNorm" in n or n.endswith("bias")
                                        or n.endswith(".added"))]
    seen = {id(p) for p in no_decay}
    decay = [p for p in list(enc.parameters()) + list(head.parameters()) if p.requires_grad and id(p) not in seen]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=lr)
    sched = get_linear_schedule_with_warmup(opt, max(1, total // 10), total)
    collator = DataCollatorForLanguageModeling(tok, mlm_probability=0.15)
    pad = tok.pad_token_id
    rng = random.Random(a.seed)
    enc.train()
    head.train()
    log, t0, step = [], time.time(), 0
    while step < total:
        rng.shuffle(order)
        for b in range(0, len(order), a.batch):
            if step >= total:
                break
            rows = [ids[i] for i in order[b:b + a.batch]]
            mask = torch.tensor([[1] * len(r) + [0] * (max(map(len, rows)) - len(r)) for r in rows])
            x, labels = masked_batch(collator, rows, [[] for _ in rows], tok, pad)  # the SCP recipe's masking
            h = enc(input_ids=x, attention_mask=mask).last_hidden_state
            where = labels != -100
            logits = head(h[where], table.weight)
            loss = torch.nn.functional.cross_entropy(logits, labels[where])
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for g in opt.param_groups for p in g["params"]], 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            if step % 10 == 0 or step == total:
                log.append({"step": step, "loss": round(loss.item(), 4)})
                print(f"step {step}/{total} loss {loss.item():.3f} ({time.time() - t0:.0f} s)", flush=True)
    enc.eval()
    a.output.mkdir(parents=True, exist_ok=True)
    st.save(str(a.output))
    (a.output / "mlm_stage.json").write_text(json.dumps(
        {"model": a.model, "texts": str(a.texts), "lines": len(lines), "epochs": a.epochs, "steps": total,
         "train": a.train, "lr": lr, "added_lr_scale": a.added_lr_scale if extended else None, "batch": a.batch,
         "seconds": round(time.time() - t0, 1), "loss": log}, indent=1))


def untied_head(enc):
    """A BERT MLM head's transform (its dense layer starting as the identity, before its GELU and LayerNorm: with a few
    hundred steps a random one would scramble the encoder's states before the tied output) and bias; its output matrix is the token table, passed
    at each call (an extended model's table is a frozen and a trainable part, not one parameter to tie)."""
    import torch
    from transformers.models.bert.modeling_bert import BertPredictionHeadTransform

    if getattr(enc.config, "model_type", "") != "bert":
        raise SystemExit(f"mlm_stage: a BERT-family encoder is needed (this one is {enc.config.model_type!r})")

    class LMHead(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.transform = BertPredictionHeadTransform(enc.config)
            torch.nn.init.eye_(self.transform.dense.weight)  # the states pass the dense layer unchanged at first
            torch.nn.init.zeros_(self.transform.dense.bias)
            self.bias = torch.nn.Parameter(torch.zeros(enc.get_input_embeddings().weight.shape[0]))

        def forward(self, h, weight):
            return torch.nn.functional.linear(self.transform(h), weight, self.bias)

    return LMHead()


if __name__ == "__main__":
    main()
