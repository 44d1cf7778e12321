"""The option system of the task types: an option is a dataclass field with its default and its lowest value or its
allowed words and its help (:func:`option`: an :class:`xlsent.utils.options.Option` in the field's metadata, the
declaration the CLI builds its options from); the options several types share have one maker each (``_seed()``,
``_sample()`` …), what a task reads is declared with ``_data()``, and a given value is checked against its field
(``"500"`` from the CLI is 500)."""

from __future__ import annotations

import typing
from dataclasses import field
from typing import Any, Sequence

from xlsent.data.formats.readers import BAD_LINE_POLICIES as ON_BAD_LINES
from xlsent.utils.errors import XlsentError
from xlsent.utils.options import Option


def option(default: Any, *, low: float | None = None, choices: Sequence[str] = (), help: str = "") -> Any:
    """A task option: a dataclass field with its default, its lowest value or its allowed words, and its help (the
    field's ``metadata["option"]``, an :class:`~xlsent.utils.options.Option`)."""
    declared = Option(default, low=low, choices=tuple(choices), help=help)
    return field(default=default, metadata={"low": low, "choices": tuple(choices), "option": declared})


def declared(f: Any) -> Option:
    """The :class:`~xlsent.utils.options.Option` of a task type's field (:meth:`TaskType.options`)."""
    found = f.metadata.get("option")
    return found or Option(f.default, low=f.metadata.get("low"), choices=f.metadata.get("choices", ()))


# Options several types share: each default and range written once.
def _seed(help: str = "") -> Any:
    return option(0, help=help)  # of the sample and the bootstrap


def _resamples() -> Any:
    return option(1000, low=0)  # of the bootstrap's 95% interval (0: none, the point value twice)


def _sample(default: int = 0, help: str = "") -> Any:
    return option(default, low=0, help=help)  # drawn at random (0 = all)


#: embed each text as the mean of chunks of at most this many words (0: whole); every task that embeds texts has it
CHUNK_WORDS = Option(0, low=0, help="chunked pooling: average over ≤ N-word chunks (0 = off)")


def _chunk_words(default: int = 0) -> Any:
    return option(default, low=0, help=CHUNK_WORDS.help)


def _on_bad_lines() -> Any:
    return option("error", choices=ON_BAD_LINES)  # a malformed line: stop (error) or skip it, counted


def _data() -> Any:
    """What a task reads (``load``): not an option."""
    return field(default=None, init=False, repr=False)


def _bool(value: Any, key: str) -> bool | None:
    if isinstance(value, bool) or value is None:
        return value
    word = str(value).strip().lower()
    for answer, words in ((True, ("true", "1", "yes", "on")), (False, ("false", "0", "no", "off")),
                          (None, ("none", "auto"))):
        if word in words:
            return answer
    raise XlsentError(f"{key}={value!r}: expected true or false")


def _check_option(key: str, value: Any, hint: Any, f: Any) -> Any:
    """``value`` as the field's type (``"500"`` from the CLI is 500), within its range or words."""
    kinds = set(typing.get_args(hint)) or {hint}
    if value is not None and bool in kinds:
        value = _bool(value, key)
    elif value is not None and (int in kinds or float in kinds) and not isinstance(value, bool):
        try:
            value = int(value) if int in kinds else float(value)
        except (TypeError, ValueError):
            raise XlsentError(f"{key}={value!r}: expected a "
                              f"{'whole number' if int in kinds else 'number'}") from None
    return declared(f).check(value, key)
