"""Shared CLI helpers: consoles, tables, option validation."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xlsent.api._common import (at_least, check_backend, check_dimensions, choice, output_file,  # noqa: F401
                                output_folder, parse_filters)  # (re-exported)
from xlsent.utils.errors import XlsentError

_CLICK_NAMES = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "bool": "BOOLEAN", "Path": "PATH"}


def plain_help_types() -> None:
    """``--help`` shows a value's type as click always has (TEXT, INTEGER, PATH …) and nothing after a flag.

    Typer 0.27 and later print Python annotations in brackets — ``--plain <bool>``, ``--set <list[str]>``, even
    ``--help <bool>`` — which reads as if a flag took a value. The two display methods are replaced once, for
    this program's commands; a typer without them is left alone."""
    from typer import core

    param = getattr(core, "_TyperParameter", None)
    option = getattr(core, "TyperOption", None)
    if param is None or option is None or getattr(param, "_xlsent_plain", False) \
            or not all(hasattr(c, n) for c, n in ((param, "display_type"), (option, "display_type_rich"))):
        return
    original = param.display_type

    def display_type(self, ctx):
        label = original(self, ctx)
        inner = label[1:-1] if label.startswith("<") and label.endswith(">") else label
        if inner.startswith("list[") and inner.endswith("]"):
            inner = inner[5:-1]
        if "|" in inner:  # choices: listed as click does
            return f"[{inner}]"
        return _CLICK_NAMES.get(inner, inner.upper())

    option_rich = option.display_type_rich

    def display_type_rich(self, ctx):
        return None if getattr(self, "is_flag", False) or getattr(self, "count", False) else option_rich(self, ctx)

    param.display_type = display_type
    option.display_type_rich = display_type_rich
    param._xlsent_plain = True

console = Console(emoji=False)
err_console = Console(stderr=True, emoji=False)


def show_note(text: str) -> None:
    """How the CLI shows what a recipe reports (``on_note``): dimmed, on stderr, never parsed as markup."""
    err_console.print(escape(text), style="dim")


def retrieval_table(rows: list[dict], title: str, extra_cols: tuple[str, ...] = ()) -> Table:
    """One row per result: P@1/5/10 both directions, with the P@1 CI."""
    t = Table(title=title)
    for c in ("pool", "n", *extra_cols, "src→tgt P@1 [95% CI]", "P@5", "P@10", "tgt→src P@1 [95% CI]", "P@5", "P@10"):
        t.add_column(c, justify="right" if c not in ("pool",) else "left")
    for r in rows:
        cells = [r["pool"], str(r["n"]), *[r.get(c, "") for c in extra_cols]]
        for d in ("src2tgt", "tgt2src"):
            x = r[d]
            ci = x.get("ci95", {}).get("p@1")
            cells.append(f"{x['p@1']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""))
            cells += [f"{x['p@5']:.3f}", f"{x['p@10']:.3f}"]
        t.add_row(*cells)
    return t


def beside_table(rows: list[dict], mean: dict | None, title: str) -> Table | None:
    """P@1 of the scorings reported beside the main one (centering, CSLS, margin): one row a scoring, for the one
    pool or the mean over pools (each pool's figures are in the JSON)."""
    named = [r for r in rows if r.get("beside")]
    if not named:
        return None
    data = named[0]["beside"] if len(named) == 1 else (mean or {}).get("beside")
    if not data:
        return None
    t = Table(title=title + ("" if len(named) == 1 else f" — mean of {len(named)} pools"))
    for c in ("scoring", "src→tgt P@1", "tgt→src P@1"):
        t.add_column(c, justify="left" if c == "scoring" else "right")
    for name, v in data.items():
        t.add_row(name, f"{v['src2tgt']:.3f}", f"{v['tgt2src']:.3f}")
    return t


def summary_rows(metrics: dict) -> list[dict]:
    """One row per model for the CLI table (the parts each model was scored on)."""
    rows = []
    for name, r in metrics["models"].items():
        row = {"model": name}
        if "retrieval" in r:
            ret = r["retrieval"]
            fwd, bwd = ret["src2tgt"]["p@1"], ret["tgt2src"]["p@1"]
            if _english(ret.get("tgt_lang")) and not _english(ret.get("src_lang")):
                row.update(x2en=fwd, en2x=bwd)
            elif _english(ret.get("src_lang")):
                row.update(x2en=bwd, en2x=fwd)
            else:  # neither side known to be English: the directions as they are, never a guess
                row.update(s2t=fwd, t2s=bwd)
            row.update(
                       triplet_cos=r["triplets"]["accuracy"]["cosine"]["accuracy"],
                       mse_tgt=r.get("mse", {}).get("mse_tgt_x100"))
        if "udhr" in r:
            row["udhr_x2en"] = r["udhr"]["mean"]["tgt2src"]["p@1"]
            row["udhr_en2x"] = r["udhr"]["mean"]["src2tgt"]["p@1"]
        if "spans" in r:
            row["span_en2x"] = r["spans"]["src2tgt"]["p@1"]
            row["span_x2en"] = r["spans"]["tgt2src"]["p@1"]
        if "tagging" in r:
            for key in ("micro_f1", "macro_f1", "accuracy"):
                if key in r["tagging"]:
                    row[key] = r["tagging"][key]["value"]
        if "choice" in r:
            row["choice_acc"] = r["choice"]["accuracy"]
        rows.append(row)
    return rows


def _english(code) -> bool:
    return (code or "").lower().replace("_", "-").split("-")[0] in ("en", "eng")


_HEADS = {"x2en": "P@1 xx→en", "en2x": "P@1 en→xx", "s2t": "P@1 src→tgt", "t2s": "P@1 tgt→src", "triplet_cos": "triplet acc (cos)", "mse_tgt": "MSE×100 xx→T(en)",
          "udhr_x2en": "UDHR xx→en", "udhr_en2x": "UDHR en→xx", "span_en2x": "span P@1 en→xx",
          "span_x2en": "span P@1 xx→en", "micro_f1": "entity micro F1", "macro_f1": "entity macro F1",
          "accuracy": "accuracy", "choice_acc": "accuracy"}


def summary_table(metrics: dict, title: str) -> Table:
    rows = summary_rows(metrics)
    table = Table(title=title)
    cols = ["model"] + [c for c in _HEADS if any(c in r for r in rows)]
    for c in cols:
        table.add_column(_HEADS.get(c, c), justify="left" if c == "model" else "right")
    for r in rows:
        table.add_row(*[escape(str(r[c])) if c == "model" else ("—" if r.get(c) is None else f"{r[c]:.3f}") for c in cols])
    return table


def size_table(sizes: dict) -> Table:
    t = Table(title="model size (Ding et al. Tables 1–2 style)")
    for c in ("model", "embedding", "encoder", "total", "layers (unique / passes)"):
        t.add_column(c, justify="left" if c == "model" else "right")
    for name in ("assistant", "student"):
        r = sizes[name]
        t.add_row(name, f"{r['embedding_params'] / 1e6:.2f}M", f"{r['encoder_params'] / 1e6:.2f}M",
                  f"{r['total_params'] / 1e6:.2f}M", f"{r['unique_layers']} / {r['layer_passes']}")
    t.caption = f"student = {100 * sizes['student_share_of_assistant']:.1f}% of the assistant's parameters"
    return t


def make_engine(engine: str, address: str | None, workers: int, cpus: float, gpus: float):
    """The ``--engine`` asked for, checked (a Ray cluster joined or started) before any model loads; None for
    ``local`` (the job runs its tasks here, with the encoder already loaded)."""
    from xlsent.mining.engine import ENGINES, RayEngine

    choice(engine, ENGINES, "--engine")
    if engine == "local":
        if address or gpus:
            raise XlsentError("--address and --gpus-per-worker go with --engine ray")
        return None
    at_least(workers, 1, "--workers")
    return RayEngine(address, workers, cpus, gpus)


def with_device(sets: list[str], device: str | None) -> list[str]:
    """``--set`` overrides with a recipe command's ``--device`` (given) as the last one: ``models.device``."""
    return [*sets, *([f"models.device={device}"] if device else [])]
