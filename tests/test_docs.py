"""The documentation site and the README.

The site (``mkdocs.yml``, ``docs/``) builds with ``mkdocs build --strict``: a warning of any kind — a broken link or
anchor, a page left out of the nav, a docstring mkdocstrings cannot parse — fails it. Its CLI reference, generated
from the typer app at build time (``docs/hooks/cli_reference.py``), lists every command and option, and building it
imports no torch. The README stays a front door: at most 150 lines, every top-level command and group named, and
its links to docs pages resolve.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 150


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built once, strictly, into a temporary folder (the checkout's site/ is left alone)."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about MkDocs 2.0 is not a build warning
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=600)
    problems = [line for line in proc.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert proc.returncode == 0 and not problems, "mkdocs build --strict failed:\n" + "\n".join(
        problems or proc.stderr.splitlines()[-40:])
    return out


def test_the_site_builds_strictly(site):
    for page in ("index.html", "getting-started/index.html", "reference/api/index.html", "reference/cli/index.html",
                 "guides/your-language/index.html", "architecture/index.html", "contributing/index.html",
                 "results/index.html", "experiments/index.html"):
        assert (site / page).is_file(), page
    assert (site / "your-language.sh").is_file()  # the guide's script, linked from it


def _commands():
    """Every command of the typer app, walked independently of the hook: (path, command, context)."""
    import typer

    from xlsent.cli.main import app

    root = typer.main.get_command(app)
    try:
        from typer._click.core import Context
    except ImportError:  # a typer on plain click
        from click import Context

    def walk(cmd, ctx):
        yield ctx.command_path, cmd, ctx
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not getattr(sub, "hidden", False):
                    yield from walk(sub, Context(sub, info_name=name, parent=ctx))

    return list(walk(root, Context(root, info_name="xlsent")))


def test_every_command_and_option_is_in_the_cli_reference(site):
    import html

    page = html.unescape((site / "reference" / "cli" / "index.html").read_text(encoding="utf-8"))
    commands = _commands()
    paths = [path for path, _, _ in commands]
    for expected in ("xlsent models list", "xlsent train adapt", "xlsent eval retrieval", "xlsent serve",
                     "xlsent data filter-pairs", "xlsent mine", "xlsent align", "xlsent export"):
        assert expected in paths, expected
    missing = []
    for path, cmd, ctx in commands:
        anchor = path.replace(" ", "-")
        start = page.find(f'id="{anchor}"')
        if start < 0:
            missing.append(path)
            continue
        nxt = re.search(r'<h[1-6] id="xlsent[^"]*"', page[start + 1:])
        section = page[start:start + 1 + nxt.start()] if nxt else page[start:]
        for param in cmd.get_params(ctx):
            if getattr(param, "hidden", False) or param.name == "help":
                continue
            names = [o for o in param.opts if o.startswith("--")] or [param.name.upper()]
            if not any(n in section for n in names):
                missing.append(f"{path} {names[0]}")
    assert not missing, f"not in the CLI reference: {missing}"


def test_the_cli_reference_is_built_without_torch():
    code = ("import importlib.util, sys\n"
            "spec = importlib.util.spec_from_file_location('cli_reference', 'docs/hooks/cli_reference.py')\n"
            "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)\n"
            "page = mod.render()\n"
            "assert '## `xlsent`' in page, page[:200]\n"
            "heavy = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]\n"
            "assert not heavy, heavy\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


def _hook():
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "docs" / "hooks" / "cli_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_hook_lists_the_same_commands_as_the_app():
    assert set(_hook().command_paths()) == {path for path, _, _ in _commands()}


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = readme.splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES})"
    top = sorted({path.split()[1] for path, _, _ in _commands() if len(path.split()) >= 2})
    unnamed = [name for name in top if f"xlsent {name}" not in readme]
    assert not unnamed, f"top-level commands or groups the README does not name: {unnamed}"
    for target in re.findall(r"\]\((?!https?://|#)([^)#\s]+)", readme):
        assert (ROOT / target).exists(), f"README links to {target}, which does not exist"
    assert "mkdocs serve" in readme and "mkdocs build" in readme


def test_the_quick_start_is_the_ci_command():
    """CI runs the README's test command (.ci/run): the two must stay the same line."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci in readme
