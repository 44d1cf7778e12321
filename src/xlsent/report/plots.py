"""Embedding-space plot before/after training (Huang et al. 2023, Fig. 7)."""

from __future__ import annotations

import io

import numpy as np


def embedding_space_png(panels: list[tuple[str, np.ndarray, np.ndarray]], src_label: str, tgt_label: str) -> bytes:
    """One PCA scatter per ``(title, src_vecs, tgt_vecs)`` panel; PCA fitted on both languages of that panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.decomposition import PCA

    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 5), squeeze=False)
    for ax, (title, s, t) in zip(axes[0], panels):
        xy = PCA(n_components=2, random_state=0).fit_transform(np.vstack([s, t]))
        a, b = xy[: len(s)], xy[len(s) :]
        ax.scatter(a[:, 0], a[:, 1], s=8, alpha=0.6, c="tab:red", label=src_label)
        ax.scatter(b[:, 0], b[:, 1], s=8, alpha=0.6, c="tab:blue", label=tgt_label)
        ax.set_title(title)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    return _png(fig, 110)


def length_difference_png(curves: dict[str, list[dict]], title: str = "") -> bytes:
    """Manafi (2025) Fig. 3.6: mean cos(anchor, positive) and cosine accuracy per length-difference bin.

    ``curves`` maps a model name to the ``by_length_difference`` rows of
    :func:`xlsent.evaluation.triplet.evaluate_triplets`.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, rows in curves.items():
        bins = [r["bin"] for r in rows]
        x = np.arange(len(bins))
        axes[0].plot(x, [r["mean_cosine_positive"] for r in rows], marker="o", label=name)
        axes[1].plot(x, [r["accuracy_cosine"] for r in rows], marker="o", label=name)
        for ax in axes:
            ax.set_xticks(x, [f"{b}\n(n={r['n']})" for b, r in zip(bins, rows)], fontsize=7)
    axes[0].set_ylabel("mean cos(anchor, positive)")
    axes[1].set_ylabel("triplet accuracy (cosine)")
    for ax in axes:
        ax.set_xlabel("|words(anchor) − words(positive)|")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return _png(fig, 110)


def confusion_png(matrix: list[list[int]], labels: list[str], title: str = "") -> bytes:
    """A confusion matrix (rows: gold, columns: predicted) as PNG bytes (scikit-learn's display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import ConfusionMatrixDisplay

    fig, ax = plt.subplots(figsize=(1.0 + 0.8 * len(labels), 0.6 + 0.8 * len(labels)))
    ConfusionMatrixDisplay(np.asarray(matrix), display_labels=labels).plot(ax=ax, colorbar=False, xticks_rotation=45)
    ax.set_title(title)
    fig.tight_layout()
    return _png(fig, 120)


def language_tail_png(entries: list[dict], title: str = "", top: int = 7) -> bytes:
    """P@1 of each language (mean of both directions) against the model's pieces per word and its unknown-piece
    rate, one colour per script: the ``top`` scripts with the most languages, the rest as "other".

    ``entries``: per-language retrieval dicts carrying ``script``, ``pieces_per_word`` and ``unk_rate``
    (:func:`xlsent.evaluation.languages.profile_languages`); ``tgt_lang`` labels the worst few."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from collections import Counter

    rows = [e for e in entries if e.get("pieces_per_word") is not None and e.get("unk_rate") is not None]
    counts = Counter(e.get("script") or "Zyyy" for e in rows)
    shown = [s for s, _ in sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:top]]
    if len(counts) == top + 1:  # one script left over: name it rather than "other"
        shown = sorted(counts, key=lambda s: (-counts[s], s))
    palette = plt.get_cmap("tab10").colors
    colour = {s: palette[i % 10] for i, s in enumerate(shown)}
    y = np.array([(e["src2tgt"]["p@1"] + e["tgt2src"]["p@1"]) / 2 for e in rows])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    for ax, field, label in ((axes[0], "pieces_per_word", "pieces per word (the model's tokenizer)"),
                             (axes[1], "unk_rate", "unknown-piece rate (share of pieces that are unk)")):
        x = np.array([e[field] for e in rows])
        for group in [*shown, "other"]:
            keep = np.array([(e.get("script") or "Zyyy") == group if group != "other"
                             else (e.get("script") or "Zyyy") not in colour for e in rows], dtype=bool)
            if keep.any():
                ax.scatter(x[keep], y[keep], s=16, alpha=0.75, label=f"{group} ({int(keep.sum())})",
                           color=colour.get(group, "0.6"))
        if field == "unk_rate":
            ax.set_xscale("symlog", linthresh=1e-3)
            ax.set_xlim(left=-1e-4)
        elif len(x) and x.min() > 0:  # a language whose "words" are whole lines (no spaces) would squash the rest
            ax.set_xscale("log")
        for i in np.argsort(y)[:5]:  # the five worst, labelled
            ax.annotate(rows[i].get("tgt_lang", ""), (x[i], y[i]), fontsize=7, xytext=(3, 3),
                        textcoords="offset points")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("P@1, mean of both directions")
    axes[1].legend(title="script (languages)", fontsize=7, title_fontsize=8, loc="best")
    fig.suptitle(title or f"P@1 of {len(rows)} languages by how the tokenizer splits them")
    fig.tight_layout()
    return _png(fig, 110)


def learning_curve_png(points: list[dict], fit, base: float | None, title: str = "") -> bytes:
    """Held-out P@1 against training pairs (log scale): each share's point with its 90% bootstrap interval, the
    fitted power law (:class:`xlsent.evaluation.curve.CurveFit`) with its 90% band carried to four times the
    pairs, and the base model as a dashed line. ``points``: ``{"pairs", "p_at_1", "ci90"}`` each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = np.array([p["pairs"] for p in points], dtype=float)
    y = np.array([p["p_at_1"] for p in points])
    lo = np.array([p["ci90"][0] for p in points])
    hi = np.array([p["ci90"][1] for p in points])
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    grid = np.geomspace(n.min(), 4 * n.max(), 120)
    band = fit.interval(grid)
    ax.fill_between(grid, band[0], band[1], color="tab:blue", alpha=0.15, label="fit, 90% interval")
    ax.plot(grid, np.clip(fit.p_at_1(grid), 0, 1), color="tab:blue", lw=1.5,
            label=f"fit: 1 − P@1 = {fit.a:.3g}·n^{-fit.b:.2f}")
    ax.errorbar(n, y, yerr=[y - lo, hi - y], fmt="o", color="black", capsize=3, label="held-out P@1 (90% CI)")
    if base is not None:
        ax.axhline(base, color="grey", ls="--", lw=1, label=f"base model {base:.3f}")
    ax.axvline(n.max(), color="grey", ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("training pairs")
    ax.set_ylabel("held-out P@1 (mean of both directions)")
    ax.set_title(title or "How many pairs? (forecast right of the dotted line)", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return _png(fig, 110)


def bootstrap_rounds_png(rounds: list[dict], best: int, title: str = "") -> bytes:
    """A bootstrap's rounds: each round's held-out P@1 in the hard pool with its 95% interval (left axis) and the
    mined pairs it kept for the next round (bars, right axis); the output round ringed. ``rounds``: the
    ``bootstrap.json`` entries (``round``, ``held_out`` with ``p_at_1`` and ``ci95``, ``counts`` with ``kept``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.array([r["round"] for r in rounds])
    y = np.array([r["held_out"]["p_at_1"] for r in rounds])
    lo = np.array([r["held_out"]["ci95"][0] for r in rounds])
    hi = np.array([r["held_out"]["ci95"][1] for r in rounds])
    kept = np.array([r["counts"].get("kept", 0) for r in rounds])
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    bars = ax.twinx()
    bars.bar(x, kept, width=0.5, color="tab:orange", alpha=0.3, label="mined pairs kept (right)")
    bars.set_ylabel("mined pairs kept")
    ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt="o-", color="black", capsize=3,
                label="held-out P@1 in the hard pool (95% CI)")
    at = [i for i, r in enumerate(rounds) if r["round"] == best]
    if at:
        ax.plot(x[at], y[at], "o", ms=14, mfc="none", mec="tab:blue", label="the output model")
    ax.set_ylim(max(0.0, float(min(lo.min(), y.min())) - 0.05), 1.01)  # P@1 never above 1
    ax.set_zorder(bars.get_zorder() + 1)
    ax.patch.set_visible(False)
    ax.set_xticks(x)
    ax.set_xlabel("round (0: the seed pairs alone)")
    ax.set_ylabel("held-out P@1, mean of both directions")
    ax.set_title(title or "Bootstrap: mine, clean, retrain", fontsize=10)
    handles = ax.get_legend_handles_labels()
    more = bars.get_legend_handles_labels()
    ax.legend(handles[0] + more[0], handles[1] + more[1], loc="lower right", fontsize=8)
    fig.tight_layout()
    return _png(fig, 110)


def _png(fig, dpi: int) -> bytes:
    """A matplotlib figure as PNG bytes; the figure is closed."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()
