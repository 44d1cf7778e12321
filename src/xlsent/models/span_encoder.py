"""A Hugging Face encoder as the SCP recipe runs it (Chen et al. 2023): span vectors, a frozen lower part, a
momentum (slow) copy and an MLM head.

* **Span vector** (Eq. 4): the mean of the last-layer states of a span's first and last sub-token.
* **Frozen lower layers**: with the token table and the lower ``L - train_layers`` layers frozen, their
  output is computed once per batch without a graph (:func:`lower_states`) and shared by the fast and the
  slow encoder, which differ only above it (:func:`upper_states`).
* **Momentum update** (:func:`momentum_update`): ``moco`` — MoCo's convention, ``slow ← m·slow + (1−m)·fast``
  (with m = 0.99 the slow encoder moves 1% of the way each step); ``printed`` — Eq. 5/7/8 as printed,
  ``slow ← λ·fast + (1−λ)·slow``, where λ = 0.99 makes the slow encoder almost the fast one. Only the
  parameters the fast encoder trains are updated (the frozen ones are equal in both).
* **MLM head** (:func:`mlm_head`): e5-small ships no masked-LM head, so one is built for the model's
  family (BERT, RoBERTa/XLM-R) with its output matrix tied to the token table, as in BERT; its transform
  and bias start fresh and are trained with the encoder.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from xlsent.models.tagger import backbone, run_layers
from xlsent.utils.errors import XlsentError

CONVENTIONS = ("moco", "printed")


def layer_count(encoder) -> int:
    return len(backbone(encoder).encoder.layer)


def freeze_lower(encoder, train_layers: int, freeze_word_embeddings: bool) -> int:
    """Freeze the token table (optionally) and, with ``train_layers`` > 0, everything below the top
    ``train_layers`` layers; returns the first trained layer (0 = all layers train)."""
    enc = backbone(encoder)
    n = layer_count(encoder)
    start = 0 if not train_layers or train_layers >= n else n - train_layers
    if freeze_word_embeddings or start > 0:
        enc.embeddings.word_embeddings.weight.requires_grad_(False)
    if start > 0:
        for p in enc.embeddings.parameters():
            p.requires_grad_(False)
        for layer in enc.encoder.layer[:start]:
            for p in layer.parameters():
                p.requires_grad_(False)
    return start


def lower_states(encoder, input_ids: torch.Tensor, mask: torch.Tensor, start: int, grad: bool) -> torch.Tensor:
    """Embedding output run through layers ``[0, start)``; without a graph unless ``grad``."""
    with torch.set_grad_enabled(grad):
        h = backbone(encoder).embeddings(input_ids=input_ids)
        return run_layers(encoder, h, mask, 0, start)


def upper_states(encoder, hidden: torch.Tensor, mask: torch.Tensor, start: int) -> torch.Tensor:
    """Layers ``[start, L)`` over ``hidden``: the last-layer states."""
    return run_layers(encoder, hidden, mask, start, layer_count(encoder))


def span_vectors(states: torch.Tensor, rows: torch.Tensor, first: torch.Tensor, last: torch.Tensor) -> torch.Tensor:
    """Eq. 4: ``(h[row, first] + h[row, last]) / 2`` for each span."""
    return 0.5 * (states[rows, first] + states[rows, last])


def slow_copy(encoder) -> nn.Module:
    """The momentum encoder: a copy that no optimiser sees (no gradients, eval mode: no dropout)."""
    slow = copy.deepcopy(encoder)
    for p in slow.parameters():
        p.requires_grad_(False)
    return slow.eval()


@torch.no_grad()
def momentum_update(fast, slow, m: float, convention: str = "moco") -> None:
    """Move the slow encoder toward the fast one (module docstring); only the parameters the fast one trains."""
    if convention not in CONVENTIONS:
        raise ValueError(f"momentum convention {convention!r}: one of {', '.join(CONVENTIONS)}")
    for pf, ps in zip(fast.parameters(), slow.parameters()):
        if not pf.requires_grad:
            continue
        if convention == "moco":
            ps.mul_(m).add_(pf.detach(), alpha=1.0 - m)
        else:
            ps.mul_(1.0 - m).add_(pf.detach(), alpha=m)


def mlm_head(encoder) -> nn.Module:
    """A masked-LM head for the encoder's family, its output matrix tied to the token table (module docstring)."""
    cfg = encoder.config
    kind = getattr(cfg, "model_type", "")
    if kind == "bert":
        from transformers.models.bert.modeling_bert import BertLMPredictionHead

        head = BertLMPredictionHead(cfg)
    elif kind in ("roberta", "xlm-roberta"):
        from transformers.models.roberta.modeling_roberta import RobertaLMHead

        head = RobertaLMHead(cfg)
    else:
        raise XlsentError(f"MLM needs a BERT- or RoBERTa-family encoder (this one is {kind or 'unknown'!r}) — "
                          "set loss.mlm=false")
    std = float(getattr(cfg, "initializer_range", 0.02))
    for mod in head.modules():  # BERT's initialisation (torch's default would give the 250k biases random values)
        if isinstance(mod, nn.Linear):
            nn.init.normal_(mod.weight, std=std)
            if mod.bias is not None:
                nn.init.zeros_(mod.bias)
    head.decoder.weight = backbone(encoder).embeddings.word_embeddings.weight
    return head
