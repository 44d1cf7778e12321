"""Shared CLI helpers: consoles, tables, option validation."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from xlsent.api._common import check_backend, check_dimensions, output_file, output_folder  # noqa: F401 (re-exported)
from xlsent.report.summary import HEADS, summary_rows  # (summary_rows re-exported)
from xlsent.utils.errors import XlsentError

_CLICK_NAMES = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "bool": "BOOLEAN", "Path": "PATH"}


def _plain_type(label: str) -> str:
    inner = label[1:-1] if label.startswith("<") and label.endswith(">") else label
    if inner.startswith("list[") and inner.endswith("]"):
        inner = inner[5:-1]
    return _CLICK_NAMES.get(inner, inner.upper())


def _choices(param) -> tuple | None:
    """The values a choice parameter (a ``Literal`` or ``Enum`` annotation) takes; None for any other."""
    desc = getattr(param, "type_descriptor", None)  # typer 0.27+; older typer: a click.Choice type
    found = (desc.choices if desc.is_choice else None) if desc is not None else getattr(param.type, "choices", None)
    return tuple(getattr(c, "value", c) for c in found) if found else None


_PLAIN: dict[type, type] = {}


def _plain_class(cls: type) -> type:
    """``cls`` (a typer parameter class) whose bad choice is xlsent's one line (``unknown --opt 'x': use one of
    …``, exit 2) instead of a usage box, and whose ``--help`` shows a value's type as click always has (TEXT,
    INTEGER, PATH, [a|b] …) and nothing after a flag: typer 0.27 and later print Python annotations in brackets
    (``--plain <bool>``), which reads as if a flag took a value."""
    if cls in _PLAIN:
        return _PLAIN[cls]

    class Plain(cls):
        def process_value(self, ctx, value):
            try:
                return super().process_value(ctx, value)
            except typer.BadParameter:
                allowed = _choices(self)
                if not allowed or value is None or isinstance(value, (list, tuple)):  # None: missing, as typer says
                    raise
                raise XlsentError(f"unknown {self.opts[0]} '{value}': use one of {', '.join(allowed)}") from None

        if hasattr(cls, "display_type") and hasattr(cls, "display_type_rich"):
            def display_type(self, ctx):
                allowed = _choices(self)  # listed as click does
                return f"[{'|'.join(allowed)}]" if allowed else _plain_type(super().display_type(ctx))

            def display_type_rich(self, ctx):
                if getattr(self, "is_flag", False) or getattr(self, "count", False):
                    return None
                return super().display_type_rich(ctx)

    Plain.__name__ = Plain.__qualname__ = "Plain" + cls.__name__
    return _PLAIN.setdefault(cls, Plain)


def option_words(message: str, params) -> str:
    """``message`` (an error raised in Python, naming parameters as ``name=value`` or ``name=``) in the words of
    the command line: each parameter that is one of the command's options (``params``) becomes that option
    (``--name value``). The one place that maps Python's names to the CLI's."""
    import re

    from xlsent.api._common import RENAMED

    python = {new: old for old, new in RENAMED.items()}  # truncate_dim= is --dimensions …
    for p in params:
        opt = next((o for o in getattr(p, "opts", ()) if o.startswith("--")), None)
        for name in (n for n in python if python[n] == p.name) if opt and p.name else ():
            message = re.sub(rf"(?<![\w.-]){name}=", f"{p.name}=", message)
        if opt and p.name:
            message = re.sub(rf"(?<![\w.-]){re.escape(p.name)}=(?=[\s,;:)]|$)", opt, message)
            message = re.sub(rf"(?<![\w.-]){re.escape(p.name)}=(?=\S)", opt + " ", message)
    return message


def _plain_command(cls: type) -> type:
    """``cls`` (a command or group class) whose ``--help`` option is :func:`_plain_class` too, and whose user
    errors name its options (:func:`option_words`)."""
    if cls not in _PLAIN:
        class Plain(cls):
            def invoke(self, ctx):
                try:
                    return super().invoke(ctx)
                except XlsentError as e:
                    if getattr(e, "worded", False) or hasattr(self, "commands"):
                        raise
                    worded = type(e).__new__(type(e))
                    worded.__dict__.update(e.__dict__)
                    worded.args = (option_words(str(e), self.params),)
                    worded.worded = True
                    raise worded from None

            def get_help_option(self, ctx):
                option = super().get_help_option(ctx)
                if option is not None:
                    option.__class__ = _plain_class(type(option))
                return option

        Plain.__name__ = Plain.__qualname__ = "Plain" + cls.__name__
        _PLAIN[cls] = Plain
    return _PLAIN[cls]


def plain_help(command) -> None:
    """Every parameter of ``command`` and of its subcommands, ``--help`` included, made :func:`_plain_class`."""
    for param in getattr(command, "params", ()):
        param.__class__ = _plain_class(type(param))
    for sub in (getattr(command, "commands", None) or {}).values():
        if hasattr(sub, "get_help_option"):
            sub.__class__ = _plain_command(type(sub))
        plain_help(sub)


class XlsentGroup(_plain_command(TyperGroup)):
    """The program's root group: built once every command and group under it is, it makes their parameters
    :func:`_plain_class` — this program's own subclasses, typer's classes left untouched."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        plain_help(self)


console = Console(emoji=False)
err_console = Console(stderr=True, emoji=False)


def show_note(text: str) -> None:
    """How the CLI shows what a recipe reports (``on_note``): dimmed, on stderr, never parsed as markup."""
    err_console.print(escape(text), style="dim")


def main_score_line(name: str, score: float, model: str = "") -> None:
    """``main score (p@1): 0.9312`` — a task's one main score, as every path that runs it gives it."""
    console.print(f"main score ({name}): {score:.4f}" + (f"  [dim]{escape(model)}[/dim]" if model else ""),
                  highlight=False)


def show_lines(lines) -> None:
    """Notes on stdout, dimmed, never parsed as markup."""
    for line in lines:
        console.print(f"[dim]{escape(line)}[/dim]")


def table(title: str, columns, left: int = 1, **kwargs) -> Table:
    """A table with these columns: the first ``left`` aligned left, the others (figures) right."""
    t = Table(title=title, **kwargs)
    for i, c in enumerate(columns):
        t.add_column(c, justify="left" if i < left else "right")
    return t


def retrieval_table(rows: list[dict], title: str, extra_cols: tuple[str, ...] = ()) -> Table:
    """One row per result: P@1/5/10 both directions, with the P@1 CI."""
    t = table(title, ("pool", "n", *extra_cols, "src→tgt P@1 [95% CI]", "P@5", "P@10", "tgt→src P@1 [95% CI]", "P@5",
                      "P@10"))
    for r in rows:
        cells = [r["pool"], str(r["n"]), *[r.get(c, "") for c in extra_cols]]
        for x in (r["src2tgt"], r["tgt2src"]):
            ci = x.get("ci95", {}).get("p@1")
            cells += [f"{x['p@1']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""), f"{x['p@5']:.3f}",
                      f"{x['p@10']:.3f}"]
        t.add_row(*cells)
    return t


def beside_table(rows: list[dict], mean: dict | None, title: str) -> Table | None:
    """P@1 of the scorings reported beside the main one (centering, CSLS, margin): one row a scoring, for the one
    pool or the mean over pools (each pool's figures are in the JSON)."""
    named = [r for r in rows if r.get("beside")]
    data = (named[0]["beside"] if len(named) == 1 else (mean or {}).get("beside")) if named else None
    if not data:
        return None
    t = table(title + ("" if len(named) == 1 else f" — mean of {len(named)} pools"),
              ("scoring", "src→tgt P@1", "tgt→src P@1"))
    for name, v in data.items():
        t.add_row(name, f"{v['src2tgt']:.3f}", f"{v['tgt2src']:.3f}")
    return t


def summary_table(metrics: dict, title: str) -> Table:
    rows = summary_rows(metrics)
    cols = ["model"] + [c for c in HEADS if any(c in r for r in rows)]
    t = table(title, [HEADS.get(c, c) for c in cols])
    for r in rows:
        t.add_row(*[escape(str(r[c])) if c == "model" else ("—" if r.get(c) is None else f"{r[c]:.3f}") for c in cols])
    return t


def size_table(sizes: dict) -> Table:
    t = table("model size (Ding et al. Tables 1–2 style)", ("model", "embedding", "encoder", "total",
                                                            "layers (unique / passes)"),
              caption=f"student = {100 * sizes['student_share_of_assistant']:.1f}% of the assistant's parameters")
    for name in ("assistant", "student"):
        r = sizes[name]
        t.add_row(name, *(f"{r[k] / 1e6:.2f}M" for k in ("embedding_params", "encoder_params", "total_params")),
                  f"{r['unique_layers']} / {r['layer_passes']}")
    return t


def make_engine(engine: str, address: str | None, workers: int, cpus: float, gpus: float):
    """The ``--engine`` asked for, checked (a Ray cluster joined or started) before any model loads; None for
    ``local`` (the job runs its tasks here, with the encoder already loaded)."""
    from xlsent.api.mining import ENGINE
    from xlsent.mining.engine import RayEngine

    ENGINE["engine"].check(engine, "--engine")
    if engine == "local":
        if address or gpus:
            raise XlsentError("--address and --gpus-per-worker go with --engine ray")
        return None
    ENGINE["workers"].check(workers, "--workers")
    return RayEngine(address, workers, cpus, gpus)


def with_device(sets: list[str], device: str | None) -> list[str]:
    """``--set`` overrides with a recipe command's ``--device`` (given) as the last one: ``models.device``."""
    return [*sets, *([f"models.device={device}"] if device else [])]
