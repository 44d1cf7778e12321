"""The public modules type-check: mypy over the files ``[tool.mypy]`` in pyproject.toml names (``import xlsent``'s API
and the task runner), with no error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import need

ROOT = Path(__file__).resolve().parents[1]


def test_the_public_modules_type_check():
    need("mypy")
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental"], cwd=ROOT, capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "Success: no issues found" in r.stdout
