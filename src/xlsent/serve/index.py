"""The search corpus of ``xlsent serve --index``: embedded once at start-up, searched with faiss.

``--index`` names a bundled pair set (``bible-en-ny:test``, ``udhr:nya``…) or a file: a pairs file (TSV /
JSONL, as everywhere in xlsent) or plain text, one entry a line. For pairs, both sides are entries, each
with its language and its translation, so a query in either language finds entries of both and the page
shows each match beside its other side. Vectors are L2-normalised; the score is cosine (inner product on
an exact faiss index). When the model folder carries a mean vector for the language of every entry
(``xlsent models calibrate``), each entry is centered with its language's mean before it is indexed
(per-language centering); otherwise nothing is centered, and ``/info`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xlsent.utils.errors import XlsentError


@dataclass
class Entry:
    text: str
    lang: str
    parallel: str | None
    pair: int


def read_entries(spec: str) -> list[Entry]:
    from xlsent.data.bundled import is_bundled

    path = Path(spec)
    if is_bundled(spec) or path.suffix in (".tsv", ".jsonl", ".gz") or "," in spec:
        from xlsent.data.pairs import load_pairs, side_langs

        ds = load_pairs(spec, dedupe=False).dataset
        src_lang, tgt_lang = side_langs(ds)
        tgt_langs = list(ds["tgt_lang"]) if "tgt_lang" in ds.column_names else [tgt_lang] * len(ds)
        entries = []
        for i, (s, t, tl) in enumerate(zip(ds["src"], ds["tgt"], tgt_langs)):
            entries.append(Entry(s, src_lang or "src", t, i))
            entries.append(Entry(t, tl or "tgt", s, i))
        return entries
    if not path.is_file():
        raise XlsentError(f"--index {spec}: neither a bundled set (xlsent data list) nor a file")
    from xlsent.data.readers import read_lines

    lines = [x.strip() for x in read_lines(path)]
    entries = [Entry(t, "", None, i) for i, t in enumerate(lines) if t]
    if not entries:
        raise XlsentError(f"--index {spec}: no text in the file")
    return entries


class SearchIndex:
    """Entries and their vectors in an exact inner-product faiss index."""

    def __init__(self, entries: list[Entry], vectors: np.ndarray, name: str, means=None) -> None:
        import faiss

        vecs = np.ascontiguousarray(vectors, dtype=np.float32)
        self.centered = bool(means is not None and entries and all(means.has(e.lang) for e in entries))
        if self.centered:
            for lang in {e.lang for e in entries}:
                rows = np.array([i for i, e in enumerate(entries) if e.lang == lang])
                vecs[rows] = means.apply(vecs[rows], lang)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        self.entries, self.name = entries, name
        self.index = faiss.IndexFlatIP(vecs.shape[1])
        self.index.add(vecs)

    @classmethod
    def build(cls, spec: str, encode, means=None) -> "SearchIndex":
        """Embed the entries of ``spec``; ``means`` (the model's language means) center them when they cover
        every entry's language."""
        entries = read_entries(spec)
        return cls(entries, encode([e.text for e in entries]), spec, means)

    def __len__(self) -> int:
        return len(self.entries)

    def search(self, vector: np.ndarray, k: int) -> list[dict]:
        q = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        q /= max(float(np.linalg.norm(q)), 1e-12)
        scores, idx = self.index.search(q, min(k, len(self.entries)))
        out = []
        for s, i in zip(scores[0], idx[0]):
            if i < 0:
                continue
            e = self.entries[int(i)]
            out.append({"score": float(s), "text": e.text, "lang": e.lang, "parallel": e.parallel, "pair": e.pair})
        return out
