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
