"""Filter candidate pairs, then keep the best N (Huang et al. 2023, §4.1).

The paper extracted ~20,000 pseudo-parallel Chinese–Vietnamese pairs from Wikipedia, removed
sentences with fewer than 5 words, removed pairs containing special characters (a regular
expression), and kept the 2,016 most similar of the ~7,000 left. Here:

1. the cleaning filters of :func:`xlsent.data.filters.cleaning.clean_pairs` (NFC, empty side,
   ``min_words``, ``special_pattern``, exact duplicates), each counted;
2. the noise filters of :mod:`xlsent.data.filters.noise_filters` (language, copies, near-duplicates, length ratio,
   numbers), each counted with examples;
3. a score per pair, by ``rank_by``:

   * ``cosine`` — the model's cosine of the two sentences;
   * ``margin`` — LASER's ratio margin, cos(x, y) over the mean of x's and y's ``k`` nearest
     neighbours' cosines among all candidate sentences of the other side;
   * ``csls`` — CSLS (Conneau et al. 2018), ``2 cos(x, y) − r(x) − r(y)`` over the same neighbourhoods;
   * ``score`` — the score column of a mined file (``xlsent mine`` output);

   with ``center``, each side's mean vector over all candidates is subtracted first (per-language
   centering, :func:`xlsent.similarity.center`);
4. a cut (``cut``: scores → the lowest score kept, e.g. ``xlsent mine``'s automatic threshold), then the ``top``
   best pairs (0 = all), best first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from xlsent.data.filters.cleaning import CleanReport, clean_pairs
from xlsent.data.filters.noise_filters import MAX_Z, NoiseReport, apply_noise_filters
from xlsent.data.formats.readers import read_fields, read_lines, read_pairs
from xlsent.similarity import center as center_rows, pair_margins, unit
from xlsent.utils.errors import XlsentError, named

RANK_BY = ("cosine", "margin", "csls", "score")


@dataclass
class FilteredPairs:
    """What :func:`xlsent.filter_pairs` kept: ``pairs`` (``(score, src, tgt)``, best first), the counts of every
    filter and notes; ``to_dict()`` is what ``OUTPUT.json`` holds."""

    pairs: list[tuple[float, str, str]]
    report: CleanReport
    notes: list[str]
    noise: NoiseReport | None = None
    threshold: float | None = None
    about: dict = field(default_factory=dict)  # source, rank_by, languages, read: what the summary JSON opens with
    screened: int = 0  # pairs left after the cleaning and the noise filters (before any cut or top N)

    @property
    def rows(self) -> list[tuple[float, str, str]]:
        """Deprecated: :attr:`pairs` (the old name, until xlsent 0.3)."""
        import warnings

        warnings.warn("FilteredPairs.rows is renamed .pairs (the old name goes in xlsent 0.3)", DeprecationWarning,
                      stacklevel=2)
        return self.pairs

    @property
    def removed_share(self) -> float:
        """Share of the file's pairs the cleaning and the noise filters removed (a cut or a top N not counted)."""
        return 1 - self.screened / self.report.rows_in if self.report.rows_in else 0.0

    def to_dict(self) -> dict:
        return {**self.about, "kept": len(self.pairs), "removed_by_filters": {
                    "pairs": self.report.rows_in - self.screened, "share": round(self.removed_share, 4)},
                "cleaning": self.report.to_dict(),
                "noise_filters": self.noise.to_dict() if self.noise else None, "threshold": self.threshold,
                "notes": self.notes}


def read_candidates(path: str | Path, on_bad_lines: str = "error"):
    """Pairs with an optional score: ``score<TAB>src<TAB>tgt`` (``xlsent mine``) or any pairs format."""
    path = Path(path)
    first = next((line for line in read_lines(path) if line.strip()), "") if path.is_file() else ""
    parts = first.split("\t")
    if len(parts) == 3:
        try:
            float(parts[0])
        except ValueError:
            pass
        else:
            from datasets import Dataset

            def check(p):
                try:
                    float(p[0])
                except ValueError:
                    return f"score '{p[0]}' is not a number"
                return None

            cols, report = read_fields(path, ("score", "src", "tgt"), on_bad_lines, "write score<TAB>src<TAB>tgt",
                                       check=check)
            cols["score"] = [float(x) for x in cols["score"]]
            return Dataset.from_dict(cols), report
    return read_pairs(path, on_bad_lines)


def screen(ds, min_words: int = 0, special_pattern: str | None = None, noise_filters: tuple[str, ...] = (),
           langs: tuple[str | None, str | None] = (None, None), max_z: float = MAX_Z, identifier=None):
    """The cleaning (:func:`xlsent.data.filters.cleaning.clean_pairs`: normalisation, empty sides, ``min_words``,
    ``special_pattern``, exact duplicates) then the noise filters; ``(kept dataset, CleanReport, NoiseReport or
    None, notes)``, every filter counted; ``identifier``: the n-gram language identifier of the language filter
    (default: the bundled one)."""
    ds, report = clean_pairs(ds, min_words=min_words or None, special_pattern=special_pattern or None, dedupe=True)
    notes = [f"filter {n} removed {r} ({w})" for n, r, w in report.steps]
    noise = None
    if noise_filters and len(ds):
        keep, noise = apply_noise_filters(list(ds["src"]), list(ds["tgt"]), langs, noise_filters, max_z,
                                          identifier=identifier)
        notes += [f"filter {f.name} removed {f.removed} ({f.why})" for f in noise.filters] + noise.notes
        ds = ds.select(np.nonzero(keep)[0])
    return ds, report, noise, notes


def filter_pairs(ds, min_words: int = 0, special_pattern: str | None = None, top: int = 0, rank_by: str = "cosine",
                 encode: Callable[[list[str], str], np.ndarray] | None = None, k: int = 4,
                 center: bool = False, noise_filters: tuple[str, ...] = (),
                 langs: tuple[str | None, str | None] = (None, None), max_z: float = MAX_Z,
                 cut: Callable[[np.ndarray], float | None] | None = None, identifier=None) -> FilteredPairs:
    """Clean (every filter counted), filter the noise, score, cut and keep the ``top`` best.

    ``encode(texts, side)`` embeds one side (``"src"`` or ``"tgt"``) for ``cosine`` / ``margin`` / ``csls``
    ranking; ``center`` subtracts each side's mean over the candidates first; ``noise_filters`` and ``langs``
    (normalised codes, None = unknown) and ``identifier`` as :func:`xlsent.data.filters.noise_filters.apply_noise_filters`."""
    if rank_by not in RANK_BY:
        raise XlsentError(f"unknown {named('rank_by', rank_by)}: use one of {', '.join(RANK_BY)}")
    if rank_by == "score" and "score" not in ds.column_names:
        raise XlsentError("rank_by='score' needs a mined file (score<TAB>src<TAB>tgt); use 'cosine' or 'margin'")
    ds, report, noise, notes = screen(ds, min_words, special_pattern, noise_filters, langs, max_z, identifier)
    src, tgt = list(ds["src"]), list(ds["tgt"])
    if not src:
        raise XlsentError("no pair is left after the filters — loosen min_words= or special_pattern=, or switch "
                          "filters off with filters=")
    if rank_by == "score":
        scores = np.asarray(ds["score"], dtype=np.float64)
    else:
        if encode is None:
            raise XlsentError(f"{named('rank_by', rank_by)} needs a model")
        a, b = encode(src, "src"), encode(tgt, "tgt")
        if center:
            a, b = center_rows(a), center_rows(b)
            notes.append("scored after per-language centering (each side's mean over the candidates)")
        a, b = unit(a), unit(b)
        if rank_by == "cosine":
            scores = np.sum(a * b, axis=1)
        else:
            scores = pair_margins(a, b, k, "ratio" if rank_by == "margin" else "distance")
            scores = scores * 2 if rank_by == "csls" else scores
    order = np.argsort(-scores, kind="stable")
    threshold = cut(scores) if cut is not None else None
    if threshold is not None:
        below = int((scores[order] < threshold).sum())
        notes.append(f"threshold {threshold:.4f} ({rank_by}): removed {below} lower-scored pair(s)")
        order = order[scores[order] >= threshold]
    if top and top < len(order):
        notes.append(f"top {top} by {rank_by}: removed {len(order) - top} lower-scored pair(s)")
        order = order[:top]
    return FilteredPairs([(float(scores[i]), src[i], tgt[i]) for i in order], report, notes, noise, threshold,
                         screened=len(src))
