"""Whether a model can read a text: the share of its pieces that are the tokenizer's unknown piece (issue 62).

A text in a script the model's tokenizer never saw reaches the model as a row of ``<unk>`` pieces: embedding it,
training on it or scoring it says nothing about the language, however long the run. :func:`warn_unreadable`
measures the unknown-piece rate of a sample of each side written in a script other than Latin (as
:func:`xlsent.data.sets.stats.piece_stats` counts it, and ``xlsent data stats --model`` prints it) before ``embed``, ``train adapt``, ``eval`` and ``mine`` do their
work, and where it is above :data:`UNREADABLE` says so once, naming the remedies: romanise the script inside the
model (``xlsent models romanize``) or add pieces for it (``xlsent models extend-vocab``).
"""

from __future__ import annotations

import warnings
from typing import Callable, Sequence

#: a side whose text is more than this share of unknown pieces is said to be unreadable to the model (the issue's
#: "mostly unknown": Cherokee is 48% to e5-small, Deseret letters 45%; a text with a stray unknown symbol is < 1%)
UNREADABLE = 0.2
#: texts a side is measured on (the first ones): enough for a rate, cheap beside the work that follows
SAMPLE = 500


class UnreadableTextWarning(UserWarning):
    """A side's text is mostly pieces the model's tokenizer does not know."""


#: what each remedy gave, measured once on the substitutes — the Chichewa Bible written by sound in Deseret and in
#: Shavian, e5-small, 1,000 training pairs, P@1 on 500 New Testament pairs as a share of adapt on the Latin original
#: (the lowest and highest over the two scripts and both directions) — the figures of docs/results.md, "A script the
#: model cannot read", where their command is; the warning quotes them
REMEDIES = (("romanise + adapt", (0.87, 0.96)), ("extend-vocab + adapt", (0.36, 0.40)),
            ("adapt alone", (0.13, 0.13)))


def romanised_base(model: str) -> str | None:
    """For a model whose tokenizer already romanises (:func:`xlsent.models.vocab.romanize.romanizes`: the steps
    ``xlsent models romanize`` writes in its normaliser, kept by a model trained from such a folder), the model it
    was built from (its record's, :func:`~xlsent.models.vocab.romanize.recorded_base`; ``BASE`` when no record
    says); None for any other model."""
    import json
    from pathlib import Path

    from xlsent.models.vocab.romanize import recorded_base, romanizes

    folder = Path(model).expanduser()
    if (folder / "model" / "tokenizer.json").is_file() and not (folder / "tokenizer.json").is_file():
        folder = folder / "model"  # a run folder
    try:
        if not romanizes(json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))):
            return None
    except (OSError, ValueError, AttributeError):
        return None
    return recorded_base(folder) or "BASE"


def advice(model: str, base: str | None = None) -> str:
    """The remedies, as commands, and what each gave on the substitutes (:data:`REMEDIES`). For a model that
    romanises already (``base``: :func:`romanised_base`, found when not given), what is left: characters no
    romaniser knows, or text the folder was not built from."""
    base = romanised_base(model) if base is None else base
    if base:
        return (f"{model} romanises already: this text holds characters no romaniser knows, or the folder was built "
                f"from other text. Build it again from this text — xlsent models romanize {base} --texts FILE -o DIR "
                "(Python: xlsent.romanize) — with --extend to give each character left a piece; on the substitutes "
                "--extend was not reliably better, so train from both and keep the one that scores better on your "
                "held-out pairs (docs/results.md, \"A script the model cannot read\")")
    gave = ", ".join(f"{name} {lo:.0%}" + (f"–{hi:.0%}" if hi != lo else "") for name, (lo, hi) in REMEDIES)
    return (f"Romanise the script inside the model first: xlsent models romanize {model} --texts FILE -o DIR "
            "(Python: xlsent.romanize), then train from DIR; or add pieces for it: xlsent models extend-vocab. "
            f"On a substitute script with 1,000 pairs, P@1 as a share of adapt on the same pairs in Latin letters: "
            f"{gave} "
            "(docs/results.md, \"A script the model cannot read\")")


def unreadable_sides(share_of: Callable[[Sequence[str], str | None], float | None],
                     sides: Sequence[tuple[str, Sequence[str], str | None]]) -> list[tuple[str, float, str | None]]:
    """``(where, unknown-piece rate, script)`` of each side ``(where, texts, lang)`` above :data:`UNREADABLE`;
    ``share_of(texts, lang)`` gives a sample's rate (None: the model's tokenizer is not known)."""
    from xlsent.data.langid.scripts import detect_script, letter_like

    out = []
    for where, texts, lang in sides:
        sample = [t for t in list(texts[:SAMPLE]) if t and t.strip()]
        script = detect_script(" ".join(sample[:50])) if sample else None
        # unknown pieces of Latin text are words a word-level vocabulary lacks; a text without letters has no script
        if script == "Latn" or not any(letter_like(ch) for t in sample[:50] for ch in t):
            continue
        script = None if script == "Zyyy" else script  # letters of a script the table does not list
        share = share_of(sample, lang)
        if share is not None and share > UNREADABLE:
            out.append((where, share, script))
    return out


def warn_unreadable(share_of: Callable[[Sequence[str], str | None], float | None],
                    sides: Sequence[tuple[str, Sequence[str], str | None]], model: str, most: int = 8) -> str | None:
    """One :class:`UnreadableTextWarning` naming the sides above :data:`UNREADABLE` and the remedies; the message
    (None when every side is readable)."""
    found = unreadable_sides(share_of, sides)
    if not found:
        return None
    named = "; ".join(f"{where}" + (f" [{script}]" if script else "") + f": {share:.0%}"
                      for where, share, script in found[:most])
    more = f"; and {len(found) - most} more" if len(found) > most else ""
    one = len(found) == 1
    base = romanised_base(model) or ""  # read once: the message's lead and its advice
    little = "" if base else (
        f", and training on {'it' if one else 'them'} as {'it is' if one else 'they are'} helps little")
    message = (f"{named}{more} of {'its' if one else 'their'} pieces unknown to {model}'s tokenizer — the model cannot "
               f"read {'this text' if one else 'these texts'}{little}. " + advice(model, base))
    warnings.warn(message, UnreadableTextWarning, stacklevel=3)
    return message


def encoder_share(encoder) -> Callable[[Sequence[str], str | None], float | None]:
    """``share_of`` for an :class:`xlsent.encoding.encoder.Encoder` (its tokenizer, as it sees the texts)."""

    def share_of(texts: Sequence[str], lang: str | None) -> float | None:
        stats = encoder.piece_stats(texts, lang) if hasattr(encoder, "piece_stats") else None
        return None if stats is None else float(stats["unk_rate"])

    return share_of


def tokenizer_share(tokenizer) -> Callable[[Sequence[str], str | None], float | None]:
    """``share_of`` for a Hugging Face tokenizer (no unknown piece: None)."""

    def share_of(texts: Sequence[str], lang: str | None) -> float | None:
        from xlsent.data.sets.stats import tokenizer_stats

        if tokenizer is None or getattr(tokenizer, "unk_token_id", None) is None:
            return None
        return float(tokenizer_stats(tokenizer, list(texts))["unk_rate"])

    return share_of
