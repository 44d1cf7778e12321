"""The layering rules of docs/architecture.md, checked on the source: a lower layer never imports a higher one."""

from __future__ import annotations

import ast
from pathlib import Path

import xlsent

# lowest first; a module may import its own layer and any layer before it
LAYERS = [
    {"utils", "similarity"},
    {"training"},
    {"data"},
    {"models", "modules", "losses"},
    {"encoding"},
    {"exporter"},
    {"perturbations"},
    {"mining", "aligner"},
    {"evaluation"},
    {"recipes"},
    {"report"},
    {"api"},
    {"serve"},
    {"cli", "__main__"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}
ROOT = Path(xlsent.__file__).parent


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "xlsent" and len(parts) > 1 else None


def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return {p for p in map(_part, out) if p}


def test_every_package_has_a_layer():
    names = {p.name for p in ROOT.iterdir() if (p.is_dir() and (p / "__init__.py").exists())}
    names |= {p.stem for p in ROOT.glob("*.py") if p.stem != "__init__"}
    assert names <= set(RANK), names - set(RANK)


def test_the_architecture_page_lists_every_package_with_its_rank():
    import re

    page = (ROOT.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    layout = page[page.index("## Layout"):page.index("## Layering")]
    listed = {m[1]: int(m[2]) for m in re.finditer(r"^  (\w+)(?:/|\.py)\s+(\d+) ", layout, re.M)}
    expected = {name: rank for name, rank in RANK.items() if name != "__main__"}
    assert listed == expected


def test_no_module_imports_a_higher_layer():
    bad = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        own = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        if own == "__init__":
            continue
        for target in _imports(path):
            if RANK[target] > RANK[own]:
                bad.append(f"{rel} imports xlsent.{target}")
    assert not bad, bad


def _module_imports(path: Path) -> set[str]:
    """Every ``xlsent`` module this file imports, at the top or inside a function: ``from xlsent.a import b``
    names module ``xlsent.a.b`` when that is a module, else ``xlsent.a``."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                     for a in node.names]
        out |= {n for n in names if n in MODULES}
    return out


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


MODULES = {_module_name(p): p for p in ROOT.rglob("*.py")}


def test_no_import_cycle_between_modules():
    """No module reaches itself through the imports of others (function-level imports count: they hide a circle,
    they do not remove it). A package's ``__init__`` is its own module."""
    from graphlib import CycleError, TopologicalSorter

    graph = {name: _module_imports(path) - {name} for name, path in MODULES.items()}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        raise AssertionError(f"import cycle: {' → '.join(exc.args[1])}") from None


def test_evaluators_never_load_models():
    for path in (ROOT / "evaluation").rglob("*.py"):  # evaluation/tasks/ too
        text = path.read_text(encoding="utf-8")
        assert "load_model" not in text and "SentenceTransformer(" not in text, path.name


def test_recipes_and_evaluators_never_print():
    """Recipes hand what they report to ``on_note``; only ``cli/`` prints (progress bars aside)."""
    bad = []
    for part in ("recipes", "training", "evaluation", "mining", "data", "encoding", "models"):
        for path in (ROOT / part).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call):
                    f = node.func
                    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                    owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
                    if name == "print" and owner in ("", "console"):
                        bad.append(f"{part}/{path.name}:{node.lineno}")
                    if name == "Console":
                        bad.append(f"{part}/{path.name}:{node.lineno} builds a Console")
    assert not bad, bad
