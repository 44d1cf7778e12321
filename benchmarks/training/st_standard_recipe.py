#!/usr/bin/env python3
"""The peer of ``adapt_vs_peers.py``: sentence-transformers' standard recipe for parallel pairs, exactly as its
documentation's training overview shows it — ``MultipleNegativesRankingLoss``, 1 epoch, batch 32, lr 2e-5,
10% warm-up, the no-duplicates batch sampler, every parameter trained.

    python benchmarks/training/st_standard_recipe.py MODEL_FOLDER PAIRS.jsonl OUTPUT_FOLDER

PAIRS.jsonl: ``src`` (English) and ``tgt`` (the other language) per line; the anchor is the other language,
the positive its English translation. Nothing of xlsent is used, so this is what a sentence-transformers user
gets without us.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    from datasets import Dataset
    from sentence_transformers import (SentenceTransformer, SentenceTransformerTrainer,
                                       SentenceTransformerTrainingArguments)
    from sentence_transformers.base.sampler import BatchSamplers
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    model_path, pairs_path, output = sys.argv[1:4]
    rows = [json.loads(x) for x in open(pairs_path, encoding="utf-8") if x.strip()]
    train = Dataset.from_dict({"anchor": [r["tgt"] for r in rows], "positive": [r["src"] for r in rows]})
    model = SentenceTransformer(model_path, device="cpu", local_files_only=True)
    args = SentenceTransformerTrainingArguments(
        output_dir=output + "/checkpoints", num_train_epochs=1, per_device_train_batch_size=32,
        learning_rate=2e-5, warmup_ratio=0.1, batch_sampler=BatchSamplers.NO_DUPLICATES,
        save_strategy="no", report_to="none", seed=0, disable_tqdm=True)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=train,
                                         loss=MultipleNegativesRankingLoss(model))
    trainer.train()
    model.save(output + "/model")


if __name__ == "__main__":
    main()
