"""X-KD: multilingual knowledge distillation (Reimers & Gurevych 2020) — the baseline the
distillation papers compare with.

Reimers & Gurevych (2020). *Making Monolingual Sentence Embeddings Multilingual using
Knowledge Distillation.* EMNLP. Also stage 1 of Ding et al. (2022), Eq. (2), and
"Distill-XLMR" in Manafi (2025), §3.2.2.

    L = MSE(S(en), T(en)) + MSE(S(xx), T(en))

The teacher T is frozen; its embeddings of the English side are computed once and cached on
disk. The student S is fine-tuned with sentence-transformers' ``MSELoss`` and trainer.

**Default: self-distillation.** The default teacher is the default student, multilingual-e5-small
itself: the student learns to put each Chichewa sentence where its own frozen copy puts the
English translation (and to keep the English side where it was), at a CPU budget (3,000 pairs,
1 epoch, batch 16, lr 5e-5, token table frozen). On e5-small this raises held-out P@1 on the New
Testament and on the 46 UDHR languages it never sees (``docs/results.md``, "Every recipe's default").
The papers' setting — an English SBERT teacher (all-MiniLM-L6-v2), every pair, 20 epochs, batch
64, Ding et al.'s optimiser (AdamW lr 2e-5, ε 1e-6, weight decay 0.01, 10% warm-up, clipping 1.0),
max length 128 — is ``--preset paper`` (GPU-sized); ``--preset small`` is that MiniLM teacher at
the default's CPU budget. A MiniLM teacher pulls e5-small towards a weaker, English-only space and
lowers its held-out P@1 at any budget tried here.

Decisions where the papers are silent:

* sentence-transformers' ``MSELoss`` averages the two columns' element-wise MSEs, i.e. it
  is ½ of the sum in Eq. (2) — a constant factor absorbed by the learning rate;
* ``models.freeze_word_embeddings`` (on by default, off in ``--preset paper``) keeps the 96M-entry
  token table fixed, which makes a CPU step several times cheaper and leaves the pieces that the
  3,000 training pairs never use where they were;
* the last step is the model; held-out data is only reported.

``loss.matryoshka_dims`` (e.g. ``384,256,128,64``; off by default, not measured for this recipe — issue 50 measured
adapt): sentence-transformers' ``MatryoshkaLoss`` around the loss, every term at every width, the frozen model's
targets cut and renormalised like the student's vectors (:mod:`xlsent.losses.matryoshka`); the model folder records
the widths (``xlsent models info``).
"""

from __future__ import annotations

import copy
from pathlib import Path

from xlsent.data.sets.pairs import load_train_pairs
from xlsent.losses.matryoshka import matryoshka_hash_part, matryoshka_widths
from xlsent.models.handle import load_model
from xlsent.recipes._common import load_student_for, pair_dataset, say, teacher_targets
from xlsent.recipes.config import dump_config
from xlsent.recipes.config_types import RecipeConfig
from xlsent.recipes.registry import RunResult
from xlsent.training.run_folder import StageFolder, config_hash, learning_optim
from xlsent.training.trainer import train_stage
from xlsent.utils.io import write_text_atomic


def train_xkd(cfg: RecipeConfig, output: str | Path, on_note=None, progress: bool = True, stage_dir: Path | None = None,
              student_name: str | None = None) -> RunResult:
    """Run X-KD as configured; returns the model folder (``<output>/model`` unless ``stage_dir`` is given)."""
    from sentence_transformers.sentence_transformer.losses import MSELoss

    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    cfg = copy.deepcopy(cfg)
    if stage_dir is None:
        write_text_atomic(output / "config.yaml", dump_config(cfg))
    stage_dir = stage_dir or output
    m = cfg.models
    student_name = student_name or m["student"]
    folder = StageFolder(stage_dir, config_hash(student_name, cfg.train, learning_optim(cfg.optim), m,
                                                *matryoshka_hash_part(cfg.get("loss"))), on_note=on_note)
    if folder.skip_if_done():
        return RunResult(output, folder.model_dir)
    seed = int(cfg.optim.seed)
    pairs = load_train_pairs(cfg.train, seed)
    say(on_note, pairs.notes)
    teacher = load_model(m["teacher"])
    targets = teacher_targets(teacher, pairs.english, progress)
    student = load_student_for(cfg, student_name, teacher)
    ds = pair_dataset(pairs.english, pairs.other, targets)
    train_stage(student, ds, MSELoss(student), cfg.optim, folder, progress, "X-KD",
                loss_wrapper=matryoshka_widths(cfg.get("loss")), extra_record={"data_notes": pairs.notes, "train_data": pairs.summary()})
    return RunResult(output, folder.model_dir)
