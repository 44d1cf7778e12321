"""The CLI's shared options, each declared once as an ``Annotated`` alias: a command writes ``backend: Backend =
"auto"`` and every command that takes ``--backend`` shows the same name, help and check.

One name per concept: ``--resamples`` (bootstrap resamples) and ``--k`` (neighbours per direction). The old names,
``--bootstrap`` and ``--k-nn``, are still accepted for one release, with a one-line note on stderr."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Literal, Optional

import typer

from xlsent.aligner import RUNS
from xlsent.api.mining import MARGINS
from xlsent.data.readers import BAD_LINE_POLICIES
from xlsent.data.triplets import STRATEGIES
from xlsent.encoding.encoder import BACKENDS
from xlsent.mining.engine import ENGINES
from xlsent.mining.margin import MODES
from xlsent.mining.store import DTYPES
from xlsent.similarity import SIMILARITIES

# choices shared by several commands, each from the library's own list (typer checks them; --help lists them)
Similarity, Margin, StoredPrecision, Negatives, Runs = (Literal[SIMILARITIES], Literal[MARGINS], Literal[DTYPES],
                                                        Literal[STRATEGIES], Literal[RUNS])


def _renamed(old: str, new: str):
    """A callback that notes, once, that ``old`` was given on the command line where ``new`` is the name now."""

    def note(value):
        if any(a == old or a.startswith(old + "=") for a in sys.argv[1:]):
            from xlsent.cli.common import err_console

            err_console.print(f"[yellow]note:[/yellow] {old} is now {new} ({old} is accepted until the next release)",
                              highlight=False, soft_wrap=True)
        return value

    return note


Backend = Annotated[Literal[BACKENDS], typer.Option("--backend", help="auto: an exported folder (xlsent export) "
                    "runs on onnxruntime, any other model on torch; onnx: a torch model is exported once (fp32) into "
                    "the cache")]
Threads = Annotated[int, typer.Option("--threads", help="threads of the backend that runs the model, torch or "
                                      "onnxruntime (0 = its default)")]
Device = Annotated[str, typer.Option("--device", help="where the model runs: auto (CUDA, then MPS, then the CPU) | "
                                     "cpu | cuda | cuda:N | mps")]
TrainDevice = Annotated[Optional[str], typer.Option("--device", help="where it trains (= --set models.device=…): "
                                                    "auto (CUDA, then MPS, then the CPU) | cpu | cuda | cuda:N | mps")]
Dtype = Annotated[str, typer.Option("--dtype", help="precision a torch model encodes in: auto (fp16 on a CUDA GPU, "
                                    "bf16 autocast on a CPU where it was timed faster, fp32 elsewhere) | fp32 | fp16 | bf16")]
Dimensions = Annotated[Optional[int], typer.Option("--dimensions", help="the first N coordinates of each vector, "
                                                   "renormalised to unit length (1 to the model's width; default: the "
                                                   "full width)")]
Engine = Annotated[Literal[ENGINES], typer.Option("--engine", help="local: every step in this process; ray: the steps "
                                                  "on a Ray cluster (pip install 'xlsent\\[ray]'), the same result")]
Address = Annotated[Optional[str], typer.Option("--address", help="--engine ray: the cluster (auto | HOST:PORT; "
                                                "default $RAY_ADDRESS; with neither, a local cluster on this machine)")]
Workers = Annotated[int, typer.Option("--workers", help="--engine ray: actors in each pool (encoders, searchers)")]
CpusPerWorker = Annotated[float, typer.Option("--cpus-per-worker", help="--engine ray: CPUs an actor takes (its thread "
                                              "count, rounded; a fraction lets more actors share a CPU)")]
GpusPerWorker = Annotated[float, typer.Option("--gpus-per-worker", help="--engine ray: GPUs an actor takes (an encoder "
                                              "encodes on its GPU; a search worker searches there with a GPU build "
                                              "of faiss)")]

Model = Annotated[str, typer.Option("--model", "-m", help="registered name or local model folder")]
Learn = Annotated[list[str], typer.Option("--learn", help="L:FILE — teach the n-gram language identifier language L "
                                          "from your own monolingual text, one text a line (repeatable): how a "
                                          "language neither it nor CLD2 knows gets checked")]
ChunkWords = Annotated[int, typer.Option("--chunk-words", help="chunked pooling: average over ≤ N-word chunks (0 = "
                                         "off)")]
OnBadLines = Annotated[Literal[BAD_LINE_POLICIES], typer.Option("--on-bad-lines", help="what a malformed line does")]
PrintJson = Annotated[bool, typer.Option("--json", help="print JSON")]
MatchMode = Annotated[Literal[MODES], typer.Option("--mode", help="which pairs the margin keeps")]
JsonOutput = Annotated[Optional[Path], typer.Option("--output", "-o", help="write the JSON result here")]
Resamples = Annotated[int, typer.Option(
    "--resamples", "--bootstrap", callback=_renamed("--bootstrap", "--resamples"),
    help="bootstrap resamples for the 95% intervals (--bootstrap: its old name, accepted until the next release)")]
K = Annotated[int, typer.Option(
    "--k", "--k-nn", callback=_renamed("--k-nn", "--k"),
    help="neighbours per direction for the margin and CSLS (--k-nn: its old name, accepted until the next release)")]

_SHARED = {"backend": (Backend, "auto"), "threads": (Threads, 0), "device": (Device, "auto"), "dtype": (Dtype, "auto"),
           "engine": (Engine, "local"), "address": (Address, None), "workers": (Workers, 2),
           "cpus_per_worker": (CpusPerWorker, 1.0), "gpus_per_worker": (GpusPerWorker, 0.0)}
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
            from xlsent.api._common import at_least, place
            from xlsent.cli.common import make_engine

            run = {n: kwargs.pop(n) for n in names}
            place(run.get("device", "auto"), run.get("dtype", "auto"), ("--device", "--dtype"))
            at_least(run.get("threads", 0), 0, "--threads")
            if "engine" in run:
                ray = [run.pop(n) for n in RAY]
                run["engine"] = lambda: make_engine(*ray)
            return command(**kwargs, run=run)

        run_command.__signature__ = sig.replace(parameters=own)
        return run_command

    return wrap
