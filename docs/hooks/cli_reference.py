"""MkDocs hook: the CLI reference page (``reference/cli.md``), generated from the typer app at build time.

Every group, command, argument and option of ``xlsent`` comes from ``typer.main.get_command(app)``, the same
object ``xlsent --help`` renders, so the page cannot drift from the program. Building it imports the CLI only
(the commands import torch lazily, when they run), never a model.

Run it alone to print the page: ``python docs/hooks/cli_reference.py``.
"""

from __future__ import annotations

import html
import inspect
import re

PAGE = "reference/cli.md"

INTRO = """# CLI reference

Generated from the program itself when the site is built (`docs/hooks/cli_reference.py` walks the typer app that
`xlsent --help` shows), so every group, command and option below is the one the installed `xlsent` has. The
guides say what each command is for; `xlsent COMMAND --help` prints the same text in a terminal.
"""


def _plain(text: str, markup: str | None) -> str:
    """A help text as the terminal shows it: rich markup removed when the app uses it, paragraphs kept."""
    text = inspect.cleandoc(text or "").replace("\b\n", "").replace("\b", "")
    if markup == "rich" and re.search(r"\[[a-z#/@]", text):
        from rich.text import Text

        text = "\n".join(Text.from_markup(line).plain for line in text.split("\n"))
    return text


def _escape(text: str) -> str:
    """Text that Markdown shows as written: HTML, emphasis, links and code characters escaped."""
    text = html.escape(text, quote=False)
    return re.sub(r"([\\`*_\[\]{}#|])", r"\\\1", text)


def _paragraphs(text: str) -> str:
    """Help paragraphs (blank-line separated) with their soft line breaks joined, each escaped."""
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "\n\n".join(_escape(p) for p in paras)


def _usage(cmd, path: str) -> str:
    pieces = [path]
    if _is_group(cmd):
        return f"{path} [OPTIONS] COMMAND [ARGS]..."
    pieces.append("[OPTIONS]")  # as click's usage line: --help at least
    for p in cmd.params:
        if p.param_type_name != "argument":
            continue
        name = p.metavar or p.name.upper()  # a metavar is shown as the command spells it
        if p.nargs == -1:
            name += "..."
        pieces.append(name if p.required or name.startswith("[") else f"[{name}]")
    return " ".join(pieces)


def _is_group(cmd) -> bool:
    return hasattr(cmd, "list_commands") and hasattr(cmd, "get_command")


def _param_line(param, ctx, markup: str | None) -> str:
    record = param.get_help_record(ctx)
    if record is None:
        return ""
    spelled, help_text = record
    if param.param_type_name == "argument":  # typer spells an argument 'src PATH'; usage lines say SRC
        name, _, rest = spelled.partition(" ")
        spelled = f"{name.upper()} {rest}".strip()
    own = getattr(param, "help", None)
    if own and help_text.startswith(own):  # its own words as the terminal shows them; [default: …] kept
        help_text = _plain(own, markup) + help_text[len(own):]
    help_text = " ".join(help_text.split())
    # click's trailing brackets ([default: 4]  [required]) are set apart in italics
    m = re.search(r"((?:\s*\[(?:default|required|env var|\d)[^\]]*\])+)$", help_text)
    notes = ""
    if m:
        help_text = help_text[: m.start()].rstrip()
        notes = " ".join(f"*{_escape(n)}*" for n in re.findall(r"\[([^\]]*)\]", m.group(1)))
    line = f"- `{spelled}`"
    if help_text:
        line += f": {_escape(help_text)}"
    if notes:
        line += f" {notes}"
    return line


def _root():
    import typer

    from xlsent.cli.main import app

    return typer.main.get_command(app), getattr(app, "rich_markup_mode", None)


def _context(cmd):
    try:
        from typer._click.core import Context
    except ImportError:  # an older typer on plain click
        from click import Context
    return Context(cmd, info_name="xlsent")


def command_paths() -> list[str]:
    """Every command path of the app (``xlsent``, ``xlsent models``, ``xlsent models list`` …), in page order."""
    root, _ = _root()
    return [path for path, _, _ in _walk(root)]


def _walk(root):
    ctx = _context(root)
    stack = [(ctx.command_path, root, ctx)]
    out = []
    while stack:
        path, cmd, c = stack.pop(0)
        out.append((path, cmd, c))
        if _is_group(cmd):
            subs = []
            for name in cmd.list_commands(c):
                sub = cmd.get_command(c, name)
                if sub is None or getattr(sub, "hidden", False):
                    continue
                sc = type(c)(sub, info_name=name, parent=c)
                subs.append((sc.command_path, sub, sc))
            # the top-level commands first, then each group with its commands (depth first)
            stack = [s for s in subs if not _is_group(s[1])] + [s for s in subs if _is_group(s[1])] + stack
    return out


def _short(cmd, markup: str | None) -> str:
    """A command's line in a list: its short help, else its help's first paragraph (as the terminal's list)."""
    text = cmd.short_help or re.split(r"\n\s*\n", _plain(cmd.help or "", markup))[0]
    return _escape(" ".join(_plain(text, markup).split()))


def _anchor(path: str) -> str:
    return path.replace(" ", "-")


def render() -> str:
    """The whole page, Markdown."""
    root, markup = _root()
    entries = _walk(root)
    out = [INTRO]
    # an index of every command, one line each
    out.append("| command | what it does |\n|---|---|")
    for path, cmd, _ in entries[1:]:
        short = _short(cmd, markup)
        out.append(f"| [`{path}`](#{_anchor(path)}) | {short} |")
    out.append("")
    for path, cmd, ctx in entries:
        depth = len(path.split())  # xlsent = 1, xlsent mine = 2, xlsent train adapt = 3
        level = "#" * min(depth + 1, 4)
        out.append(f'{level} `{path}` {{ #{_anchor(path)} }}\n')
        help_text = _plain(cmd.help or "", markup)
        if help_text:
            out.append(_paragraphs(help_text) + "\n")
        out.append(f"```text\n{_usage(cmd, path)}\n```\n")
        params = [p for p in cmd.get_params(ctx) if not getattr(p, "hidden", False) and p.name != "help"]
        args = [p for p in params if p.param_type_name == "argument"]
        opts = [p for p in params if p.param_type_name != "argument"]
        if args:
            out.append("**Arguments**\n")
            out.extend(_param_line(p, ctx, markup) for p in args)
            out.append("")
        if opts:
            panels: dict[str | None, list] = {}
            for p in opts:
                panels.setdefault(getattr(p, "rich_help_panel", None), []).append(p)
            for panel, group in panels.items():
                out.append(f"**{_escape(panel) if panel else 'Options'}**\n")
                out.extend(line for line in (_param_line(p, ctx, markup) for p in group) if line)
                out.append("")
        if _is_group(cmd):
            subs = [(p, c) for p, c, _ in entries if p.startswith(path + " ") and len(p.split()) == depth + 1]
            if subs:
                out.append("**Commands**\n")
                for p, c in subs:
                    short = _short(c, markup)
                    out.append(f"- [`{p}`](#{_anchor(p)}): {short}")
                out.append("")
    return "\n".join(out) + "\n"


def on_files(files, config):
    """MkDocs event: add the generated page to the site's files (it is listed in mkdocs.yml's nav)."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=render()))
    return files


if __name__ == "__main__":
    print(render())
