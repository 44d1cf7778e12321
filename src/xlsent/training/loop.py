"""The training engine's path for models that are not SentenceTransformers (heads over cached features, the
tagger, the dual transformer, a token aligner), on :class:`accelerate.Accelerator`.

A recipe with a loop of its own (one that does not fine-tune a whole sentence-transformer with
sentence-transformers' trainer: :mod:`xlsent.training.trainer`) gives :func:`run_loop` its trained module,
optimiser, schedule, the number of examples and a *step function* — the loss of one batch, given the indices of
the examples in it — and the loop owns, once for every recipe:

* **device placement and mixed precision** — resolved as on the trainer's path
  (:func:`xlsent.training.stage.stage_settings`); the module is prepared by Accelerate on the process's
  device (:func:`xlsent.utils.device.current_device`); ``optim.precision`` (``auto``: bf16 on a GPU
  that has it and on a CPU where a step was timed faster in bf16, fp32 elsewhere) runs the step under autocast;
* **the order of the examples** — epoch e's order is ``randperm(n)`` drawn from ``seed·1,000,003 + e``,
  so a resumed run sees the same batches; under several processes each takes its contiguous share of each
  micro-batch of the global batch (``optim.batch_size`` is the global batch), and the losses with in-batch negatives gather the
  other processes' rows (:mod:`xlsent.losses.gather`), so a step sees the global batch's negatives;
* **gradient accumulation** (``optim.grad_accum``: micro-batches a step), **clipping**
  (``optim.max_grad_norm``), and the **non-finite-loss policy**: a step whose loss is not finite is
  skipped (no update; the schedule still advances) and counted;
* **``optim.max_steps``** (0 = ``optim.epochs`` epochs), the **checkpoint policy** (every
  ``optim.checkpoint_every`` of the stage and every ``optim.checkpoint_minutes``), saving and restoring
  the whole state — trained parameters, optimiser, schedule, step, log, the recipe's own state and the
  random states — so that a run killed at any moment resumes to the same model; the disk the checkpoints and the
  model need is checked before the first step, and a checkpoint a full disk cut short is one line that says the run
  resumes (:meth:`~xlsent.training.run_folder.StageFolder.checkpointing`, as on the trainer's path);
* the **price**: after its first two steps the run is priced from their times (the first, with its warm-up, once;
  the second for every other step; an epoch's preparation not counted), with the peak memory so far — said once and
  kept in the stage record (``estimate``). The trainer's path prices before its first step, on two batches run
  aside; a step function cannot be run aside without changing the recipe's state (a queue, a generator);
* the **logging window** (the mean of each loss term over ``optim.logging_steps`` steps), the progress
  bar, and writing the model and the done marker on the main process only.

The step function returns a dict of scalar tensors with a ``"loss"`` entry (the others are logged).
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from xlsent.training.processes import process_seed, process_state, world_size
from xlsent.training.run_folder import CheckpointPolicy, StageFolder
from xlsent.training.stage import StageSettings, disk_needed, stage_settings

ORDER_SEED = 1_000_003


def epoch_order(n: int, seed: int, epoch: int):
    """The examples' order in ``epoch`` (the same on every process and after a resume)."""
    import torch

    return torch.randperm(n, generator=torch.Generator().manual_seed(int(seed) * ORDER_SEED + int(epoch)))


def total_steps(n: int, optim, world: int = 1) -> tuple[int, int]:
    """``(steps_per_epoch, total)`` for ``n`` examples: ``optim.max_steps`` if set, else ``optim.epochs`` epochs.
    Under several processes a short last batch is dropped (every process must take part in every step)."""
    bs = int(optim.batch_size)
    per_epoch = max(1, math.ceil(n / bs) if world == 1 else n // bs)
    return per_epoch, int(optim.max_steps) or per_epoch * int(optim.epochs)


@dataclass
class LoopResult:
    """What a finished loop reports."""

    steps: int
    seconds: float
    log: list[dict]
    skipped: int
    resumed_from: int | None
    device: str
    precision: str
    estimate: dict | None = None  # the price said after the first step (training.estimate.first_step_estimate)


def _rng_state() -> dict:
    import torch

    state = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def _set_rng_state(state: dict) -> None:
    import torch

    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"])


def make_accelerator(optim, model=None, settings: StageSettings | None = None):
    """An :class:`accelerate.Accelerator` on the process's device, with ``optim.precision`` resolved (``auto`` on a
    CPU: as timed for ``model``'s shapes; ``settings``: :func:`~xlsent.training.stage.stage_settings`, when
    resolved already)."""
    import torch
    from accelerate import Accelerator, DistributedDataParallelKwargs

    from xlsent.utils.device import device_kind

    settings = settings or stage_settings(optim, model)
    device, precision = settings.device, settings.precision
    if device_kind(device) == "cuda" and world_size() == 1:
        torch.cuda.set_device(device)  # Accelerate takes the current CUDA device (several processes: their local rank's)
    process_state()  # the process group, joined with the right device flag before Accelerate's own state
    from accelerate.state import AcceleratorState

    # Accelerate keeps one precision per process: a second stage (or run) in the same process may ask another
    AcceleratorState._reset_state(reset_partial_state=False)
    # an ablation that switches a loss term off leaves parameters without gradients: DDP must not wait for them
    ddp = DistributedDataParallelKwargs(find_unused_parameters=True)
    return Accelerator(cpu=device_kind(device) == "cpu", kwargs_handlers=[ddp],
                       mixed_precision={"fp32": "no", "bf16": "bf16", "fp16": "fp16"}[precision]), precision


def run_loop(
    folder: StageFolder,
    optim,
    module,
    optimizer,
    scheduler,
    n_examples: int,
    step_fn: Callable[[list[int], Any, Any], dict],
    *,
    name: str,
    progress: bool = True,
    state_fn: Callable[[], dict] | None = None,
    load_state_fn: Callable[[dict], None] | None = None,
    on_step: Callable[[int], None] | None = None,
    on_epoch: Callable[[int], None] | None = None,
    on_update: Callable[[], None] | None = None,
    dropout: bool = True,
    saved: list | None = None,
) -> LoopResult:
    """Train ``module`` (whose trainable parameters ``optimizer`` holds) for the stage; see the module docstring.

    ``step_fn(indices, module, accelerator)`` returns the batch's losses (``"loss"`` is what is minimised) computed
    through ``module`` (the prepared one: under several processes its forward is what synchronises gradients);
    tensors it builds go to ``accelerator.device``. ``state_fn()`` / ``load_state_fn(state)`` save and restore the recipe's
    own state (a momentum encoder's weights, queues, a generator); tensors, numbers and strings only.
    ``on_step(step)`` is a test hook called after every finished step; ``on_epoch(epoch)`` is called when the
    loop starts an epoch, and again for the epoch a resumed run starts in (the recipe's state, restored first,
    tells it whether the epoch's preparation is already done); ``on_update()`` after every optimiser update (not
    after a skipped step: a momentum encoder follows the trained one here). ``folder.begin()`` must have run.
    ``optimizer`` and ``scheduler`` may each be a list (a sparse optimiser for an embedding table beside a dense
    one for the rest). ``dropout=False`` trains in eval mode (a model fitted to its own dropout-free outputs).
    ``saved``: the modules the finished model holds besides ``module`` (siamese: the base model under its head),
    for the disk the stage needs.
    """
    import torch
    from rich.progress import Progress

    from xlsent.training.estimate import estimate_line, steps_estimate

    settings = stage_settings(optim, module)  # device, precision, processes, accumulation: as the trainer's path
    accelerator, precision = make_accelerator(optim, module, settings)
    several = isinstance(optimizer, (list, tuple))
    module, *optimizers = accelerator.prepare(module, *(optimizer if several else [optimizer]))
    several_schedules = isinstance(scheduler, (list, tuple))
    schedulers = list(scheduler) if several_schedules else [scheduler]
    raw = accelerator.unwrap_model(module)
    # Accelerate's optimizer wrapper costs about 1 ms a step on the CPU (it looks for optional packages on every
    # call); without a loss scaler (fp16) it only calls the wrapped optimizer, so the loop calls that directly
    steppers = optimizers if accelerator.scaler is not None else [o.optimizer for o in optimizers]
    amp = accelerator.autocast if precision != "fp32" else contextlib.nullcontext
    from xlsent.utils.device import plain_attention, training_attention

    plain = plain_attention(precision, str(accelerator.device), raw)  # decided once, not every micro-batch

    def autocast():  # the precision's autocast, and on a CPU in bf16 the attention timed fastest (the backward follows)
        stack = contextlib.ExitStack()
        stack.enter_context(amp())
        stack.enter_context(training_attention(precision, str(accelerator.device), plain=plain))
        return stack
    world, rank = settings.world, accelerator.process_index
    if accelerator.num_processes != world:  # WORLD_SIZE (the batch split) and the process group must agree
        from xlsent.utils.errors import XlsentError

        raise XlsentError(f"WORLD_SIZE={world} but {accelerator.num_processes} process(es) joined the run — start "
                          "it with torchrun or accelerate launch, which set both")
    seed = int(optim.seed)
    per_epoch, total = total_steps(n_examples, optim, world)
    bs, accum = settings.batch_size, settings.accum
    if world > 1 and n_examples < bs:
        from xlsent.utils.errors import XlsentError

        raise XlsentError(f"{n_examples} examples are fewer than one global batch (optim.batch_size={bs}) — give more "
                          "data or a smaller batch")
    micro = settings.per_process
    step, log, skipped, resumed = 0, [], 0, None
    state = folder.load_state()
    if state is not None and "trained" not in state:  # a checkpoint of a loop this one replaced
        folder.note(f"{name}: the checkpoint in {folder.checkpoints} is of an older format — starting afresh")
        state = None
    if state is not None:
        raw.load_state_dict({**raw.state_dict(), **state["trained"]})
        for o, kept in zip(optimizers, state["optimizer"] if several else [state["optimizer"]]):
            o.load_state_dict(kept)
        for sch, kept in zip(schedulers, state["scheduler"] if several_schedules else [state["scheduler"]]):
            sch.load_state_dict(kept)
        own = state["ranks"][rank] if len(state.get("ranks", [])) == world else state  # each process its own draws
        _set_rng_state(own["rng"])
        step, log, skipped = int(state["step"]), list(state["log_json"]), int(state["skipped"])
        if load_state_fn is not None:
            load_state_fn(own["recipe"])
        resumed = step
        folder.note(f"{name}: resuming from {folder.checkpoints} at step {step} of {total}")
    else:
        torch.manual_seed(process_seed(seed))  # dropout: each process its own draws (the main one: seed)
    policy = CheckpointPolicy(total, float(optim.checkpoint_every), float(optim.checkpoint_minutes))
    first, est, took = step, None, []

    def clock() -> float:  # a step's time: on a GPU, once its work is done
        if str(accelerator.device).startswith("cuda"):
            torch.cuda.synchronize()
        return time.perf_counter()
    max_norm = float(optim.max_grad_norm)
    order_of: dict = {}
    window: list[dict] = []
    t0 = time.perf_counter()
    module.train(dropout)

    def save() -> None:
        own = {"rng": _rng_state(), "recipe": state_fn() if state_fn is not None else {}}
        ranks = [own]
        if world > 1:  # every process's random state and recipe state (masking draws, dropout), in rank order
            from accelerate.utils import gather_object

            ranks = gather_object([own])
        if accelerator.is_main_process:
            folder.save_state({
                "trained": {n: p.detach().cpu().clone() for n, p in raw.named_parameters() if p.requires_grad},
                "optimizer": [o.state_dict() for o in optimizers] if several else optimizers[0].state_dict(),
                "scheduler": [sch.state_dict() for sch in schedulers] if several_schedules else schedulers[0].state_dict(),
                "step": step,
                "log_json": log, "skipped": skipped, **own, "ranks": ranks})
        accelerator.wait_for_everyone()

    def due(step: int) -> bool:
        flag = policy.due(step)  # minutes are read on each process's clock: the processes decide together
        if world > 1:
            flag = float(accelerator.reduce(torch.tensor([float(flag)], device=accelerator.device), "sum")) > 0
        return flag

    with folder.checkpointing(disk_needed(raw, "trained", saved)), \
            Progress(disable=not (progress and accelerator.is_main_process), transient=True) as bar:
        task = bar.add_task(f"{name} steps", total=total, completed=step)
        while step < total:
            epoch, k = divmod(step, per_epoch)
            if epoch not in order_of:
                order_of = {epoch: epoch_order(n_examples, seed, epoch)}
                if on_epoch is not None:
                    on_epoch(epoch)
            started = clock() if step - first < 2 else 0.0  # the first two steps are timed: the price
            batch = order_of[epoch][k * bs:(k + 1) * bs].tolist()
            if world == 1:
                mine = batch
                parts = [p for p in (batch[a * micro:(a + 1) * micro] for a in range(accum)) if p]
            else:  # every batch is full (total_steps): micro-batch a of the global batch, this process's contiguous
                # share of it — so the processes' rows of a micro-batch are one process's micro-batch
                width = bs // accum
                parts = [batch[a * width:(a + 1) * width][rank * micro:(rank + 1) * micro] for a in range(accum)]
                mine = [i for p in parts for i in p]
            outs: list[dict] = []
            finite = True
            for a, part in enumerate(parts):
                sync = a == len(parts) - 1  # gradients are all-reduced once, after the last micro-batch
                with (contextlib.nullcontext() if sync else accelerator.no_sync(module)), autocast():
                    out = step_fn(part, module, accelerator)
                loss = out["loss"]
                if world > 1:  # every process skips the step together
                    ok = torch.isfinite(loss.detach()).to(accelerator.device, torch.float32).reshape(1)
                    finite = float(accelerator.gather(ok).min()) == 1
                else:
                    finite = bool(torch.isfinite(loss.detach()))
                if not finite:
                    break
                if len(part) != len(mine):
                    loss = loss * len(part) / len(mine)  # a short micro-batch weighs what it holds
                if accelerator.scaler is not None:
                    accelerator.backward(loss)  # fp16: the loss scaler
                else:
                    loss.backward()  # what Accelerate's backward does without a scaler (DDP's hooks all-reduce)
                vals = torch.stack([v.detach().float().reshape(()) for v in out.values()])
                if world > 1:
                    vals = accelerator.reduce(vals, "mean")  # the log holds the global batch's losses
                outs.append(dict(zip(out.keys(), vals.tolist())))
            if finite and max_norm > 0:
                accelerator.clip_grad_norm_(module.parameters(), max_norm)
            if finite:
                for stepper in steppers:
                    stepper.step()
                if on_update is not None:
                    on_update()
            else:
                skipped += 1
            for stepper in steppers:
                stepper.zero_grad(set_to_none=True)
            for sch in schedulers:
                sch.step()
            step += 1
            if step - first <= 2:
                took.append(clock() - started)
            if step == first + 2 and step < total:  # priced on its first two steps (the trainer's path: before)
                est = steps_estimate(total - first, took[0], took[1], settings.device)
                if accelerator.is_main_process:
                    folder.note(estimate_line(name, "", est, bs, settings.device, "its first two steps"))
            if outs and finite:
                window.append({key: sum(o[key] for o in outs) / len(outs) for key in outs[0]})
            if window and (step % int(optim.logging_steps) == 0 or step == total):
                log.append({"step": step, "epoch": step / per_epoch, "lr": schedulers[0].get_last_lr()[0],
                            **{key: sum(w[key] for w in window) / len(window) for key in window[0]}})
                window = []
            if step < total and due(step):
                save()
            bar.advance(task)
            if on_step is not None:
                on_step(step)
    seconds = time.perf_counter() - t0
    module.eval()
    if skipped:
        folder.note(f"{name}: {skipped} step(s) with a non-finite loss skipped")
    return LoopResult(step, seconds, log, skipped, resumed, str(accelerator.device), precision,
                      est.as_record() if est is not None else None)


@contextlib.contextmanager
def scratch_folder(name: str, on_note: Callable[[str], None] | None = None):
    """A begun stage folder in a temporary directory (removed afterwards), for a loop whose caller keeps no
    run folder: nothing resumes after an interruption."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix=f"xlsent-{name}-") as tmp:
        folder = StageFolder(tmp, "scratch", name=name, on_note=on_note)
        folder.begin()
        yield folder


def finish_stage(folder: StageFolder, result: LoopResult, save_model: Callable[[Path], None], record: dict,
                 keep_checkpoints: bool = False) -> dict:
    """Write the model, the log and the done marker (on the main process; :meth:`StageFolder.finish`)."""
    return folder.finish(save_model, result.log, {
        "seconds": result.seconds, "steps": result.steps, "resumed_from_step": result.resumed_from,
        "skipped_steps": result.skipped, "device": result.device, "precision": result.precision,
        **({"estimate": result.estimate} if result.estimate is not None else {}), **record},
        keep_checkpoints=keep_checkpoints)
