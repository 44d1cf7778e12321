"""The wheel works anywhere: it carries everything xlsent reads at run time, and an installed wheel runs from any folder.

``test_wheel_carries_every_package_file`` (fast): a wheel built from a copy of the source (no build isolation, so no
network, and nothing written into the checkout) holds every tracked file under ``src/xlsent`` — code, the bundled data
with its README.md licences, BUILD.txt and .meta.json files, ``configs/*.yaml``, ``serve/page.html`` — and nothing
outside the package.

``test_installed_wheel_runs_from_an_empty_folder`` (slow, about a minute on 2 cores with PyPI reachable; most of it is
pip installing torch and the rest): ``python -m build`` makes the sdist and, from the sdist, the wheel (as a release
does), ``twine check --strict`` passes both, and the wheel is installed with all its dependencies
(``pip install -c constraints.txt WHEEL``) into a fresh virtual environment — deliberately not
``--system-site-packages`` nor a path into the development venv: that venv holds the editable install of the checkout,
which could then stand in for the wheel. The CLI then runs from an empty folder with no PYTHONPATH and no
XLSENT_DATA_DIR, and the package it imports is the one in the fresh venv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import need

ROOT = Path(__file__).resolve().parents[1]


def _package_files() -> list[str]:
    """Every file under src/xlsent that must ship: git's tracked files (a walk without git), paths inside the package."""
    src = ROOT / "src" / "xlsent"
    try:
        out = subprocess.run(["git", "ls-files", "-z", "src/xlsent"], cwd=ROOT, capture_output=True, check=True).stdout
        files = [ROOT / p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = [p for p in src.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]
    return sorted(p.relative_to(src.parent).as_posix() for p in files if p.is_file())


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "XLSENT_DATA_DIR", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PYTHONNOUSERSITE"] = "1"  # no ~/.local site-packages either
    return env


def _run(cmd: list, cwd: Path, timeout: float = 300) -> str:
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=_clean_env(), capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{cmd} → {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_wheel_carries_every_package_file(tmp_path):
    need("setuptools")  # --no-build-isolation: the venv's own
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, tree / name)
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", tmp_path / "dist",
          tree], cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("xlsent-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = _package_files()
    assert {"xlsent/bundled_data/README.md", "xlsent/bundled_data/silver-en-ny/BUILD.txt",
            "xlsent/serve/page.html", "xlsent/configs/siamese.yaml"} <= set(expected)
    assert any(n.endswith(".meta.json") for n in expected)
    assert [n for n in expected if n not in names] == []
    stray = [n for n in names if not n.startswith(("xlsent/", "xlsent-"))]
    assert stray == [], f"files outside the package in the wheel: {stray}"


@pytest.mark.slow
def test_installed_wheel_runs_from_an_empty_folder(tmp_path):
    need("build")
    need("twine")
    dist, venv, empty = tmp_path / "dist", tmp_path / "venv", tmp_path / "empty"
    empty.mkdir()
    # sdist, then the wheel built from the unpacked sdist (build's default): both must carry everything
    _run([sys.executable, "-m", "build", "--outdir", dist, ROOT], cwd=empty, timeout=600)
    (sdist,) = dist.glob("xlsent-*.tar.gz")
    (wheel,) = dist.glob("xlsent-*.whl")
    _run([sys.executable, "-m", "twine", "check", "--strict", sdist, wheel], cwd=empty)
    wheel_names = set(zipfile.ZipFile(wheel).namelist())
    sdist_names = {n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n}
    expected = _package_files()
    assert [n for n in expected if n not in wheel_names] == []
    assert [n for n in expected if f"src/{n}" not in sdist_names] == []
    metadata = zipfile.ZipFile(wheel).read(next(n for n in wheel_names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Description-Content-Type: text/markdown" in metadata
    first = next(line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if line.strip())
    assert first in metadata  # the README is the long description

    try:
        _run([sys.executable, "-m", "venv", venv], cwd=empty)
        bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
        python = bin_dir / "python"
        _run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-c", ROOT / "constraints.txt",
              wheel], cwd=empty, timeout=1200)
        _run([python, "-m", "pip", "check"], cwd=empty)

        xlsent = bin_dir / "xlsent"
        from xlsent import __version__

        assert _run([xlsent, "--version"], cwd=empty).strip() == f"xlsent {__version__}"
        listing = _run([xlsent, "data", "list"], cwd=empty)
        assert "bible-en-ny:test" in listing and "structural-en-ny:test" in listing
        stats = json.loads(_run([xlsent, "data", "stats", "bible-en-ny:test", "--json"], cwd=empty))
        assert stats["pairs"] == 7957 and set(stats["languages"]) == {"eng", "nya"}

        probe = (
            "import json, xlsent\n"
            "from importlib import resources\n"
            "from xlsent.data.bundled import data_dir, load_bundled\n"
            "from xlsent.data.stopwords import iso_lists\n"
            "from xlsent.data.structural import read_spans\n"
            "from xlsent.data.tagging import load_tagged\n"
            "from xlsent.recipes.config import default_config, presets\n"
            "records, meta = read_spans('structural-en-ny:test')\n"
            "print(json.dumps({'package': xlsent.__file__, 'data_dir': str(data_dir()),\n"
            "    'udhr': len(load_bundled('udhr')), 'stopwords': 'en' in iso_lists(), 'spans': len(records),\n"
            "    'meta': bool(meta), 'tagged': len(load_tagged('gold-ner:ja')) > 0,\n"
            "    'licences': 'licen' in (data_dir() / 'README.md').read_text(encoding='utf-8').lower(),\n"
            "    'config': bool(default_config('siamese')), 'presets': presets('siamese'),\n"
            "    'page': resources.files('xlsent').joinpath('serve', 'page.html').is_file()}))\n"
        )
        got = json.loads(_run([python, "-c", probe], cwd=empty).strip().splitlines()[-1])
        package = Path(got["package"]).resolve()
        assert package.is_relative_to(venv.resolve()), f"xlsent imported from {package}, not the fresh venv"
        assert not package.is_relative_to(ROOT)
        assert Path(got["data_dir"]).resolve() == package.parent / "bundled_data"
        assert got["udhr"] > 0 and got["stopwords"] and got["spans"] > 0 and got["meta"] and got["tagged"]
        assert got["licences"] and got["config"] and got["presets"] and got["page"]
    finally:
        shutil.rmtree(venv, ignore_errors=True)  # ~2 GB; pytest keeps the last three runs' tmp folders
