"""MkDocs hook: ``[0.41, 0.52] [0.028]`` stays text, as plain Markdown shows it.

The lab notebook writes a confidence interval followed by a p-value in brackets. Markdown reads ``[a] [b]`` as a
reference link; with no definition ``b`` it is shown as written — but mkdocs-autorefs (which mkdocstrings brings)
takes every such ``[b]`` for a cross-reference to an object named ``b`` and warns that it cannot find one, which
fails the strict build. This hook escapes the second bracket when its content cannot be an identifier (a number,
``< 0.0001``, words with spaces), outside code, so the page renders exactly as plain Markdown would and real
cross-references (``[text][xlsent.api.load]``) are left alone.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:.*?)\1")
_PAIR = re.compile(r"\]([ \t]?)\[([^\]\n]*)\]")
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w.:-]*$")


def _escape_line(line: str, defined: set[str]) -> str:
    def fix(m: re.Match) -> str:
        if m[2] == "" or _IDENTIFIER.match(m[2]) or m[2].lower() in defined:
            return m[0]
        return f"]{m[1]}\\[{m[2]}]"

    pieces, last = [], 0
    for code in _CODE_SPAN.finditer(line):  # code spans are left as they are
        pieces.append(_PAIR.sub(fix, line[last:code.start()]))
        pieces.append(code[0])
        last = code.end()
    pieces.append(_PAIR.sub(fix, line[last:]))
    return "".join(pieces)


def escape_brackets(markdown: str) -> str:
    """The page's Markdown with each non-identifier ``[b]`` after ``[a]`` escaped (link definitions kept)."""
    defined = {m[1].lower() for m in re.finditer(r"^ {0,3}\[([^\]]+)\]:", markdown, re.M)}
    out, fence = [], None
    for line in markdown.split("\n"):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m[2][0] * len(m[2])
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None and ("] " in line or "][" in line):
            line = _escape_line(line, defined)
        out.append(line)
    return "\n".join(out)


def on_page_markdown(markdown: str, **kwargs) -> str:
    """MkDocs event: every page's Markdown before it is converted."""
    return escape_brackets(markdown)
