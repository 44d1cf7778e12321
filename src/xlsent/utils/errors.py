"""User-facing errors.

An :class:`XlsentError` is a mistake the user can fix (bad path, malformed line,
unknown option). The CLI prints its message on one line and exits with code 2,
never a traceback.
"""

from __future__ import annotations

from pathlib import Path


class XlsentError(Exception):
    """An error caused by user input, with a message that says what to fix."""


def named(name: str, value: object) -> str:
    """How a message names a value given for a parameter: ``sample=-1`` in Python (``name`` a parameter), ``--sample
    -1`` from the command line (``name`` an option). The CLI turns the first into the second for its own options
    (:func:`xlsent.cli.common.option_words`), so one message serves both."""
    return f"{name} {value}" if name.startswith("-") else f"{name}={value!r}"


class InputFormatError(XlsentError):
    """A malformed input file: names the file, the line and the fix."""

    def __init__(self, path: str | Path, line: int | None, problem: str, fix: str) -> None:
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {problem} — {fix}")
        self.path = str(path)
        self.line = line
        self.problem = problem
        self.fix = fix
