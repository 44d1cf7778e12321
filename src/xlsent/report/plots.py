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
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()
