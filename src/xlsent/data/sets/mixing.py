"""Several languages in one training set: how many rows each language gets in an epoch, and a held-out part
drawn per language.

* :func:`language_shares` — temperature sampling (Arivazhagan et al. 2019; XLM-R's α = 1/T, Conneau et al.
  2020): a language with ``n_l`` of the ``N`` pairs is drawn with probability ∝ ``(n_l / N) ** (1 / T)``;
  ``T = 1`` is proportional to size, a larger ``T`` flattens the shares towards uniform;
* :func:`temperature_rows` — the row indices of one epoch drawn with those shares (seeded; a language drawn
  more often than it has rows repeats them, every row once before any twice);
* :func:`stratified_split` — (train rows, held-out rows) where every language contributes its share.

One language, or ``T = 1``, leaves the rows as they are: a single-language corpus trains exactly as before.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np


def language_rows(languages: Sequence[str]) -> dict[str, np.ndarray]:
    """Row indices of each language, in order of first appearance."""
    out: dict[str, list[int]] = {}
    for i, lang in enumerate(languages):
        out.setdefault(lang, []).append(i)
    return {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}


def language_shares(counts: Mapping[str, int], temperature: float) -> dict[str, float]:
    """Each language's probability: ∝ ``(n_l / N) ** (1 / temperature)``, summing to 1."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    total = sum(counts.values())
    w = {k: (n / total) ** (1.0 / temperature) if n else 0.0 for k, n in counts.items()}
    z = sum(w.values())
    return {k: v / z for k, v in w.items()}


def _apportion(quotas: Mapping[str, float], total: int, caps: Mapping[str, int] | None = None) -> dict[str, int]:
    """Whole counts summing to ``total`` (as far as the caps allow) from real quotas: largest remainder, ties in
    the mapping's order."""
    caps = caps or {}
    out = {k: min(math.floor(q), caps.get(k, 1 << 62)) for k, q in quotas.items()}
    order = sorted(quotas, key=lambda k: -(quotas[k] - math.floor(quotas[k])))  # stable: ties keep their order
    left = total - sum(out.values())
    while left > 0:
        room = [k for k in order if out[k] < caps.get(k, 1 << 62)]
        if not room:
            break
        for k in room[:left]:
            out[k] += 1
        left = total - sum(out.values())
    return out


def epoch_counts(languages: Sequence[str], temperature: float, size: int | None = None) -> dict[str, int]:
    """Rows each language gets in an epoch of ``size`` rows (default: as many as there are)."""
    rows = language_rows(languages)
    size = len(languages) if size is None else int(size)
    shares = language_shares({k: len(v) for k, v in rows.items()}, temperature)
    return _apportion({k: size * p for k, p in shares.items()}, size)


def temperature_rows(languages: Sequence[str], temperature: float, seed: int, size: int | None = None) -> np.ndarray:
    """The row indices of one epoch (sorted: the trainer's sampler shuffles them), each language drawn with its
    :func:`language_shares` share of ``size`` rows (default: as many as there are). One language, or
    ``temperature == 1`` with the default size, returns ``range(len(languages))`` untouched — the rows as they
    were. A language given fewer rows than it has gets a seeded sample of them without repeats; one given more
    repeats every row before any row a third time."""
    n = len(languages)
    rows = language_rows(languages)
    if (len(rows) <= 1 or float(temperature) == 1.0) and (size is None or size == n):
        return np.arange(n, dtype=np.int64)
    counts = epoch_counts(languages, temperature, size)
    rng = np.random.default_rng(seed)
    out = []
    for lang, idx in rows.items():
        k = counts[lang]
        whole, rest = divmod(k, len(idx))
        out += [idx] * whole + [rng.permutation(idx)[:rest]]
    return np.sort(np.concatenate(out)) if out else np.arange(0, dtype=np.int64)


def stratified_split(languages: Sequence[str], size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, held-out rows), sorted: ``size`` rows held out, each language contributing its share of them
    (largest remainder; never more than half of a language's rows), each language's rows a seeded permutation."""
    rows = language_rows(languages)
    n = len(languages)
    counts = _apportion({k: size * len(v) / n for k, v in rows.items()}, size,
                        {k: len(v) // 2 for k, v in rows.items()}) if n else {}
    rng = np.random.default_rng(seed)
    train, held = [], []
    for lang, idx in rows.items():
        perm = rng.permutation(idx)
        held.append(perm[:counts[lang]])
        train.append(perm[counts[lang]:])
    empty = np.arange(0, dtype=np.int64)
    return (np.sort(np.concatenate(train)) if train else empty, np.sort(np.concatenate(held)) if held else empty)


def shares_note(languages: Sequence[str], rows: np.ndarray, temperature: float, shown: int = 6) -> str:
    """One line: the epoch's size and the languages' shares in it against their shares by size (the largest
    ``shown``)."""
    by_size = {k: len(v) for k, v in language_rows(languages).items()}
    drawn = {k: len(v) for k, v in language_rows([languages[i] for i in rows.tolist()]).items()}
    n, m = max(1, len(languages)), max(1, len(rows))
    top = sorted(by_size, key=lambda k: -by_size[k])
    parts = [f"{k} {drawn.get(k, 0) / m:.1%} (by size {by_size[k] / n:.1%})" for k in top[:shown]]
    more = f", … {len(top) - shown} more" if len(top) > shown else ""
    return (f"train.language_temperature={temperature:g}: {len(rows)} rows an epoch over {len(top)} languages — "
            + ", ".join(parts) + more)
