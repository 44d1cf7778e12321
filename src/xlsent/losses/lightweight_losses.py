"""The training losses of the lightweight dual transformer (Mao et al. 2021, §3.2–3.4).

    L = L_gen + 2·L_align + 2·L_sim                                            (Eq. 7)

* **Generative task** (Eq. 1–4), predicted from the *pooled sentence vector* through
  :class:`GenerativeHead` (dense → swish → LayerNorm → decoder tied to the input embedding + bias →
  log-softmax), as KL(q ‖ p) to a target distribution q over the vocabulary, per side, summed over
  the two sides, averaged over the batch. :func:`generative_targets` builds q for each task:

  - ``ugt`` (default, Eq. 4 + 3): one token w_t masked on one side; the masked side's target is
    ½ on w_t and ½ spread over the other side's tokens, the unmasked side's target is the masked
    side's tokens (XTR, Eq. 3);
  - ``xtr`` (Eq. 3): nothing masked; each side's target is the other side's tokens;
  - ``smlm`` (Eq. 1): one token masked on one side; both sides' target is w_t alone;
  - ``mlm``: 15% of each side's maskable tokens masked (at least one); each side's target is its
    own masked tokens (predicted from the pooled vector, like every task here — the paper gives no
    formula for its MLM row; this is the reading that uses the same head);
  - ``mlm+xtr``: MLM masking on both sides; each side's target is ½ its masked tokens + ½ the
    other side's tokens (the UGT construction with MLM's masking).

  Where the paper and its code differ (``docs`` of each option in ``configs/lightweight.yaml``):
  ``repeats: count`` (default) gives a repeated token N_w/|S| — the paper's Eq. 3; ``set`` gives
  each distinct id 1/|S| once and lets the ½ of w_t be overwritten when w_t also occurs on the
  other side, as the code does (q then sums to less than 1 unless ``renormalise``);
  ``targets_from: original`` (default) builds the unmasked side's XTR target from the original
  tokens; ``masked`` from the masked sequence, as the code does (``<mask>`` gets mass, w_t none).
* **Align** (Eq. 5): S = U·Vᵀ over the raw pooled vectors (no normalisation, no temperature);
  cross-entropy with the diagonal as labels, over rows and over columns, summed (each averaged over
  the batch, as the code's ``CrossEntropyLoss``).
* **Sim** (Eq. 6): P1 = row-softmax(U·Uᵀ), P2 = row-softmax(V·Vᵀ); −log cos(π/2·(P1 − P2)) summed over
  all B² entries (the code; ``sim_reduction: mean`` averages), cos clamped away from 0.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from xlsent.losses.gather import gather_rows, scale_sum, share_of_mean

TASKS = ("ugt", "xtr", "smlm", "mlm", "mlm+xtr")
REPEATS = ("count", "set")  # UGT's bag of words: a word's count, or the set
TARGETS_FROM = ("original", "masked")  # XTR's target: the other side's original or masked tokens
SIM_REDUCTIONS = ("sum", "mean")  # the sim loss over the B² entries
MASK_ONE = ("ugt", "smlm")  # one token of one side masked
MASK_MLM = ("mlm", "mlm+xtr")  # 15% of each side


class GenerativeHead(nn.Module):
    """dense → swish → LayerNorm → decoder tied to the encoder's input embedding (+ bias) → log-softmax."""

    def __init__(self, embedding: nn.Embedding):
        super().__init__()
        hidden = embedding.embedding_dim
        self.dense = nn.Linear(hidden, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.bias = nn.Parameter(torch.zeros(embedding.num_embeddings))
        object.__setattr__(self, "_embedding", embedding)  # tied, not owned: not in this module's state dict

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        h = self.norm(F.silu(self.dense(pooled)))
        return F.log_softmax(h @ self._embedding.weight.T + self.bias, dim=-1)


def _tokens(ids: list[int], vocab: int, repeats: str) -> torch.Tensor:
    """A side's token distribution: N_w/|S| per id (``count``) or 1/|S| per distinct id (``set``)."""
    q = torch.zeros(vocab)
    if not ids:
        return q
    t = torch.tensor(ids)
    if repeats == "count":
        q.index_add_(0, t, torch.full((len(ids),), 1.0 / len(ids)))
    else:
        q[t] = 1.0 / len(ids)
    return q


def _mix(masked: list[int], other: torch.Tensor, vocab: int, repeats: str) -> torch.Tensor:
    """½ over the masked tokens + ½ ``other`` (the code's ``set``: the masked tokens' ½ is assigned last)."""
    own = _tokens(masked, vocab, repeats)
    if repeats == "count":
        return 0.5 * own + 0.5 * other
    q = 0.5 * other
    if masked:
        q[torch.tensor(masked, dtype=torch.long)] = 0.5 / len(masked)
    return q


def generative_targets(task: str, a: list[int], b: list[int], a_in: list[int], b_in: list[int], vocab: int,
                       repeats: str = "count", targets_from: str = "original", renormalise: bool = True
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """Target distributions (q_a, q_b) of one pair. ``a``/``b``: the original ids; ``a_in``/``b_in``: the
    ids the encoder sees (with ``<mask>`` where a token was masked)."""
    masked_a = [x for x, y in zip(a, a_in) if x != y]
    masked_b = [x for x, y in zip(b, b_in) if x != y]
    src_a = a if targets_from == "original" else a_in  # what the other side reconstructs (XTR)
    src_b = b if targets_from == "original" else b_in
    if task == "xtr":
        qa, qb = _tokens(b, vocab, repeats), _tokens(a, vocab, repeats)
    elif task == "ugt":
        if masked_a:
            qa, qb = _mix(masked_a, _tokens(b, vocab, repeats), vocab, repeats), _tokens(src_a, vocab, repeats)
        elif masked_b:
            qa, qb = _tokens(src_b, vocab, repeats), _mix(masked_b, _tokens(a, vocab, repeats), vocab, repeats)
        else:  # nothing maskable in the pair: XTR
            qa, qb = _tokens(b, vocab, repeats), _tokens(a, vocab, repeats)
    elif task == "smlm":
        qa = qb = _tokens(masked_a or masked_b, vocab, "count")
    elif task == "mlm":
        qa, qb = _tokens(masked_a, vocab, "count"), _tokens(masked_b, vocab, "count")
    elif task == "mlm+xtr":
        qa = _mix(masked_a, _tokens(b, vocab, repeats), vocab, repeats) if masked_a else _tokens(b, vocab, repeats)
        qb = _mix(masked_b, _tokens(a, vocab, repeats), vocab, repeats) if masked_b else _tokens(a, vocab, repeats)
    else:
        raise ValueError(f"generative task must be one of {', '.join(TASKS)}, not {task!r}")
    if renormalise:
        qa, qb = (q / q.sum() if q.sum() > 0 else q for q in (qa, qb))
    return qa, qb


def kl_loss(log_p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """KL(q ‖ p) per row, averaged over the rows that have a target (``batchmean``)."""
    has = q.sum(1) > 0
    if not has.any():
        return log_p.sum() * 0.0
    return F.kl_div(log_p[has], q[has], reduction="batchmean")


def align_loss(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Eq. 5: in-batch cross-entropy over raw dot products, rows and columns, summed. Under DDP each process's
    rows are scored against every process's (:mod:`xlsent.losses.gather`), as one process with the global batch."""
    big_u, offset = gather_rows(u)
    big_v, _ = gather_rows(v)
    labels = torch.arange(len(u), device=u.device) + offset
    rows = F.cross_entropy(u @ big_v.T, labels, reduction="sum")
    cols = F.cross_entropy(v @ big_u.T, labels, reduction="sum")
    return share_of_mean(rows + cols, len(u))


def sim_loss(u: torch.Tensor, v: torch.Tensor, reduction: str = "sum", eps: float = 1e-6) -> torch.Tensor:
    """Eq. 6: −log cos(π/2 · (softmax(U·Uᵀ) − softmax(V·Vᵀ))) over all B² entries (under DDP: this process's rows
    against every process's columns, scaled so that the processes' losses average to the global batch's)."""
    big_u, _ = gather_rows(u)
    big_v, _ = gather_rows(v)
    p1, p2 = F.softmax(u @ big_u.T, dim=1), F.softmax(v @ big_v.T, dim=1)
    terms = -torch.log(torch.cos(math.pi / 2 * (p1 - p2)).clamp_min(eps))
    if reduction == "sum":
        return scale_sum(terms.sum())
    return share_of_mean(terms.sum(), len(u)) / len(big_u)


def mask_pair(task: str, a: list[int], b: list[int], maskable: list[bool], mask_id: int,
              gen: torch.Generator, mlm_rate: float = 0.15) -> tuple[list[int], list[int]]:
    """The two sides as the encoder sees them. ``ugt``/``smlm``: exactly one maskable (non-punctuation) token
    of one side, the side drawn with p = ½ (the other side when the drawn one has none); ``mlm``/``mlm+xtr``:
    ``mlm_rate`` of each side's maskable tokens (at least one), always replaced by ``<mask>``; ``xtr``: none."""
    a_in, b_in = list(a), list(b)
    if task in MASK_ONE:
        sides = [(a_in, a), (b_in, b)]
        if torch.rand((), generator=gen).item() >= 0.5:
            sides.reverse()
        for seq, orig in sides:
            cands = [i for i, t in enumerate(orig) if maskable[t]]
            if cands:
                seq[cands[int(torch.randint(len(cands), (), generator=gen))]] = mask_id
                break
    elif task in MASK_MLM:
        for seq, orig in ((a_in, a), (b_in, b)):
            cands = [i for i, t in enumerate(orig) if maskable[t]]
            if cands:
                k = max(1, round(mlm_rate * len(cands)))
                for j in torch.randperm(len(cands), generator=gen)[:k].tolist():
                    seq[cands[j]] = mask_id
    return a_in, b_in


def pad_batch(seqs: list[list[int]], pad_id: int = 0) -> dict[str, torch.Tensor]:
    """``input_ids`` and ``attention_mask`` of right-padded sequences."""
    n = max(1, max(len(x) for x in seqs))
    ids = torch.full((len(seqs), n), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), n), dtype=torch.long)
    for i, x in enumerate(seqs):
        ids[i, : len(x)] = torch.tensor(x, dtype=torch.long)
        mask[i, : len(x)] = 1
    return {"input_ids": ids, "attention_mask": mask}


class LightweightLoss(nn.Module):
    """Eq. 7 over a batch of token-id pairs: ``gen_weight``·L_gen + ``align_weight``·L_align + ``sim_weight``·L_sim.

    ``model`` is the sentence-transformers encoder (its pooled output is the sentence vector used at
    inference and by the contrastive losses); the :class:`GenerativeHead` is this loss's own and is
    only used in training. A weight of 0 switches a term off (the paper's Table 6 and 7 ablations).
    """

    def __init__(self, model, maskable: list[bool], mask_id: int, task: str = "ugt", gen_weight: float = 1.0,
                 align_weight: float = 2.0, sim_weight: float = 2.0, repeats: str = "count",
                 targets_from: str = "original", renormalise: bool = True, sim_reduction: str = "sum",
                 mlm_rate: float = 0.15):
        super().__init__()
        if task not in TASKS:
            raise ValueError(f"generative task must be one of {', '.join(TASKS)}, not {task!r}")
        self.model = model
        self.head = GenerativeHead(model[0].auto_model.get_input_embeddings())
        self.maskable, self.mask_id, self.task = maskable, mask_id, task
        self.weights = (gen_weight, align_weight, sim_weight)
        self.repeats, self.targets_from, self.renormalise = repeats, targets_from, renormalise
        self.sim_reduction, self.mlm_rate = sim_reduction, mlm_rate

    def forward(self, a: list[list[int]], b: list[list[int]], gen: torch.Generator) -> dict[str, torch.Tensor]:
        vocab = len(self.maskable)
        seen = [mask_pair(self.task, x, y, self.maskable, self.mask_id, gen, self.mlm_rate) for x, y in zip(a, b)]
        dev = self.head.bias.device
        u = self.model({k: t.to(dev) for k, t in pad_batch([s[0] for s in seen]).items()})["sentence_embedding"]
        v = self.model({k: t.to(dev) for k, t in pad_batch([s[1] for s in seen]).items()})["sentence_embedding"]
        w_gen, w_align, w_sim = self.weights
        out: dict[str, torch.Tensor] = {}
        if w_gen:
            qs = [generative_targets(self.task, x, y, sa, sb, vocab, self.repeats, self.targets_from, self.renormalise)
                  for x, y, (sa, sb) in zip(a, b, seen)]
            qa, qb = torch.stack([q[0] for q in qs]).to(dev), torch.stack([q[1] for q in qs]).to(dev)
            out["generative"] = kl_loss(self.head(u), qa) + kl_loss(self.head(v), qb)
        if w_align:
            out["align"] = align_loss(u, v)
        if w_sim:
            out["sim"] = sim_loss(u, v, self.sim_reduction)
        out["loss"] = sum(w * out[k] for w, k in zip(self.weights, ("generative", "align", "sim")) if w)
        return out
