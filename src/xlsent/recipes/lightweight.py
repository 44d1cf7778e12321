"""Lightweight dual transformer trained from scratch (Mao et al. 2021).

Mao, Gupta, Wang, Chu, Jaggi & Kurohashi (2021). *Lightweight Cross-Lingual Sentence
Representation Learning.* ACL.

From nothing but parallel pairs: a joint subword tokenizer (:func:`~xlsent.models.lightweight.train_tokenizer`),
one 2-layer encoder shared by both languages (:func:`~xlsent.models.lightweight.build_encoder`, a standard
``BertModel`` + mean pooling that ``SentenceTransformer(DIR)`` loads), trained with

    L = L_gen + 2·L_align + 2·L_sim                     (Eq. 7, :class:`~xlsent.losses.lightweight_losses.LightweightLoss`)

L_gen is the unified generative task (UGT: SMLM + XTR, predicted from the pooled sentence vector),
L_align the in-batch translation-ranking loss over raw dot products, L_sim the in-batch similarity
loss. Paper defaults in ``configs/lightweight.yaml``: 2 layers, hidden 512, 8 heads, FFN 1,024,
swish, dropout 0.1; Adam lr 1e-3, batch 128, 12 epochs — sized for a GPU: on 2 CPU cores a step
takes about 5 s, so the bundled 23k pairs take about three hours. ``--preset small`` (hidden 256,
batch 64, 4 epochs, 64 pieces; 19 minutes) is the setting measured in ``docs/results.md``.
Ablation switches: ``loss.task`` (Table 6), ``loss.align_weight`` / ``loss.sim_weight`` = 0
(Table 7), ``encoder.layers`` (Table 5); ``benchmarks/distillation/lightweight_ablations.py`` runs them.
Measured at a CPU budget (2 epochs on 23k pairs): no generative task alone aligns the two
languages (retrieval at chance) — the align loss does; keep it on for small data.

Decisions where the paper is silent or its code differs:

* **vocabulary size** 8,000 by default: the paper's 50k joint pieces come from 30M pairs; a few
  thousand to a few hundred thousand pairs (the bundled Old Testament: 23k) leave most of 50k
  pieces seen a handful of times, and the table would be 25.6M of the model's parameters. At 8k,
  a piece occurs on average about a hundred times in the bundled pairs and the table is 4.1M;
  raise it with the data (``tokenizer.vocab_size``);
* **schedule**: the paper warms up for 3 of 12 epochs; the code warms up ~2,000 steps (a small share
  of its millions) and multiplies the rate by 0.1 from epoch 3. Here: linear warm-up over
  ``optim.warmup_ratio`` (10%) of the steps, then × 0.1 from ``optim.decay_epoch`` (3) — or, with
  ``decay_epoch: 0``, a linear decay to 0; Adam with ``amsgrad`` and weight decay 1e-5 as in the code;
* **targets** (see :mod:`xlsent.losses.lightweight_losses`): from the original tokens, repeated
  tokens counted (Eq. 3), each q summing to 1; the code's variants are options;
* **masking**: exactly one non-punctuation piece (one holding a letter or digit) of one side, the
  side drawn with p = ½ — the other side when the drawn one has none; a pair with none at all
  trains on XTR targets;
* **gradient clipping** at norm 1.0 (``optim.max_grad_norm``; the code has none but trains in mixed
  precision, whose loss scaler skips non-finite steps): in fp32 on a CPU, the first ``--preset small``
  run without it collapsed part-way through — the align loss went back to chance as the raw dot
  products grew — and the saved model retrieved at chance (``docs/experiments/lightweight.md``). A
  step whose loss is not finite is skipped and counted;
* the tokenizer is learned once and stored in the run folder before training, so a resumed run uses
  the same pieces; the last step is the model (held-out data is only reported).
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Callable

from xlsent.recipes._common import say
from xlsent.recipes.config import dump_config
from xlsent.recipes.config_schema import config_error
from xlsent.recipes.config_types import ModelsConfig, RecipeConfig
from xlsent.training.settings import FractionFloat, NonNegFloat, NonNegInt, OptimConfig, PosInt, Section
from xlsent.training.loop import finish_stage, run_loop, total_steps
from xlsent.training.processes import main_first, process_seed, world_size
from xlsent.training.run_folder import StageFolder, config_hash, learning_optim
from xlsent.utils.io import atomic_path, write_text_atomic
from xlsent.losses.lightweight_losses import REPEATS, SIM_REDUCTIONS, TARGETS_FROM, TASKS
from xlsent.models.lightweight import TOKENIZER_MODELS
from xlsent.recipes.registry import RunResult

#: the allowed words of this recipe's own keys (``--set`` values are checked against them before anything loads)
CHOICES = {"tokenizer.model": TOKENIZER_MODELS, "loss.task": TASKS, "loss.repeats": REPEATS,
           "loss.targets_from": TARGETS_FROM, "loss.sim_reduction": SIM_REDUCTIONS}


class LightweightModels(ModelsConfig):
    """``models:`` of this recipe: no model to start from, only one evaluated next to the trained one."""

    reference: str = ""


class LightweightEncoder(Section):
    """``encoder:`` — the dual transformer's shape (paper 002: 2 layers)."""

    layers: PosInt = 2
    hidden: PosInt = 512
    heads: PosInt = 8
    ffn: PosInt = 1024
    dropout: FractionFloat = 0.1


class LightweightTokenizer(Section):
    vocab_size: PosInt = 8000


class LightweightLossConfig(Section):
    """``loss:`` — the weights of the generative, alignment and similarity terms, and the MLM masking rate."""

    gen_weight: NonNegFloat = 1.0
    align_weight: NonNegFloat = 2.0
    sim_weight: NonNegFloat = 2.0
    mlm_rate: FractionFloat = 0.15


class LightweightOptim(OptimConfig):
    decay_epoch: NonNegInt = 0  # the epoch from which the learning rate decays (0: from the start)


#: this recipe's own sections and fields, typed with their ranges (the schema reads them: xlsent.recipes.config_schema)
SECTIONS = {"models": LightweightModels, "encoder": LightweightEncoder, "tokenizer": LightweightTokenizer,
            "loss": LightweightLossConfig, "optim": LightweightOptim}


def validate(cfg: RecipeConfig) -> None:
    """The checks that span several keys: ``encoder.hidden`` divisible by ``encoder.heads``."""
    if cfg["encoder"]["hidden"] % cfg["encoder"]["heads"]:
        raise config_error("encoder.hidden", cfg["encoder"]["hidden"],
                           f"not divisible by encoder.heads={cfg['encoder']['heads']}",
                           "choose a hidden size that the number of heads divides, e.g. 512 with 8 heads")


def _tokenizer(folder: StageFolder, cfg: RecipeConfig, texts: list[str], on_note=None):
    """The run's tokenizer: learned from ``texts`` once, kept in the checkpoint folder for a resume."""
    from transformers import PreTrainedTokenizerFast

    from xlsent.models.lightweight import train_tokenizer

    saved = folder.checkpoints / "tokenizer"
    if (saved / "tokenizer.json").exists():
        say(on_note, [f"lightweight: tokenizer reused from {saved} (resuming this run)"])
        return PreTrainedTokenizerFast.from_pretrained(str(saved))
    t0 = time.perf_counter()
    tok = train_tokenizer(texts, int(cfg.tokenizer.vocab_size), cfg.tokenizer.model, int(cfg.models.max_seq_length))
    with atomic_path(saved, "the learned tokenizer", resumes=True) as tmp:
        tok.save_pretrained(str(tmp))
    say(on_note, [f"lightweight: {cfg.tokenizer.model} tokenizer, {len(tok)} pieces learned from {len(texts)} "
                  f"sentences in {time.perf_counter() - t0:.1f} s"])
    return tok


def _schedule(optimizer, total: int, steps_per_epoch: int, o):
    import torch

    warm = max(1, int(total * float(o.warmup_ratio)))
    decay_epoch = int(o.decay_epoch)

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        if decay_epoch > 0:
            return 0.1 if step >= decay_epoch * steps_per_epoch else 1.0
        return max(0.0, (total - step) / max(1, total - warm))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def train_lightweight(cfg: RecipeConfig, output: str | Path, on_note: Callable[[str], None] | None = None,
                      progress: bool = True, on_step: Callable[[int], None] | None = None) -> RunResult:
    """Train as configured; returns the model folder ``<output>/model`` (``on_step(step)``: a test hook)."""
    import torch

    from xlsent.data.sets.pairs import load_train_pairs
    from xlsent.losses.lightweight_losses import LightweightLoss
    from xlsent.models.lightweight import build_encoder, maskable_ids, parameter_count

    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    cfg = copy.deepcopy(cfg)
    write_text_atomic(output / "config.yaml", dump_config(cfg))
    folder = StageFolder(output, config_hash(cfg.train, cfg.tokenizer, cfg.encoder, cfg.loss, learning_optim(cfg.optim),
                                             cfg.models.max_seq_length), "lightweight", on_note)
    if folder.skip_if_done():
        return RunResult(output, folder.model_dir)
    o, seed = cfg.optim, int(cfg.optim.seed)
    pairs = load_train_pairs(cfg.train, seed)
    say(on_note, pairs.notes)
    with main_first():  # the main process prepares the folder and learns the tokenizer; the others read it
        folder.begin()
        tok = _tokenizer(folder, cfg, pairs.other + pairs.english, on_note)
    max_len = int(cfg.models.max_seq_length)
    enc = lambda texts: tok(texts, add_special_tokens=False, truncation=True, max_length=max_len)["input_ids"]  # noqa: E731
    ids_a, ids_b = enc(pairs.other), enc(pairs.english)
    e = cfg.encoder
    model = build_encoder(tok, int(e.layers), int(e.hidden), int(e.heads), int(e.ffn), float(e.dropout), max_len, seed)
    lo = cfg.loss
    loss_fn = LightweightLoss(model, maskable_ids(tok), tok.mask_token_id, lo.task, float(lo.gen_weight),
                              float(lo.align_weight), float(lo.sim_weight), lo.repeats, lo.targets_from,
                              bool(lo.renormalise), lo.sim_reduction, float(lo.mlm_rate))
    optimizer = torch.optim.Adam(loss_fn.parameters(), lr=float(o.lr), weight_decay=float(o.weight_decay),
                                 amsgrad=bool(o.amsgrad))
    n = len(ids_a)
    steps_per_epoch, total = total_steps(n, o, world_size())
    scheduler = _schedule(optimizer, total, steps_per_epoch, o)
    gen = torch.Generator().manual_seed(process_seed(seed))  # the masking draws; saved with every checkpoint
    sizes = parameter_count(model)
    say(on_note, [f"lightweight: {sizes['total'] / 1e6:.2f}M parameters ({sizes['embedding'] / 1e6:.2f}M embedding), "
                  f"{n} pairs, {steps_per_epoch} steps an epoch, {total} steps"])

    def step(sel: list[int], module, accelerator) -> dict:
        return module([ids_a[i] for i in sel], [ids_b[i] for i in sel], gen)

    result = run_loop(folder, o, loss_fn, optimizer, scheduler, n, step, name="lightweight", progress=progress,
                      state_fn=lambda: {"generator": gen.get_state()},
                      load_state_fn=lambda st: gen.set_state(st["generator"]), on_step=on_step)
    if result.log:
        say(on_note, [f"lightweight: {result.steps} steps in {result.seconds / 60:.1f} min; final loss "
                      f"{result.log[-1]['loss']:.4f}"])

    def save(tmp: Path) -> None:
        model.eval()
        model.save(str(tmp))

    finish_stage(folder, result, save, {"pairs": n, "parameters": sizes, "vocab_size": len(tok),
                                        "data_notes": pairs.notes, "train_data": pairs.summary()})
    return RunResult(output, folder.model_dir)


def evaluate_after(cfg: RecipeConfig, result: RunResult, output: Path, on_note=None, no_eval: bool = False):
    """Evaluation hook: the reference model (e5-small by default, never trained) next to the trained one."""
    from xlsent.recipes._common import evaluate_named
    from xlsent.recipes.registry import Report

    model = result.model_path
    ref = cfg.models.reference
    models = ({f"reference {ref}": ref} if ref else {}) | {"lightweight": model}
    metrics = None if no_eval else evaluate_named(cfg, models, on_note=on_note)
    return Report(model, metrics, title="held-out: reference model vs lightweight (trained from scratch)")
