"""The training engine's path for SentenceTransformer models: sentence-transformers' trainer, configured from a
recipe's ``optim`` section (:func:`xlsent.training.stage.stage_settings`: device, precision, processes, gradient
accumulation), inside a :class:`~xlsent.training.run_folder.StageFolder` (resumable checkpoints, model written
atomically, done marker last). :func:`train_stage` is a recipe's one call: it trains, prices the run before its
first step (:mod:`xlsent.training.estimate`) and saves the model.

Optimiser (the published multi-stage code, Ding et al. 2022, and Hugging Face defaults):
AdamW with ε = ``adam_epsilon``, weight decay on every weight except biases and LayerNorm,
a linear schedule with ``warmup_ratio`` warm-up, gradient clipping at ``max_grad_norm``.

Checkpoints: after every ``optim.checkpoint_every`` of the stage (a fraction of its steps) and
every ``optim.checkpoint_minutes`` (:class:`~xlsent.training.run_folder.CheckpointPolicy`); a rerun
with the same config resumes from the newest one, mid-epoch included (the trainer restores the
optimiser, schedule, data order and random state).

A loss wrapper (``loss_wrapper``): Matryoshka widths (``loss.matryoshka_dims``,
:func:`xlsent.losses.matryoshka.matryoshka_widths`) wrap the recipe's loss in sentence-transformers'
``MatryoshkaLoss`` (every term at every width, distillation targets cut and renormalised like the student's
vectors), record the widths in the model folder (read by ``xlsent models info``, the service's ``/info`` and
``xlsent export``) and in the stage record. The wrapper is handed in: this layer knows no loss.

Was ``xlsent.recipes._trainer`` (that path still works).
"""

from __future__ import annotations

import math
import time
from functools import partial
from pathlib import Path
from typing import Callable

from xlsent.training.run_folder import CheckpointPolicy, StageFolder
from xlsent.training.settings import OptimConfig
from xlsent.training.stage import disk_needed, stage_settings
from xlsent.utils.errors import XlsentError


def training_prompt(model) -> str | None:
    """The model's default prompt (e5: ``"passage: "``), so training texts look like those it encodes.

    sentence-transformers' trainer adds a prompt only when told to (``args.prompts``), while
    ``encode`` adds the default one: without this, a student would learn on bare text, be
    scored against targets encoded with the prompt, and then be used with the prompt.
    """
    name = getattr(model, "default_prompt_name", None)
    return (getattr(model, "prompts", None) or {}).get(name) if name else None


def _row_lengths(model, dataset):
    """Each row's length in the model's pieces (its prompt included, cut at its maximum length)."""
    from xlsent.training.batching import row_lengths

    prompt = training_prompt(model) or ""
    cap = int(getattr(model, "max_seq_length", 0) or 0) or None
    tok = model.tokenizer

    def count(texts: list[str]) -> list[int]:
        ids = tok([prompt + t for t in texts], add_special_tokens=True, truncation=cap is not None,
                  max_length=cap)["input_ids"]
        return [len(x) for x in ids]

    return row_lengths(dataset, count)


def _policy_callback(optim: OptimConfig):
    from transformers import TrainerCallback

    class SaveByPolicy(TrainerCallback):
        policy: CheckpointPolicy | None = None

        def on_train_begin(self, args, state, control, **kw):
            self.policy = CheckpointPolicy(state.max_steps, optim.checkpoint_every, optim.checkpoint_minutes)

        def on_step_end(self, args, state, control, **kw):
            if state.global_step < state.max_steps and self.policy.due(state.global_step):
                control.should_save = True
            return control

    return SaveByPolicy()


def train_stage(
    model,
    train_dataset,
    loss,
    optim: OptimConfig | dict,
    folder: StageFolder,
    progress: bool = True,
    name: str = "training",
    no_duplicates: bool = False,
    extra_record: dict | None = None,
    callbacks: list | None = None,
    finalize: Callable[[Path], None] | None = None,
    late_record: Callable[[], dict] | None = None,
    loss_wrapper=None,
    described: str = "",
) -> dict:
    """Train ``model`` on ``train_dataset`` with ``loss`` in ``folder``; return the stage record.

    ``finalize(model_folder)`` adds files to the saved model (a gloss dictionary, a model card)
    before it is moved into place and before the done marker is written; ``late_record()`` adds to the
    stage record what is known only once training ends (read before the checkpoints are removed). ``optim`` is the recipe's
    typed ``optim`` section (a plain mapping, such as a stage's merged settings, is read as one;
    keys it lacks take :class:`~xlsent.training.settings.OptimConfig`'s defaults). ``loss_wrapper``
    (:class:`xlsent.losses.matryoshka.MatryoshkaWidths`, or None) wraps ``loss`` before training
    (``.wrap(model, loss)``), writes into the saved model (``.write(model_folder)``, before ``finalize``) and adds
    to the stage record (``.record()``).

    ``optim.group_by_length`` batches texts of similar length
    (:class:`~xlsent.training.batching.LengthGroupedBatchSampler`, with the no-duplicates rule when ``no_duplicates``). Before the first step one note prices the run
    (:mod:`xlsent.training.estimate`: steps, time on this device, peak memory), prefixed by ``described`` (the
    recipe's own words: pairs used, held out).
    """
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers

    from xlsent.training.batching import LengthGroupedBatchSampler, text_columns
    from xlsent.training.estimate import estimate_line, probe
    from xlsent.utils.device import device_kind, training_attention

    optim = optim if isinstance(optim, OptimConfig) else OptimConfig(optim)
    settings = stage_settings(optim, model)
    device, precision, accum, world = settings.device, settings.precision, settings.accum, settings.world
    if device_kind(device) == "cuda" and world == 1 and device != "cuda:0":
        raise XlsentError(f"models.device={device}: sentence-transformers' trainer takes the first visible GPU — "
                          f"run with CUDA_VISIBLE_DEVICES={device.split(':')[1]} and --device cuda")
    sorted_texts = max(0, int(getattr(loss, "sorted_chunk", 0) or 0))  # read before a Matryoshka wrapper
    if loss_wrapper is not None:
        loss = loss_wrapper.wrap(model, loss)
    folder.begin()
    resume = folder.latest_trainer_checkpoint()
    folder.note(f"{name}: {len(train_dataset)} examples" + (f" — resuming from {resume}" if resume else ""))
    lengths = _row_lengths(model, train_dataset)
    group = bool(optim.get("group_by_length", False))
    sampler = partial(LengthGroupedBatchSampler, lengths=lengths, no_duplicates=no_duplicates, group=group)
    # the planned batches (this sampler's, or the same draw without grouping): the step count and the price
    per_device = settings.per_process
    plan = sampler(train_dataset, batch_size=int(optim.batch_size), drop_last=False, seed=int(optim.seed)).plan(0)
    batches = len(plan) if group else math.ceil(len(train_dataset) / int(optim.batch_size))  # the trainer's count
    epochs = float(optim.epochs)
    per_epoch = math.ceil(batches / accum)
    floor = int(optim.get("min_steps", 0) or 0)
    if not int(optim.max_steps or 0) and floor and per_epoch * max(1, math.ceil(epochs)) < floor:
        # a tiny set: one epoch is a step or two, and a warm-up's first step has a learning rate of 0
        epochs = float(math.ceil(floor / per_epoch))
        folder.note(f"{name}: {len(train_dataset)} examples make {per_epoch} step(s) an epoch — trained for "
                    f"{epochs:.0f} epochs (optim.min_steps={floor})")
    steps = int(optim.max_steps or 0) or per_epoch * max(1, math.ceil(epochs))
    args = SentenceTransformerTrainingArguments(
        output_dir=str(folder.checkpoints),
        num_train_epochs=epochs,
        max_steps=int(optim.max_steps or -1),
        per_device_train_batch_size=per_device,  # batch_size is the global batch
        gradient_accumulation_steps=accum,
        bf16=precision == "bf16",
        fp16=precision == "fp16",
        learning_rate=float(optim.lr),
        warmup_steps=float(optim.warmup_ratio),  # a float < 1 is a ratio in transformers 5
        weight_decay=float(optim.weight_decay),
        adam_epsilon=float(optim.adam_epsilon),
        max_grad_norm=float(optim.max_grad_norm),
        lr_scheduler_type="linear",
        seed=int(optim.seed),
        save_strategy="no",  # saving is decided by the checkpoint policy (fraction of the stage, minutes)
        save_total_limit=1,
        logging_steps=int(optim.logging_steps),
        logging_first_step=True,
        report_to="none",
        disable_tqdm=not progress,
        use_cpu=device_kind(device) == "cpu",
        dataloader_num_workers=0,
        batch_sampler=(sampler if group else BatchSamplers.NO_DUPLICATES if no_duplicates
                       else BatchSamplers.BATCH_SAMPLER),
        prompts=training_prompt(model),
    )
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=train_dataset, loss=loss,
                                         callbacks=[_policy_callback(optim), *(callbacks or [])])
    # the run priced before its first step
    done = int(Path(resume).name.rsplit("-", 1)[-1]) if resume and Path(resume).name.rsplit("-", 1)[-1].isdigit() else 0
    # a loss that runs a batch in sorted chunks of N texts (adapt's loss.sorted_chunk) pays for less padding
    chunk = max(1, sorted_texts // max(1, len(text_columns(train_dataset)))) if sorted_texts else 0
    with training_attention(precision, device, model):  # bf16 on a CPU: the attention kernel timed fastest there
        est = probe(trainer, train_dataset, plan, lengths, max(0, steps - done), accum, per_device, device, chunk)
        folder.note(estimate_line(name, described, est, int(optim.batch_size), device))
        t0 = time.perf_counter()
        with folder.checkpointing(disk_needed(model)):
            trainer.train(resume_from_checkpoint=resume)
        seconds = time.perf_counter() - t0
    log = [e for e in trainer.state.log_history if "loss" in e or "train_loss" in e]

    def save(tmp: Path) -> None:
        model.save(str(tmp))
        if loss_wrapper is not None:
            loss_wrapper.write(tmp)
        if finalize is not None:
            finalize(tmp)

    return folder.finish(save, log, {
        "seconds": seconds, "steps": trainer.state.global_step, "examples": len(train_dataset),
        "resumed_from": resume, "estimate": est.as_record(), "device": device, "precision": precision,
        "final_loss": next((e["loss"] for e in reversed(log) if "loss" in e), None),
        **(loss_wrapper.record() if loss_wrapper is not None else {}),
        **(extra_record or {}), **(late_record() if late_record else {})})
