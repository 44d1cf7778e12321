"""Whether a model can read a text: the share of its pieces that are the tokenizer's unknown piece (issue 62).

A text in a script the model's tokenizer never saw reaches the model as a row of ``<unk>`` pieces: embedding it,
training on it or scoring it says nothing about the language, however long the run. :func:`check_readable` — the one
place the check is made, where texts meet a tokenizer — measures the unknown-piece rate of a sample of each side
written in a script other than Latin (as :func:`xlsent.data.sets.stats.piece_stats` counts it, and ``xlsent data
stats --model`` prints it) before ``embed``, ``train adapt``, ``train bootstrap``, ``eval`` and ``mine`` do their
work, and where it is above :data:`UNREADABLE` says so once, naming the remedies: romanise the script inside the
model (``xlsent models romanize``) or add pieces for it (``xlsent models extend-vocab``). An
:class:`~xlsent.encoding.encoder.Encoder` makes it on the texts it is given with a label
(``encode(texts, lang, source=…)``, :meth:`~xlsent.encoding.encoder.Encoder.check_readable`); a recipe that trains
asks it of its student's tokenizer.
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
    warnings.warn(message, UnreadableTextWarning, stacklevel=_caller_of_site())
    return message


def check_readable(reader, sides: Sequence[tuple[str, Sequence[str], str | None]],
                   model: str | None = None) -> str | None:
    """The readability check of ``sides`` (``(label, texts, lang)``: each side's first :data:`SAMPLE` texts are
    measured) through ``reader``: an encoder (its tokenizer as it sees the texts: glossed where it glosses), a Hugging
    Face tokenizer, or anything else (no tokenizer known: nothing is said). ``model``: how the warning names the model
    (default: the encoder's ``label`` or ``name``). One :class:`UnreadableTextWarning` for the sides above
    :data:`UNREADABLE` (:func:`warn_unreadable`); its message, or None."""
    if reader is None or hasattr(reader, "unk_token_id"):
        share_of = tokenizer_share(reader)
    else:
        share_of = encoder_share(reader)
    label = model if model is not None else str(getattr(reader, "label", None) or getattr(reader, "name", "MODEL"))
    return warn_unreadable(share_of, sides, label)


def model_tokenizer(model):
    """The tokenizer of ``model`` (a registered name or a folder), read without loading the model; None where there is
    none here (the model's own load then says what is wrong)."""
    from xlsent.models.registry import resolve_model_path
    from xlsent.utils.errors import XlsentError

    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(str(resolve_model_path(model)), local_files_only=True)
    except (OSError, ValueError, XlsentError):
        return None


def _caller_of_site() -> int:
    """The ``stacklevel`` of the warning: the caller of the first function outside this package that asked for the
    check (``embed``'s caller, mine's, a task runner's) — wherever in the encoder the check was made."""
    import sys
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    frame, level = sys._getframe(1), 1  # warn_unreadable: stacklevel 1
    while frame is not None and str(Path(frame.f_code.co_filename).resolve().parent) == here:
        frame, level = frame.f_back, level + 1
    return level + 1


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
