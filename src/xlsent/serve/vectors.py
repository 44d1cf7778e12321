"""What a response's vectors are made into after the model: centered with a language's stored mean, cut to a width."""

from __future__ import annotations

from typing import Any

import numpy as np

from xlsent.serve.limits import LimitError
from xlsent.serve.schema import not_unicode, width_error
from xlsent.utils.text import bad_char, describe, shown


class Shaping:
    """The model folder's language means (``xlsent models calibrate``), the server's default width (``--dimensions``)
    and the Matryoshka widths the folder records; set when the model loads."""

    def __init__(self, dimensions: int | None = None) -> None:
        self.dimensions = dimensions  # the default width of a response (None: the model's full width)
        self.full: int | None = None  # the model's width, once loaded
        self.widths: list[int] = []
        self.means: Any = None  # xlsent.models.language_means.LanguageMeans, or None

    def language(self, lang: str | None) -> str | None:
        """The request's ``language`` (whose stored mean centers its vectors), checked; None when absent."""
        if lang is None:
            return None
        if not lang.strip():
            raise LimitError(422, "language", None, "'language' must be a language code such as 'nya'")
        j = bad_char(lang)
        if j is not None:  # (the request model refuses it first; kept for direct calls)
            raise not_unicode("language", None, describe("", j, lang[j]))
        if self.means is None:
            raise LimitError(422, "language", None, "this model carries no language means, so nothing can be "
                             "centered; calibrate it first (xlsent models calibrate MODEL --lang CODE=FILE)")
        if not self.means.has(lang):
            raise LimitError(422, "language", self.means.languages, f"no mean vector for {shown(lang)}; calibrated: "
                             f"{', '.join(self.means.languages)}")
        return lang

    def width(self, value: int | None) -> int | None:
        """The request's ``dimensions`` (else the server's ``--dimensions``; ``None``: the full width): at most the
        model's width (the request model has checked it is a whole number ≥ 1)."""
        if value is None:
            return self.dimensions
        if self.full is not None and value > self.full:
            raise width_error(value, self.full, self.dimensions)
        return value

    def centered(self, vecs: np.ndarray, lang: str | None) -> np.ndarray:
        """``vecs`` centered with ``lang``'s stored mean (unit rows), or as they are without a language."""
        return vecs if lang is None else self.means.apply(vecs, lang)

    def shaped(self, vecs: np.ndarray, lang: str | None, dimensions: int | None) -> np.ndarray:
        """A request's vectors: centered with its language's stored mean (full width), then cut to its width."""
        from xlsent.encoding.width import cut

        return cut(self.centered(vecs, lang), dimensions)

    def widths_info(self) -> dict:
        return {"full": self.full, "default": self.dimensions or self.full, "matryoshka": self.widths,
                "note": f"'dimensions' takes any width from 1 to {self.full}: the first N coordinates of the full "
                        "vector, renormalised" + (" (the model was trained to be cut to the matryoshka widths)"
                                                  if self.widths else "")}

    def centering_info(self, index=None) -> dict:
        if self.means is None:
            return {"languages": [], "note": "no language means in the model folder: vectors are never centered "
                    "(xlsent models calibrate MODEL --lang CODE=FILE adds them)"}
        out = {"languages": self.means.languages, "sources": self.means.summary(),
               "note": "a request's 'language' centers its vectors with that language's mean"}
        if index is not None:
            missing = sorted({e.lang for e in index.entries if not self.means.has(e.lang)})
            out["index_centered"] = index.centered
            out["index_languages_without_a_mean"] = missing  # calibrate with the index's own codes (e.g. eng, nya)
        return out
