"""Batches grouped by length, for sentence-transformers' trainer (``batch_sampler=``): a batch is padded to its
longest text, so a batch of short verses beside one long paragraph pays for the paragraph in every row.

:class:`LengthGroupedBatchSampler` is transformers' ``group_by_length`` (its ``LengthGroupedSampler``: shuffle,
cut the order into windows of ``window`` batches, sort each window by length, slice it into batches, shuffle the
batches, longest batch first) with sentence-transformers' ``NO_DUPLICATES`` rule kept: no text appears twice in a
batch, so no in-batch "negative" is the positive itself (a row that would repeat a text waits for the next batch
of its window, or the window after). The window keeps batches random beyond their length: a batch draws from
``window × batch_size`` random rows, not from the whole set sorted.

The longest batch comes first, as in transformers: a run that does not fit in memory fails at its first step, and
the first step's peak is the run's. :meth:`LengthGroupedBatchSampler.plan` gives the batches before training, so
their padded sizes (:func:`padded_tokens`) can price the run (:mod:`xlsent.training.estimate`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from sentence_transformers.base.sampler import DefaultBatchSampler

#: columns that are targets or metadata, never texts (sentence-transformers' label columns)
NOT_TEXT = {"label", "labels", "score", "scores", "dataset_name"}


def text_columns(dataset) -> list[str]:
    """The columns of ``dataset`` that hold texts (what the model encodes)."""
    first = dataset[0] if len(dataset) else {}
    return [c for c in dataset.column_names if c not in NOT_TEXT and isinstance(first.get(c), str)]


def row_lengths(dataset, count) -> np.ndarray:
    """Each row's length: ``count(texts)`` (pieces of each text, cut as the model cuts) of its longest text column."""
    cols = text_columns(dataset)
    out = np.zeros(len(dataset), dtype=np.int64)
    for c in cols:
        out = np.maximum(out, np.asarray(count(list(dataset[c])), dtype=np.int64))
    return out


def padded_tokens(batches: Sequence[Sequence[int]], lengths: np.ndarray, chunk: int = 0) -> np.ndarray:
    """Rows × longest row of each batch: the tokens a padded batch costs (per text column). ``chunk`` > 0: the
    batch's rows sorted by length and run ``chunk`` at a time, each chunk padded to its own longest
    (:func:`xlsent.losses.sorted_forward.embed_sorted`)."""
    def cost(b) -> int:
        if not len(b):
            return 0
        if chunk <= 0:
            return len(b) * int(lengths[b].max())
        s = np.sort(lengths[b])
        return int(sum(len(s[i:i + chunk]) * int(s[i:i + chunk].max()) for i in range(0, len(s), chunk)))

    return np.asarray([cost(b) for b in batches], dtype=np.int64)


class LengthGroupedBatchSampler(DefaultBatchSampler):
    """Random batches of similar length with no text twice in a batch (see the module's docstring).

    ``lengths``: each row's length (:func:`row_lengths`); ``group=False`` gives plain random batches (with the
    no-duplicates rule when ``no_duplicates``), the same plan as the trainer's own samplers draw."""

    def __init__(self, dataset, batch_size: int, drop_last: bool, valid_label_columns=None, generator=None,
                 seed: int = 0, *, lengths: Sequence[int], no_duplicates: bool = True, group: bool = True,
                 window: int = 16) -> None:
        super().__init__(dataset, batch_size=batch_size, drop_last=drop_last,
                         valid_label_columns=valid_label_columns, generator=generator, seed=seed)
        self.lengths = np.asarray(lengths, dtype=np.int64)
        if len(self.lengths) != len(dataset):
            raise ValueError(f"lengths has {len(self.lengths)} values for {len(dataset)} rows")
        cols = text_columns(dataset) if no_duplicates else []
        values = [list(dataset[c]) for c in cols]
        self._keys = [frozenset(str(v[i]) for v in values) for i in range(len(dataset))] if cols else None
        self.group, self.window = bool(group), max(1, int(window))
        self._plans: dict[int, list[list[int]]] = {}

    def _fill(self, rows: list[int]) -> list[list[int]]:
        """Greedy batches of ``rows`` in order; a row whose text the batch already holds waits for the next."""
        out, rest, bs = [], rows, int(self.batch_size)
        while rest:
            batch, seen, waiting = [], set(), []
            for k, i in enumerate(rest):
                if len(batch) == bs:
                    waiting.extend(rest[k:])
                    break
                if self._keys is not None and not seen.isdisjoint(self._keys[i]):
                    waiting.append(i)
                    continue
                batch.append(i)
                if self._keys is not None:
                    seen.update(self._keys[i])
            out.append(batch)
            rest = waiting
        return out

    def plan(self, epoch: int | None = None) -> list[list[int]]:
        """The batches of ``epoch`` (the current one by default), in the order they are given; seeded."""
        epoch = self.epoch if epoch is None else epoch
        if epoch in self._plans:
            return self._plans[epoch]
        rng = np.random.default_rng([int(self.seed or 0), int(epoch)])
        order = rng.permutation(len(self.lengths)).tolist()
        bs = int(self.batch_size)
        span = bs * self.window if self.group else len(order) or 1
        batches: list[list[int]] = []
        carry: list[int] = []
        for start in range(0, len(order), span):
            window = order[start:start + span]
            if self.group:  # longest first, ties in their random order
                window = sorted(window, key=lambda i: -self.lengths[i])
            filled = self._fill(carry + window)
            last = start + span >= len(order)
            keep = filled if last else [b for b in filled if len(b) == bs]
            carry = [] if last else [i for b in filled if len(b) < bs for i in b]
            batches.extend(keep)
        if self.drop_last:
            batches = [b for b in batches if len(b) == bs]
        if self.group:
            perm = rng.permutation(len(batches)).tolist()
            batches = [batches[i] for i in perm]
            if batches:  # the longest batch first: the run's peak memory at its first step
                cost = padded_tokens(batches, self.lengths)
                first = int(np.argmax(cost))
                batches.insert(0, batches.pop(first))
        self._plans = {epoch: batches}
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        yield from self.plan()

    def __len__(self) -> int:
        return len(self.plan())
