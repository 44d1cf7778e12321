"""Helpers shared by the ablation scripts: folder names and running the ``xlsent`` CLI."""

from __future__ import annotations

import subprocess
import sys


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
