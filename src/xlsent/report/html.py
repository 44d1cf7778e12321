"""A self-contained HTML page (tables + inline PNG) for a demo or training run."""

from __future__ import annotations

import base64
import html


def _fmt(x: dict, k: str) -> str:
    ci = x.get("ci95", {}).get(k)
    return f"{x[k]:.3f}" + (f" <small>[{ci[0]:.3f}, {ci[1]:.3f}]</small>" if ci else "")


def comparison_table(title: str, rows: list[tuple[str, int, dict, dict]]) -> str:
    """rows: (pool, n, base result dict, trained result dict)."""
    head = (
        "<tr><th>pool</th><th>n</th><th>direction</th><th>base P@1</th><th>trained P@1</th>"
        "<th>base P@5</th><th>trained P@5</th><th>base P@10</th><th>trained P@10</th></tr>"
    )
    body = []
    for pool, n, b, t in rows:
        for d in ("src2tgt", "tgt2src"):
            cells = "".join(f"<td>{_fmt(b[d], k)}</td><td>{_fmt(t[d], k)}</td>" for k in ("p@1", "p@5", "p@10"))
            body.append(f"<tr><td>{html.escape(pool)}</td><td>{n}</td><td>{d}</td>{cells}</tr>")
    return f"<h2>{html.escape(title)}</h2><table>{head}{''.join(body)}</table>"


def language_tail_section(title: str, models: dict[str, dict]) -> str:
    """Per model, the plot of each language's P@1 against the tokenizer's pieces per word and unknown-piece rate
    (:func:`xlsent.report.plots.language_tail_png`) and the summary by script (``models``: name → the
    ``udhr`` entry of its metrics, ``{"languages", "summary"}``)."""
    from xlsent.report.plots import language_tail_png

    parts = [f"<h2>{html.escape(title)}</h2>"]
    for name, udhr in models.items():
        png = language_tail_png(udhr["languages"], f"{name}: P@1 by language")
        parts.append(f'<figure><img alt="P@1 by language, {html.escape(name)}" '
                     f'src="data:image/png;base64,{base64.b64encode(png).decode()}"/>'
                     f"<figcaption>{html.escape(name)}: each dot a language, one colour per script</figcaption></figure>")
        rows = "".join(
            f"<tr><td>{html.escape(g['script'])}</td><td>{g['languages']}</td><td>{g['p@1']['src2tgt']:.3f}</td>"
            f"<td>{g['p@1']['tgt2src']:.3f}</td></tr>" for g in udhr.get("summary", {}).get("by_script", []))
        if rows:
            parts.append(f"<table><tr><th>script ({html.escape(name)})</th><th>languages</th>"
                         f"<th>P@1 src→tgt</th><th>P@1 tgt→src</th></tr>{rows}</table>")
    return "".join(parts)


def page(title: str, sections: list[str], png: bytes | None = None, caption: str = "") -> str:
    img = ""
    if png:
        img = (
            f'<figure><img alt="embedding space" src="data:image/png;base64,{base64.b64encode(png).decode()}"/>'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child{text-align:left}img{max-width:100%}"
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title><style>{style}</style></head>"
        f"<body><h1>{html.escape(title)}</h1>{''.join(sections)}{img}</body></html>"
    )
