"""Progress bars with an ETA (rich, on stderr) for the work that takes long: encoding, scoring pools, mining.

A function that shows progress takes ``show_progress: bool | None``; ``None`` follows this process's setting,
off in the Python API and on in the CLI (:func:`show_progress_bars`). A bar draws only on a terminal and leaves
nothing behind (transient), so logs, pipes and tests see none of it."""

from __future__ import annotations

_STATE = {"on": False}


def show_progress_bars(on: bool = True) -> None:
    """Show progress (with an ETA) wherever a caller does not say otherwise, for the rest of this process."""
    _STATE["on"] = bool(on)


def progress_shown(show: bool | None) -> bool:
    """``show`` if given, else this process's setting."""
    return _STATE["on"] if show is None else bool(show)


def progress_bar(show: bool | None = None, transient: bool = True, console=None):
    """A rich ``Progress``: description, bar, percentage, elapsed and remaining time; on stderr unless
    ``console`` is given. Use as a context manager; ``add_task(description, total=…)`` and ``advance``."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn, \
        TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(), console=console or Console(stderr=True),
                    disable=not progress_shown(show), transient=transient)
