"""Helpers shared by the ablation scripts: folder names and running the ``xlsent`` CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import time


def slug(name: str) -> str:
    """A variant's folder name: lower-case letters and digits joined by single dashes."""
    out = "".join(c if c.isalnum() else "-" for c in name.lower())
    while "--" in out:
        out = out.replace("--", "-")
    return out.strip("-")


def xlsent(*args: str) -> None:
    """Run ``xlsent ARGS`` with this interpreter, echoing the command; a failure stops the script."""
    cmd = [sys.executable, "-m", "xlsent.cli.main", *args]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def xlsent_measured(*args: str) -> dict:
    """:func:`xlsent`, returning the run's wall time and peak resident memory (the child's own
    ``ru_maxrss``, as ``/usr/bin/time -v`` reports it)."""
    cmd = [sys.executable, "-m", "xlsent.cli.main", *args]
    print("$", " ".join(cmd), flush=True)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    return {"seconds": time.perf_counter() - t0, "max_rss_mb": usage.ru_maxrss / 1024}
