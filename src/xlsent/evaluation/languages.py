"""Retrieval over many languages, summarised by what the model sees of each language's text.

One pool per language (``--dataset udhr-all:test``): :func:`profile_languages` gives each pool's result the
``script`` of its target-side text (ISO 15924, the majority script of its letters:
:func:`xlsent.data.langid.scripts.detect_script`) and how the model's own tokenizer splits that text —
``pieces_per_word`` (pieces without special tokens or prompt, per word as
:func:`xlsent.data.filters.cleaning.count_words` counts words: whitespace tokens, each character of a script written
without spaces) and ``unk_rate`` (the share of those pieces that are the tokenizer's unknown piece, as
``xlsent data stats --model`` prints it). :func:`summarize` groups the languages by script, by pieces per word
(:data:`PIECES_BINS`) and by unknown-piece rate (:data:`UNK_BINS`): languages and mean P@1 each direction,
every language counting once, and the same for each scoring reported beside the main figure.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from xlsent.data.langid.scripts import detect_script

#: pieces-per-word bins: (label, low inclusive, high exclusive)
PIECES_BINS = (("<1.5", 0.0, 1.5), ("1.5–2", 1.5, 2.0), ("2–3", 2.0, 3.0), ("≥3", 3.0, math.inf))
#: unknown-piece-rate bins: (label, low exclusive, high exclusive); "0" is exactly none
UNK_BINS = (("0", 0.0, 0.0), ("<1%", 0.0, 0.01), ("1–10%", 0.01, 0.10), ("≥10%", 0.10, math.inf))


def profile_languages(results: Sequence, groups: dict, encoder) -> None:
    """Set ``script``, ``pieces_per_word`` and ``unk_rate`` of each result (in place) from the target side of
    its pool; ``groups`` are the pools the results were scored on, in the same order (name → (src, tgt,
    src_lang, tgt_lang)). The tokenizer figures stay None for an encoder whose tokenizer is not known."""
    for r, (src, tgt, _sl, tl) in zip(results, groups.values()):
        texts = list(dict.fromkeys(tgt))
        r.script = detect_script(" ".join(texts))
        stats = encoder.piece_stats(texts, tl or None) if hasattr(encoder, "piece_stats") else None
        if stats is not None:
            r.pieces_per_word, r.unk_rate = stats["pieces_per_word"], stats["unk_rate"]


def pieces_bin(pieces_per_word: float) -> str:
    """The :data:`PIECES_BINS` label of a pieces-per-word figure."""
    return next(label for label, low, high in PIECES_BINS if low <= pieces_per_word < high)


def unk_bin(unk_rate: float) -> str:
    """The :data:`UNK_BINS` label of an unknown-piece rate ("0" only for none at all)."""
    if unk_rate <= 0.0:
        return "0"
    return next(label for label, low, high in UNK_BINS[1:] if unk_rate < high)


def _row(key: str, label: str, rows: list[dict]) -> dict:
    out = {key: label, "languages": len(rows),
           "p@1": {d: float(np.mean([r[d]["p@1"] for r in rows])) for d in ("src2tgt", "tgt2src")}}
    if all(r.get("beside") for r in rows):
        out["beside"] = {name: {d: float(np.mean([r["beside"][name][d] for r in rows])) for d in ("src2tgt", "tgt2src")}
                         for name in rows[0]["beside"]}
    return out


def summarize(entries: Sequence) -> dict:
    """Languages and mean P@1 each direction (and of each scoring beside it) overall, by script, by pieces per
    word and by unknown-piece rate. ``entries``: per-language results or their ``to_dict()``s, profiled by
    :func:`profile_languages`; the tokenizer groupings need every language's figures."""
    rows = [e if isinstance(e, dict) else e.to_dict() for e in entries]
    out: dict = {"languages": len(rows)}
    if not rows:
        return out
    out["mean"] = _row("all", "all", rows)["p@1"]
    scripts: dict[str, list[dict]] = {}
    for r in rows:
        scripts.setdefault(r.get("script") or "Zyyy", []).append(r)
    out["by_script"] = [_row("script", s, rs) for s, rs in sorted(scripts.items(), key=lambda x: (-len(x[1]), x[0]))]
    if all(r.get("pieces_per_word") is not None for r in rows):
        for key, bins, fn, field in (("by_pieces_per_word", PIECES_BINS, pieces_bin, "pieces_per_word"),
                                     ("by_unk_rate", UNK_BINS, unk_bin, "unk_rate")):
            groups = {label: [r for r in rows if fn(r[field]) == label] for label, _, _ in bins}
            out[key] = [_row("bin", label, rs) for label, rs in groups.items() if rs]
    return out
