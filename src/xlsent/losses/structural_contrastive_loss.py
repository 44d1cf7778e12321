"""The SCP loss of Chen et al. (2023, Eq. 6 and 9–11) with its momentum queues: in-batch, MoCo and CL-MoCo.

Span vectors are compared by cosine (Ψ) at temperature τ. For the structural spans of a batch, with fast
(trained) vectors ``r`` and slow (momentum-encoder) vectors ``k`` of the source (s) and target (t) sides:

* ``in-batch`` (Table 4, "w/o CL-MoCo"): no slow encoder, no queue; both directions over the fast vectors,
  ``L = ½ (CE(r^s · r^tᵀ) + CE(r^t · r^sᵀ))``.
* ``moco`` (the paper's baseline, Eq. 6): the fast encoder sees the source only, the slow one the target
  only; ``−log e^{Ψ(r_i^s, k_i^t)/τ} / (Σ_j e^{Ψ(r_i^s, k_j^t)/τ} + Σ_m e^{Ψ(r_i^s, q_m)/τ})`` with the queue
  ``q`` of earlier target keys.
* ``cl-moco`` (Eq. 9–11): both directions, each language with its own queue of slow vectors. Source→target:
  anchor ``r_i^s`` (fast), positive and in-batch negatives ``k_j^t`` (slow), plus a queue; target→source the
  mirror image; ``L = ½ (L_st + L_ts)``.

Which queue supplies a direction's negatives (``negatives``): Eq. 9 as printed draws the source→target
negatives from the *source* queue Q^s (``printed``); the reading consistent with xMoCo, where queue
entries are compared in the same space as the positive, draws them from the *key* language's queue,
Q^t for source→target (``key``, the default). Both are offered; ``docs/results.md`` compares them.

Decisions where the paper is silent: the positive and in-batch vectors of the MoCo variants are the slow
ones (MoCo's and xMoCo's keys; no gradient flows through them); Eq. 11 sums over spans, here it is the mean
over the batch's spans (the same gradient direction; the learning rate absorbs the scale); queued vectors
are L2-normalised slow vectors, pushed after the batch's loss is computed (MoCo's order), oldest out first.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from xlsent.losses.gather import gather_rows, share_of_mean

Variant = Literal["cl-moco", "moco", "in-batch"]
VARIANTS = ("cl-moco", "moco", "in-batch")
NEGATIVES = ("key", "printed")


class SpanQueue(nn.Module):
    """A fixed-size FIFO queue of unit vectors (a buffer, so it is saved with ``state_dict``)."""

    def __init__(self, size: int, dim: int) -> None:
        super().__init__()
        self.size = int(size)
        self.register_buffer("vectors", torch.zeros(self.size, dim))
        self.register_buffer("pointer", torch.zeros((), dtype=torch.long))  # next slot to write
        self.register_buffer("count", torch.zeros((), dtype=torch.long))  # filled slots (≤ size)

    @torch.no_grad()
    def push(self, keys: torch.Tensor) -> None:
        """Append ``keys`` [n, d]; when full, the oldest entries are overwritten."""
        if self.size == 0 or len(keys) == 0:
            return
        keys = keys.detach()[-self.size :]
        n = len(keys)
        idx = (int(self.pointer) + torch.arange(n)) % self.size
        self.vectors[idx] = keys.to(self.vectors.dtype)
        self.pointer.fill_((int(self.pointer) + n) % self.size)
        self.count.fill_(min(int(self.count) + n, self.size))

    def contents(self) -> torch.Tensor:
        """The queued vectors, oldest first."""
        c, p = int(self.count), int(self.pointer)
        if c < self.size:
            return self.vectors[:c].clone()  # a copy: the loss must not see a later push
        return torch.cat([self.vectors[p:], self.vectors[:p]])

    def __len__(self) -> int:
        return int(self.count)


def _info_nce(anchor: torch.Tensor, keys: torch.Tensor, queue: torch.Tensor | None, tau: float,
              offset: int = 0) -> torch.Tensor:
    """Mean over i of −log e^{a_i·k_i/τ} / (Σ_j e^{a_i·k_j/τ} + Σ_m e^{a_i·q_m/τ}) (unit vectors: · = cosine).
    ``keys`` may hold every process's keys, this process's at ``offset`` (:mod:`xlsent.losses.gather`)."""
    logits = anchor @ keys.T
    if queue is not None and len(queue):
        logits = torch.cat([logits, anchor @ queue.T.to(anchor.dtype)], dim=1)
    labels = torch.arange(len(anchor), device=anchor.device) + offset
    return share_of_mean(F.cross_entropy(logits / tau, labels, reduction="sum"), len(anchor))


class StructuralContrastiveLoss(nn.Module):
    """L_scp over aligned span vectors (module docstring). ``forward`` takes the fast vectors and, for the MoCo
    variants, the slow ones; it pushes the slow vectors onto the queues after computing the loss."""

    def __init__(self, dim: int, variant: Variant = "cl-moco", tau: float = 0.05, queue_size: int = 20000,
                 negatives: Literal["key", "printed"] = "key") -> None:
        super().__init__()
        if variant not in VARIANTS:
            raise ValueError(f"variant {variant!r}: one of {', '.join(VARIANTS)}")
        if negatives not in NEGATIVES:
            raise ValueError(f"negatives {negatives!r}: one of {', '.join(NEGATIVES)}")
        self.variant, self.tau, self.negatives = variant, float(tau), negatives
        size = 0 if variant == "in-batch" else int(queue_size)
        self.queue_s = SpanQueue(size if variant == "cl-moco" else 0, dim)  # MoCo's slow encoder sees the target only
        self.queue_t = SpanQueue(size, dim)

    @property
    def needs_slow(self) -> bool:
        return self.variant != "in-batch"

    def forward(self, fast_s: torch.Tensor, fast_t: torch.Tensor, slow_s: torch.Tensor | None = None,
                slow_t: torch.Tensor | None = None, enqueue: bool = True) -> torch.Tensor:
        rs, rt = F.normalize(fast_s, dim=-1), F.normalize(fast_t, dim=-1)
        # under DDP the keys of every process are this process's negatives, and the queues take them all in rank
        # order, so every process's queues stay equal to one process's with the global batch
        if self.variant == "in-batch":
            all_s, offset = gather_rows(rs)
            all_t, _ = gather_rows(rt)
            return 0.5 * (_info_nce(rs, all_t, None, self.tau, offset) + _info_nce(rt, all_s, None, self.tau, offset))
        if slow_t is None or (self.variant == "cl-moco" and slow_s is None):
            raise ValueError(f"the {self.variant} loss needs the slow (momentum) vectors")
        kt, offset = gather_rows(F.normalize(slow_t.detach(), dim=-1), grad=False)
        if self.variant == "moco":
            loss = _info_nce(rs, kt, self.queue_t.contents(), self.tau, offset)
            if enqueue:
                self.queue_t.push(kt)
            return loss
        ks, _ = gather_rows(F.normalize(slow_s.detach(), dim=-1), grad=False)  # type: ignore[union-attr]
        q_st, q_ts = ((self.queue_t, self.queue_s) if self.negatives == "key" else (self.queue_s, self.queue_t))
        loss = 0.5 * (_info_nce(rs, kt, q_st.contents(), self.tau, offset)
                      + _info_nce(rt, ks, q_ts.contents(), self.tau, offset))
        if enqueue:
            self.queue_s.push(ks)
            self.queue_t.push(kt)
        return loss
