"""A token table whose rare pieces are stored compressed: every piece kept, a fraction of the parameters.

Two ways to store the rare pieces: at low rank (:class:`TailFactorisedEmbedding`, ``--tail-rank``, described
first below) or as product-quantisation codes (:class:`TailProductQuantisedEmbedding`, ``--tail-pq``, at the end
of this module) — the second fits the rows far better at the same parameter count and is the one the compressed
deployable model uses (``docs/experiments/export-and-int8.md``, "Fourth pass").

Trimming removes pieces, and the tokenizer must re-segment every word that used them into shorter pieces the
model has rarely seen in that role — which is where a trimmed multilingual model loses the languages its
kept text does not cover (docs/results.md, issue 16). :class:`TailFactorisedEmbedding` keeps *every* piece,
so every text is segmented exactly as before, and spends the parameter budget by frequency instead:

* the ``head`` pieces (the ones ``--keep-vocab``'s rule keeps: special tokens, the top-scoring pieces, the
  pieces of the vocabulary texts) keep their full rows;
* every other piece — the ``tail`` — is stored as ``mean + code @ basis``, a rank-``r`` approximation fitted
  by a truncated SVD of the tail's centred rows (the best rank-``r`` fit in squared error, Eckart–Young).

Parameters: ``head × d + tail × r + r × d + d`` instead of ``(head + tail) × d`` (e5-small with the 40,000
top-scoring pieces and the bundled training text's pieces as head and r = 96: just under half of its
parameters; the counts are in ``docs/experiments/export-and-int8.md``).

Ids are reordered so that the head pieces come first (``[0, head)``, in their original order, so the
special tokens keep their ids) and the tail after them; the tokenizer is rewritten with the same order
(:func:`xlsent.models.vocab.trim.trimmed_tokenizer_json`), which changes ids, never segmentations.

The module traces to ONNX as two ``Gather`` s, one small ``MatMul`` (kept fp32 by the int8 pass: its node
name ends ``word_embeddings/MatMul``) and a ``Where``; its cost is ``tokens × r × d`` multiply-adds, under
1% of one transformer layer's.

Decisions: the factors are the SVD's, not trained (training them would need the model's gradients through
every text in every language the tail serves). The rank and the head size were chosen on development data
(udhr-dev, 24 languages no figure reports) at the 50% budget: of rank 64 / 96 / 128 / 144 with the largest
head that fits, rank 96 gave the best udhr-dev mean P@1 en→xx, every rank stayed below the full model and
all were well above removing the same pieces instead (``--keep-vocab`` alone; figures in
``docs/experiments/export-and-int8.md``). The tail's rows are
far from low-rank (rank 96 keeps half their variance), so the low-rank tail halves the loss of trimming; it
does not remove it.
"""

from __future__ import annotations

import numpy as np
import torch


class _HeadTailEmbedding(torch.nn.Module):
    """Full rows for ids ``< head``; every other id decoded from its stored ``codes`` row by ``_decode``."""

    def __init__(self, head: torch.Tensor, codes: torch.Tensor, mean: torch.Tensor, padding_idx: int | None) -> None:
        super().__init__()
        self.head_size = int(head.shape[0])
        self.head = torch.nn.Parameter(head)
        self.mean = torch.nn.Parameter(mean)
        self.padding_idx = padding_idx
        self.num_embeddings = self.head_size + int(codes.shape[0])
        self.embedding_dim = int(head.shape[1])

    def _decode(self, codes: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    @property
    def weight(self) -> torch.Tensor:
        """The whole table, materialised (for code that reads ``.weight``: dtype, device, shape)."""
        return torch.cat([self.head, self._decode(self.codes)], dim=0)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        in_tail = (input_ids >= self.head_size).unsqueeze(-1)
        head = torch.nn.functional.embedding(input_ids.clamp(max=self.head_size - 1), self.head)
        if self.codes.shape[0] == 0:
            return head
        codes = torch.nn.functional.embedding((input_ids - self.head_size).clamp(min=0), self.codes)
        return torch.where(in_tail, self._decode(codes), head)


class TailFactorisedEmbedding(_HeadTailEmbedding):
    """``ids → vectors``: full rows for ids ``< head``, ``mean + codes[id − head] @ basis`` for the rest."""

    def __init__(self, head: torch.Tensor, codes: torch.Tensor, basis: torch.Tensor, mean: torch.Tensor,
                 padding_idx: int | None = None) -> None:
        super().__init__(head, codes, mean, padding_idx)
        self.codes = torch.nn.Parameter(codes)
        self.basis = torch.nn.Parameter(basis)

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
    def rank(self) -> int:
        return int(self.basis.shape[0])

    def _decode(self, codes: torch.Tensor) -> torch.Tensor:
        return codes @ self.basis + self.mean

    def extra_repr(self) -> str:
        return f"head={self.head_size}, tail={self.codes.shape[0]}, rank={self.rank}, dim={self.embedding_dim}"


class TailProductQuantisedEmbedding(_HeadTailEmbedding):
    """``ids → vectors``: full rows for ids ``< head``; the rest product-quantised (``--tail-pq M``).

    Each tail row is cut into ``M`` sub-vectors of ``d / M`` values; each sub-vector is stored as one uint8
    code into that slot's 256 centroids (Jégou et al. 2011, product quantisation; trained with faiss, k-means
    per slot on the tail's centred rows). A row is ``mean + concat(codebook[m, code_m] for m in slots)``.

    Parameters are counted as stored values, as for int8 weights: ``M`` uint8 codes a tail row, plus the
    codebooks (``256 × d``) and the mean — so ``M`` codes cost what rank ``M`` costs in
    :class:`TailFactorisedEmbedding`, in a quarter of the bytes. At the same count they fit the tail far
    better: on e5-small's 205,077 tail rows, 96 codes keep 90% of the variance where rank 96 keeps 50%
    (``benchmarks/export/tail_fidelity.py``).
    """

    def __init__(self, head: torch.Tensor, codes: torch.Tensor, codebook: torch.Tensor, mean: torch.Tensor,
                 padding_idx: int | None = None) -> None:
        super().__init__(head, codes, mean, padding_idx)
        self.codes = torch.nn.Parameter(codes.to(torch.uint8), requires_grad=False)  # [tail, M]
        self.codebook = torch.nn.Parameter(codebook)  # [M * 256, d / M]
        slots = int(codes.shape[1])
        self.centroids = int(codebook.shape[0]) // slots  # 256, fewer only for a tail of under 256 rows
        self.register_buffer("offsets", torch.arange(slots, dtype=torch.long) * self.centroids, persistent=False)

    @classmethod
    def fit(cls, table: torch.Tensor, head_rows: torch.Tensor, tail_rows: torch.Tensor, slots: int,
            padding_idx: int | None = None, seed: int = 0) -> "TailProductQuantisedEmbedding":
        import faiss

        head = table[head_rows].detach().clone().float()
        dim = int(head.shape[1])
        check_slots(dim, slots)
        tail = table[tail_rows].detach().float().cpu().numpy()
        mean = tail.mean(0) if len(tail) else np.zeros(dim, np.float32)
        x = np.ascontiguousarray(tail - mean, dtype=np.float32)
        if len(x) < 2:
            from xlsent.utils.errors import XlsentError, named

            raise XlsentError(f"{named('tail_pq', slots)}: {len(x)} piece(s) outside the head — nothing to quantise; "
                              "leave out tail_pq=")
        bits = min(8, int(np.log2(len(x))))  # 256 centroids a slot; fewer only when the tail has fewer rows
        pq = faiss.ProductQuantizer(dim, slots, bits)
        pq.cp.seed = seed
        pq.train(x)
        codebook = faiss.vector_to_array(pq.centroids).reshape(slots * 2 ** bits, dim // slots)
        if bits == 8:
            codes = pq.compute_codes(x)  # [tail, M] uint8
        else:  # faiss packs codes of under 8 bits; nearest centroid per slot, one byte each
            parts = x.reshape(len(x), slots, dim // slots)
            cents = codebook.reshape(slots, 2 ** bits, dim // slots)
            codes = np.stack([((parts[:, m, None, :] - cents[m][None]) ** 2).sum(-1).argmin(1) for m in range(slots)],
                             1).astype(np.uint8)
        return cls(head, torch.from_numpy(codes.copy()), torch.from_numpy(codebook.copy()),
                   torch.from_numpy(mean.astype(np.float32)), padding_idx)

    @property
    def slots(self) -> int:
        return int(self.codes.shape[1])

    def _decode(self, codes: torch.Tensor) -> torch.Tensor:
        flat = codes.long() + self.offsets  # [..., M]: row of each slot's centroid in the stacked codebook
        parts = torch.nn.functional.embedding(flat, self.codebook)  # [..., M, d / M]
        return parts.flatten(-2) + self.mean

    def extra_repr(self) -> str:
        return f"head={self.head_size}, tail={self.codes.shape[0]}, slots={self.slots}, dim={self.embedding_dim}"


def check_slots(width: int, slots: int) -> None:
    """``tail_pq=M`` cuts each row into M equal sub-vectors: M must divide the width."""
    if slots < 1 or int(width) % slots:
        from xlsent.utils.errors import XlsentError, named

        good = [m for m in (16, 32, 48, 64, 96, 128, 192) if int(width) % m == 0]
        raise XlsentError(f"{named('tail_pq', slots)}: must divide the embedding width {width} (e.g. "
                          f"{', '.join(map(str, good))})")
