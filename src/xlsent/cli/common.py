"""Shared CLI helpers: consoles, tables, option validation."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from xlsent.utils.errors import XlsentError

console = Console(emoji=False)
err_console = Console(stderr=True, emoji=False)


def choice(value: str, allowed: tuple[str, ...], option: str) -> str:
    if value not in allowed:
        raise XlsentError(f"unknown {option} '{value}': use one of {', '.join(allowed)}")
    return value


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
