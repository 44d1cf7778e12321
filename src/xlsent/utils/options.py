"""Options declared once: an :class:`Option` is a typed option's default, its range (``low`` / ``high``) or its
allowed words (``choices``), and its help. The API checks a function's arguments against its declarations
(:func:`check`), a task type's fields carry one (:func:`xlsent.evaluation.tasks.options.option`), and the CLI
builds its typer options from them (:func:`xlsent.cli.options.declared`): the same range, words and help
everywhere, and the same one-line message for a value out of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from xlsent.utils.errors import XlsentError, named


@dataclass(frozen=True)
class Option:
    """One option: its default, its lowest / highest value or its allowed words, and its help (one line, as
    ``--help`` shows it)."""

    default: Any = None
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = field(default=())
    help: str = ""

    def check(self, value: Any, name: str) -> Any:
        """``value`` within the range or among the words, else one line naming ``name`` (a Python parameter, or a
        command's ``--option``); ``None`` passes (not given)."""
        if value is None:
            return value
        if self.low is not None and value < self.low:
            raise XlsentError(f"{named(name, value)}: must be ≥ {self.low:g}")
        if self.high is not None and value > self.high:
            raise XlsentError(f"{named(name, value)}: must be ≤ {self.high:g}")
        if self.choices and value not in self.choices:
            raise XlsentError(f"unknown {named(name, value)}: use one of {', '.join(self.choices)}")
        return value


def at_least(low: float, default: Any = None, help: str = "") -> Option:
    """An option of ``low`` or more."""
    return Option(default, low=low, help=help)


def one_of(choices: Sequence[str], default: Any = None, help: str = "") -> Option:
    """An option whose value is one of ``choices``."""
    return Option(default, choices=tuple(choices), help=help)


def check(declared: Mapping[str, Option], given: Mapping[str, Any], names: Sequence[str] | None = None) -> None:
    """Each of ``names`` (default: every declared one, in order) that ``given`` holds — a function's arguments, e.g.
    its ``locals()`` — checked against its declaration (:meth:`Option.check`): one line for the first out of range."""
    for name in declared if names is None else names:
        if name in given:
            declared[name].check(given[name], name)
