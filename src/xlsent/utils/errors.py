"""User-facing errors.

An :class:`XlsentError` is a mistake the user can fix (bad path, malformed line,
unknown option). The CLI prints its message on one line and exits with code 2,
never a traceback.
"""

from __future__ import annotations

from pathlib import Path


class XlsentError(Exception):
    """An error caused by user input, with a message that says what to fix."""


class InputFormatError(XlsentError):
    """A malformed input file: names the file, the line and the fix."""

    def __init__(self, path: str | Path, line: int | None, problem: str, fix: str) -> None:
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {problem} — {fix}")
        self.path = str(path)
        self.line = line
        self.problem = problem
        self.fix = fix
