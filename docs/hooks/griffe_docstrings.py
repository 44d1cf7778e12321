"""Griffe extension (mkdocstrings, ``mkdocs.yml``): read xlsent's Google-style docstrings as they are written.

Griffe's Google parser takes ``Examples:`` as the section of ``>>>`` code, and one parameter per ``Args:`` entry.
xlsent's docstrings also write

* ``Example:`` (singular) — read as ``Examples:``, so its ``>>>`` lines render as code, not as quotes;
* one entry for several parameters that share a meaning (``device, dtype: where the model runs``) — read as one
  entry per name, each with the same text, so every name is still checked against the signature (a documented
  name the function does not have stays a build warning);
* a sentence inside ``Args:`` that is not an entry (``The other arguments are embed's.``) — moved just after the
  section, as a paragraph;
* Sphinx roles (``:func:`xlsent.embed```, ``:class:`RunResult```) — a link to the object on the API page when it is
  one of ``xlsent.api``'s names, else code.

Only the text griffe parses changes; the source is untouched.
"""

from __future__ import annotations

import re

import griffe

_ARGS = {"Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments", "Other Parameters"}
_ENTRY = re.compile(r"^\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*(?:\s*\([^)]*\))?\s*:(?:\s|$)")
_NAMES = re.compile(r"^(?P<names>\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)+)(?P<rest>(?:\s*\([^)]*\))?\s*:.*)$")


_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|attr|mod|data|exc|obj):`~?([^`]+)`")


def _api_names() -> set[str]:
    """``xlsent.api.__all__``, read from the source (nothing is imported)."""
    import ast
    from pathlib import Path

    init = Path(__file__).resolve().parents[2] / "src" / "xlsent" / "api" / "__init__.py"
    for node in ast.walk(ast.parse(init.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


_API = _api_names()


def _role(m: re.Match) -> str:
    target = m[1]
    name = target.removeprefix("xlsent.api.").removeprefix("xlsent.")
    if name in _API:
        return f"[`{target}`][xlsent.api.{name}]"
    return f"`{target}`"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def normalise(text: str) -> str:
    """The docstring text with the three forms above rewritten for griffe's Google parser."""
    lines = _ROLE.sub(_role, text).split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        head = line.strip()
        if _indent(line) == 0 and head == "Example:":
            out.append(line.replace("Example:", "Examples:"))
            i += 1
            continue
        if not (_indent(line) == 0 and head.endswith(":") and head[:-1] in _ARGS):
            out.append(line)
            i += 1
            continue
        out.append(line)  # an Args section: its entries, then any prose it held
        i += 1
        moved: list[str] = []
        entry_indent = None
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > 0):
            if not lines[i].strip():  # a blank line ends the section unless an entry follows
                if i + 1 < len(lines) and lines[i + 1].strip() and _indent(lines[i + 1]) > 0:
                    out.append(lines[i])
                    i += 1
                    continue
                break
            entry_indent = entry_indent or _indent(lines[i])
            block = [lines[i]]
            i += 1
            while i < len(lines) and lines[i].strip() and _indent(lines[i]) > entry_indent:
                block.append(lines[i])
                i += 1
            first = block[0].strip()
            if not _ENTRY.match(first):
                moved.append(" ".join(b.strip() for b in block))
                continue
            m = _NAMES.match(first)
            if m is None:
                out.extend(block)
                continue
            pad = " " * entry_indent
            for name in re.split(r"\s*,\s*", m["names"]):
                out.append(f"{pad}{name}{m['rest']}")
                out.extend(block[1:])
        if moved:
            out.append("")
            out.extend(moved)
            if i < len(lines) and lines[i].strip():
                out.append("")
    return "\n".join(out)


class XlsentDocstrings(griffe.Extension):
    """Rewrites each object's docstring text before it is parsed (see the module's docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None and obj.docstring.value:
            obj.docstring.value = normalise(obj.docstring.value)
