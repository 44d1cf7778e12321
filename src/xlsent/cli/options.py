"""The CLI's shared options, each declared once as an ``Annotated`` alias: a command writes ``backend: Backend =
"auto"`` and every command that takes ``--backend`` shows the same name, help and check.

One name per concept: ``--resamples`` (bootstrap resamples) and ``--k`` (neighbours per direction). The old names,
``--bootstrap`` and ``--k-nn``, are still accepted for one release, with a one-line note on stderr."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import typer

from xlsent.aligner import RUNS
from xlsent.api._common import RUNNING
from xlsent.api.data import LANGID
from xlsent.api.mining import ENGINE, MARGINS, MINE
from xlsent.data.derived.triplets import STRATEGIES
from xlsent.data.formats.readers import BAD_LINE_POLICIES
from xlsent.encoding.encoder import BACKENDS
from xlsent.evaluation.tasks.options import CHUNK_WORDS
from xlsent.mining.engine import ENGINES
from xlsent.mining.margin import MODES
from xlsent.mining.store import DTYPES
from xlsent.similarity import SIMILARITIES
from xlsent.utils.options import Option

# choices shared by several commands, each from the library's own list (typer checks them; --help lists them)
Similarity, Margin, StoredPrecision, Negatives, Runs = (Literal[SIMILARITIES], Literal[MARGINS], Literal[DTYPES],
                                                        Literal[STRATEGIES], Literal[RUNS])


def declared(option: Option, *names: str, **kwargs: Any) -> Any:
    """A typer option built from a declaration (:class:`xlsent.utils.options.Option`, the one the API checks): its
    default (unless ``default=`` is given) and help; its range is checked by the API function the command calls, in
    the same words."""
    return typer.Option(kwargs.pop("default", option.default), *names, help=option.help, **kwargs)


def task_option(task: type, name: str, *names: str, **kwargs: Any) -> Any:
    """A typer option built from a task type's declared field (:func:`xlsent.evaluation.tasks.option`), as
    :func:`declared`: a command that runs the task states it once, there."""
    from xlsent.evaluation.tasks.options import declared as field_option

    return declared(field_option(task.options()[name]), *names, **kwargs)


def _renamed(old: str, new: str):
    """A callback that notes, once, that ``old`` was given on the command line where ``new`` is the name now."""

    def note(value):
        if any(a == old or a.startswith(old + "=") for a in sys.argv[1:]):
            from xlsent.cli.common import err_console

            err_console.print(f"[yellow]note:[/yellow] {old} is now {new} ({old} is accepted until the next release)",
                              highlight=False, soft_wrap=True)
        return value

    return note


def _alias(kind: Any, option: Option, *names: str) -> Any:
    """``kind`` as a typer option (``names``) whose help is the declaration's (the default is the command's)."""
    return Annotated[kind, typer.Option(*names, help=option.help)]


Backend = _alias(Literal[BACKENDS], RUNNING["backend"], "--backend")
Threads = _alias(int, RUNNING["threads"], "--threads")
Device = _alias(str, RUNNING["device"], "--device")
TrainDevice = Annotated[Optional[str], typer.Option("--device", help="where it trains (= --set models.device=…): "
                                                    "auto (CUDA, then MPS, then the CPU) | cpu | cuda | cuda:N | mps")]
Dtype = _alias(str, RUNNING["dtype"], "--dtype")
Dimensions = _alias(Optional[int], RUNNING["truncate_dim"], "--dimensions")
Engine = _alias(Literal[ENGINES], ENGINE["engine"], "--engine")
Address = _alias(Optional[str], ENGINE["address"], "--address")
Workers = _alias(int, ENGINE["workers"], "--workers")
CpusPerWorker = _alias(float, ENGINE["cpus_per_worker"], "--cpus-per-worker")
GpusPerWorker = _alias(float, ENGINE["gpus_per_worker"], "--gpus-per-worker")

Model = Annotated[str, typer.Option("--model", "-m", help="registered name or local model folder")]
Learn = _alias(list[str], LANGID["learn"], "--learn")
ChunkWords = _alias(int, CHUNK_WORDS, "--chunk-words")
OnBadLines = Annotated[Literal[BAD_LINE_POLICIES], typer.Option("--on-bad-lines", help="what a malformed line does")]
PrintJson = Annotated[bool, typer.Option("--json", help="print JSON")]
MatchMode = Annotated[Literal[MODES], typer.Option("--mode", help=MINE["mode"].help)]
JsonOutput = Annotated[Optional[Path], typer.Option("--output", "-o", help="write the JSON result here")]
Resamples = Annotated[int, typer.Option(
    "--resamples", "--bootstrap", callback=_renamed("--bootstrap", "--resamples"),
    help="bootstrap resamples for the 95% intervals (--bootstrap: its old name, accepted until the next release)")]
K = Annotated[int, typer.Option(
    "--k", "--k-nn", callback=_renamed("--k-nn", "--k"),
    help="neighbours per direction for the margin and CSLS (--k-nn: its old name, accepted until the next release)")]

_SHARED = {n: (alias, {**RUNNING, **ENGINE}[n].default) for n, alias in (
    ("backend", Backend), ("threads", Threads), ("device", Device), ("dtype", Dtype), ("engine", Engine),
    ("address", Address), ("workers", Workers), ("cpus_per_worker", CpusPerWorker), ("gpus_per_worker", GpusPerWorker))}
RUNTIME = ("backend", "threads", "device", "dtype")
RAY = ("engine", "address", "workers", "cpus_per_worker", "gpus_per_worker")


def takes(*names: str):
    """A command decorator: the command also takes these shared options (of ``RUNTIME`` and ``RAY``), declared
    here once, in the place of its ``run: dict = None``. They are checked before it runs (a device that is not
    there, --threads < 0: one line, before any model loads) and handed to it as one dict, ``run``; the engine
    options as ``run["engine"]``, a function that makes the engine (:func:`xlsent.cli.common.make_engine`)."""
    import functools
    import inspect

    def wrap(command):
        sig = inspect.signature(command, eval_str=True)
        own = list(sig.parameters.values())
        at = [p.name for p in own].index("run")
        own[at:at + 1] = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=_SHARED[n][0],
                                            default=_SHARED[n][1]) for n in names]

        @functools.wraps(command)
        def run_command(**kwargs):
            from xlsent.api._common import place
            from xlsent.cli.common import make_engine

            run = {n: kwargs.pop(n) for n in names}
            place(run.get("device", "auto"), run.get("dtype", "auto"), ("--device", "--dtype"))
            RUNNING["threads"].check(run.get("threads", 0), "--threads")
            if "engine" in run:
                ray = [run.pop(n) for n in RAY]
                run["engine"] = lambda: make_engine(*ray)
            return command(**kwargs, run=run)

        run_command.__signature__ = sig.replace(parameters=own)
        return run_command

    return wrap
