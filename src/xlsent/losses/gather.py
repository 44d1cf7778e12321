"""In-batch negatives from every process under data parallelism.

Under DDP (``torchrun`` / ``accelerate launch``) each process holds a share of the global batch. A loss
with in-batch negatives computed on the share alone would see ``1/world`` of the negatives one process
sees with the global batch. Each such xlsent loss therefore gathers the other processes' rows
(:func:`gather_rows`): the local rows keep their gradient, and ``torch.distributed.nn.all_gather`` sends
each process's share of the other processes' gradients back to it (a reduce-scatter), so that after DDP
averages the parameter gradients, the step equals one process's step on the global batch — provided each
process's loss is its share of the global mean (:func:`share_of_mean`).

Without an initialised process group of two or more processes every function here returns its input:
a single process, and evaluation after training, never communicate.
"""

from __future__ import annotations

import warnings

import torch


def distributed() -> tuple[int, int]:
    """``(world, rank)`` of the initialised process group, ``(1, 0)`` without one."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


def _row_counts(n: int, device) -> list[int]:
    import torch.distributed as dist

    world, _ = distributed()
    mine = torch.tensor([n], device=device)
    counts = [torch.zeros_like(mine) for _ in range(world)]
    dist.all_gather(counts, mine)
    return [int(c) for c in counts]


def gather_rows(x: torch.Tensor, grad: bool = True) -> tuple[torch.Tensor, int]:
    """Every process's rows of ``x`` in rank order, and the offset of this process's rows among them.

    Processes may hold different numbers of rows (spans of a batch of pairs); with ``grad`` the local rows
    keep their gradient and the gradients the other processes' losses put on them come back here."""
    world, rank = distributed()
    if world == 1:
        return x, 0
    import torch.distributed as dist
    import torch.distributed.nn as dist_nn

    counts = _row_counts(len(x), x.device)
    pad = max(counts) - len(x)
    padded = torch.cat([x, x.new_zeros((pad, *x.shape[1:]))]) if pad else x
    if grad:
        with warnings.catch_warnings():  # torch ≥ 2.11 calls it deprecated; it is what sentence-transformers uses too
            warnings.filterwarnings("ignore", message=".*all_gather is deprecated")
            parts = dist_nn.all_gather(padded)
    else:
        parts = [torch.empty_like(padded) for _ in range(world)]
        dist.all_gather(parts, padded.detach().contiguous())
    return torch.cat([p[:c] for p, c in zip(parts, counts)]), sum(counts[:rank])


def share_of_mean(local_sum: torch.Tensor, n_local: int) -> torch.Tensor:
    """This process's part of the global batch's mean, ``local_sum / N · world`` (N rows over all processes):
    DDP averages the processes' gradients, so these parts average to the mean over the global batch even when
    the processes hold different numbers of rows. One process: ``local_sum / n_local``."""
    world, _ = distributed()
    if world == 1:
        return local_sum / max(1, n_local)
    total = sum(_row_counts(n_local, local_sum.device))
    return local_sum * world / max(1, total)


def scale_sum(local_sum: torch.Tensor) -> torch.Tensor:
    """A loss that is a *sum* over the global batch: each process's partial sum times ``world`` (DDP averages)."""
    world, _ = distributed()
    return local_sum * world
