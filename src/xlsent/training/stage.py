"""What both paths of the training engine do the same way, written once: the settings of a stage (device,
precision, processes, gradient accumulation and the batch each process runs), the disk a stage's folder needs at
its peak, and the optimiser the loop's recipes that fine-tune a transformer share.

:func:`xlsent.training.trainer.train_stage` (SentenceTransformer models, sentence-transformers' trainer) and
:func:`xlsent.training.loop.run_loop` (the other models, Accelerate) both start from :func:`stage_settings`; the
checkpoint policy, resume rules and done marker they share are :mod:`xlsent.training.run_folder`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlsent.training.processes import world_size
from xlsent.utils.errors import XlsentError


@dataclass(frozen=True)
class StageSettings:
    """A stage's resolved settings: where and in what it trains, and how ``optim.batch_size`` (the global batch)
    splits over the processes and the micro-batches of a step."""

    device: str
    precision: str    # fp32 | bf16 | fp16 (``optim.precision`` resolved: ``auto`` as timed or as the GPU has it)
    world: int        # processes training together
    accum: int        # micro-batches a step (``optim.grad_accum``)
    batch_size: int   # the global batch
    per_process: int  # rows a process runs in one micro-batch


def stage_settings(optim, model=None) -> StageSettings:
    """``optim``'s settings on this process's device (``auto`` precision on a CPU: as timed for ``model``'s shapes);
    an error when the global batch does not split evenly over the processes × micro-batches."""
    from xlsent.utils.device import current_device, training_precision

    device = current_device()
    precision = training_precision(str(optim.get("precision", "auto")), device, model=model)
    accum = max(1, int(optim.get("grad_accum", 1) or 1))
    world, bs = world_size(), int(optim.batch_size)
    if bs % (world * accum):
        raise XlsentError(f"optim.batch_size={bs} must split evenly over {world} process(es) × "
                          f"optim.grad_accum={accum}")
    return StageSettings(device, precision, world, accum, bs, bs // (world * accum))


def disk_needed(model, checkpoint: str = "whole", saved=None) -> int:
    """Bytes a stage's folder holds at its peak: two checkpoints (the older one is removed only once the newer is
    written) and the trained model. A checkpoint of sentence-transformers' trainer (``checkpoint="whole"``) holds
    every weight and Adam's two moments of the trainable ones; one of the loop (``"trained"``,
    :func:`xlsent.training.loop.run_loop`) only the trained parameters and their moments. ``saved``: the modules the
    finished model holds besides ``model`` (siamese: the base model under its trained head)."""
    def size(params) -> int:
        return sum(p.numel() * p.element_size() for p in params)

    weights = size(model.parameters()) + sum(size(m.parameters()) for m in (saved or []))
    trained = [p for p in model.parameters() if p.requires_grad]
    moments = 8 * sum(p.numel() for p in trained)
    if checkpoint == "trained":
        return weights + 2 * (size(trained) + moments)
    return 3 * weights + 2 * moments


def adamw_linear(params, optim, total: int):
    """``(optimizer, schedule)`` of a loop that fine-tunes a transformer (scp, the tagger): AdamW (torch's ε) at
    ``optim.lr`` with ``optim.weight_decay`` on the matrices (none on biases and norms: the 1-D parameters) and a
    linear schedule warmed up over ``optim.warmup_ratio`` of the ``total`` steps."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    params = list(params)
    decay = [p for p in params if p.ndim > 1]
    no_decay = [p for p in params if p.ndim <= 1]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": float(optim.weight_decay)},
                             {"params": no_decay, "weight_decay": 0.0}], lr=float(optim.lr))
    return opt, get_linear_schedule_with_warmup(opt, int(float(optim.warmup_ratio) * total), total)
