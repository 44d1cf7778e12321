"""What a training run will cost. On the trainer's path it is said before the first step: two of its batches are
run forward and backward (the longest, and one of middle size), the optimiser untouched and the random state put
back, and the time per padded token they took prices every batch of the run (:mod:`xlsent.training.batching` plans
them beforehand); peak memory is what the process has held so far (the longest batch included) plus the
optimiser's state. On the loop's path (:func:`steps_estimate`) it is said after the run's first two steps, timed.

The figure is an estimate from two batches on a machine that may be busy; the stage record keeps it beside the
time the run really took (``estimate`` in ``stage.json``)."""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass

import numpy as np

#: past this many seconds on a CPU, the estimate says how to cut the run
LONG_ON_CPU = 3600.0


@dataclass
class Estimate:
    steps: int
    seconds: float          # the steps still to run, estimated
    peak_bytes: int | None  # expected peak memory (resident on a CPU, allocated on a GPU)
    probe_seconds: float    # what measuring took

    def as_record(self) -> dict:
        return {"steps": self.steps, "seconds": round(self.seconds, 1), "peak_bytes": self.peak_bytes,
                "probe_seconds": round(self.probe_seconds, 2)}


def duration(seconds: float) -> str:
    """``45 s``, ``4 min 10 s``, ``1 h 05 min``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


def size(n: int | None) -> str:
    return "?" if n is None else f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def _peak_so_far(device: str) -> int:
    import torch

    if device.startswith("cuda"):
        return int(torch.cuda.max_memory_allocated())
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux: KiB


def probe(trainer, dataset, batches: list[list[int]], lengths: np.ndarray, steps: int, accum: int,
          rows_per_device: int, device: str, chunk: int = 0) -> Estimate:
    """Time the longest and a middle-sized batch of ``batches`` (their first ``rows_per_device`` rows, what one
    process runs) forward and backward in the run's precision, and price ``steps`` optimiser steps of ``accum``
    micro-batches from it.
    ``chunk``: rows a forward pass when the loss sorts a batch into chunks (:func:`padded_tokens`)."""
    import torch

    from xlsent.training.batching import padded_tokens

    model = trainer.model
    cost = padded_tokens(batches, lengths, chunk).astype(float)
    order = np.argsort(cost)
    picks = [int(order[-1]), int(order[len(order) // 2])] if len(order) > 1 else [int(order[0])]
    cpu_state = torch.random.get_rng_state()
    cuda_state = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    was_training = model.training
    model.train()
    spent, tokens, t_all = 0.0, 0.0, time.perf_counter()
    # the run's precision: the trainer autocasts through Accelerate once train() has wrapped the model, so before it
    # the probe must (without it a bf16 run was priced at fp32's speed, 1.7–2.5× its time)
    args = trainer.args
    half = torch.bfloat16 if getattr(args, "bf16", False) else torch.float16 if getattr(args, "fp16", False) else None
    amp = ((lambda: torch.autocast(device.split(":")[0], dtype=half)) if half is not None
           else trainer.autocast_smart_context_manager)
    for k in picks:
        rows = batches[k][:rows_per_device]
        inputs = trainer._prepare_inputs(trainer.data_collator([dataset[i] for i in rows]))
        t = time.perf_counter()
        with amp():
            loss = trainer.compute_loss(model, inputs)
        loss.backward()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        spent += time.perf_counter() - t
        tokens += float(padded_tokens([rows], lengths, chunk)[0])
        model.zero_grad(set_to_none=True)
    model.train(was_training)
    torch.random.set_rng_state(cpu_state)
    if cuda_state is not None:
        torch.cuda.set_rng_state_all(cuda_state)
    per_token = spent / max(tokens, 1.0)
    share = rows_per_device / max(1, max(len(b) for b in batches))
    seconds = per_token * float(cost.mean()) * share * steps * accum
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    peak = _peak_so_far(device) + 2 * 4 * trained  # AdamW keeps two fp32 moments a trained weight
    return Estimate(steps, seconds, peak, time.perf_counter() - t_all)


def steps_estimate(steps: int, first: float, second: float, device: str) -> Estimate:
    """The loop's price (:func:`xlsent.training.loop.run_loop`): ``steps`` steps, the first (its warm-up included)
    taking ``first`` seconds and every other one ``second``; peak memory what the process has held through them, its
    optimiser's state included. A step function cannot be run aside without changing the recipe's state (a momentum
    queue, a generator): the loop's own first steps are the timing."""
    return Estimate(steps, first + second * max(0, steps - 1), _peak_so_far(device), 0.0)


def estimate_line(name: str, described: str, est: Estimate, batch_size: int, device: str,
                  timed_on: str = "2 of its batches") -> str:
    """The line that prices a run: said before the first step on the trainer's path, after it on the loop's
    (``timed_on``: what the time was measured on)."""
    steps = f"{est.steps:,} step{'s' if est.steps != 1 else ''}"
    line = (f"{name}: {described}{steps} of {batch_size} on {device}: about {duration(est.seconds)} "
            f"(timed on {timed_on}), peak memory about {size(est.peak_bytes)}")
    if est.seconds > LONG_ON_CPU and device == "cpu":
        line += (" — to cut it: fewer pairs (--set train.sample_files=N for your files, train.sample=N for bundled "
                 "sets), a GPU (--device cuda), or several processes (torchrun --nproc_per_node N -m xlsent train …)")
    return line
