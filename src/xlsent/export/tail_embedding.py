"""A token table whose rare pieces are stored at low rank: every piece kept, a fraction of the parameters.

Trimming removes pieces, and the tokenizer must re-segment every word that used them into shorter pieces the
model has rarely seen in that role — which is where a trimmed multilingual model loses the languages its
kept text does not cover (docs/results.md, issue 16). :class:`TailFactorisedEmbedding` keeps *every* piece,
so every text is segmented exactly as before, and spends the parameter budget by frequency instead:

* the ``head`` pieces (the ones ``--keep-vocab``'s rule keeps: special tokens, the top-scoring pieces, the
  pieces of the vocabulary texts) keep their full rows;
* every other piece — the ``tail`` — is stored as ``mean + code @ basis``, a rank-``r`` approximation fitted
  by a truncated SVD of the tail's centred rows (the best rank-``r`` fit in squared error, Eckart–Young).

Parameters: ``head × d + tail × r + r × d + d`` instead of ``(head + tail) × d`` (e5-small with the 40,000
top-scoring pieces and the bundled training text's pieces as head — 44,925 rows — and r = 96: 58.6M, 49.8%
of its 117.7M parameters).

Ids are reordered so that the head pieces come first (``[0, head)``, in their original order, so the
special tokens keep their ids) and the tail after them; the tokenizer is rewritten with the same order
(:func:`xlsent.export.vocab.trimmed_tokenizer_json`), which changes ids, never segmentations.

The module traces to ONNX as two ``Gather`` s, one small ``MatMul`` (kept fp32 by the int8 pass: its node
name ends ``word_embeddings/MatMul``) and a ``Where``; its cost is ``tokens × r × d`` multiply-adds, under
1% of one transformer layer's.

Decisions: the factors are the SVD's, not trained (training them would need the model's gradients through
every text in every language the tail serves). The rank and the head size were chosen on development data
(udhr-dev, 24 languages no figure reports) at the 50% budget: rank 64 / 96 / 128 / 144 with the largest head
that fits gave udhr-dev mean P@1 69.8 / 70.6 / 69.1 / 67.6 en→xx against 76.9 for the full model, and
removing the same pieces instead (``--keep-vocab`` alone) 60.6 (docs/results.md). The tail's rows are
far from low-rank (rank 96 keeps half their variance), so the low-rank tail halves the loss of trimming; it
does not remove it.
"""

from __future__ import annotations

import numpy as np
import torch


class TailFactorisedEmbedding(torch.nn.Module):
    """``ids → vectors``: full rows for ids ``< head``, ``mean + codes[id − head] @ basis`` for the rest."""

    def __init__(self, head: torch.Tensor, codes: torch.Tensor, basis: torch.Tensor, mean: torch.Tensor,
                 padding_idx: int | None = None) -> None:
        super().__init__()
        self.head_size = int(head.shape[0])
        self.head = torch.nn.Parameter(head)
        self.codes = torch.nn.Parameter(codes)
        self.basis = torch.nn.Parameter(basis)
        self.mean = torch.nn.Parameter(mean)
        self.padding_idx = padding_idx
        self.num_embeddings = self.head_size + int(codes.shape[0])
        self.embedding_dim = int(head.shape[1])

    @classmethod
    def fit(cls, table: torch.Tensor, head_rows: torch.Tensor, tail_rows: torch.Tensor, rank: int,
            padding_idx: int | None = None) -> "TailFactorisedEmbedding":
        """Full rows ``table[head_rows]``; ``table[tail_rows]`` at rank ``rank`` (truncated SVD of the centred rows)."""
        head = table[head_rows].detach().clone().float()
        tail = table[tail_rows].detach().double().cpu().numpy()
        rank = int(min(rank, tail.shape[1], max(len(tail), 1)))
        if len(tail) == 0:
            return cls(head, torch.zeros(0, rank), torch.zeros(rank, head.shape[1]), torch.zeros(head.shape[1]),
                       padding_idx)
        mean = tail.mean(0)
        u, s, vt = np.linalg.svd(tail - mean, full_matrices=False)
        codes = u[:, :rank] * s[:rank]
        return cls(head, torch.from_numpy(codes).float(), torch.from_numpy(vt[:rank]).float(),
                   torch.from_numpy(mean).float(), padding_idx)

    @property
    def weight(self) -> torch.Tensor:
        """The whole table, materialised (for code that reads ``.weight``: dtype, device, shape)."""
        return torch.cat([self.head, self.mean + self.codes @ self.basis], dim=0)

    @property
    def rank(self) -> int:
        return int(self.basis.shape[0])

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        in_tail = (input_ids >= self.head_size).unsqueeze(-1)
        head = torch.nn.functional.embedding(input_ids.clamp(max=self.head_size - 1), self.head)
        if self.codes.shape[0] == 0:
            return head
        codes = torch.nn.functional.embedding((input_ids - self.head_size).clamp(min=0), self.codes)
        return torch.where(in_tail, codes @ self.basis + self.mean, head)

    def extra_repr(self) -> str:
        return f"head={self.head_size}, tail={self.codes.shape[0]}, rank={self.rank}, dim={self.embedding_dim}"
