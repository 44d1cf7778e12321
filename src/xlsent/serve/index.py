"""The search corpus of ``xlsent serve --index``: embedded once at start-up, searched with faiss.

``--index`` names a bundled pair set (``bible-en-ny:test``, ``udhr:nya``…) or a file: a pairs file (TSV /
JSONL, as everywhere in xlsent) or plain text, one entry a line. For pairs, both sides are entries, each
with its language and its translation, so a query in either language finds entries of both and the page
shows each match beside its other side. Vectors are L2-normalised; the score is cosine (inner product on
an exact faiss index). When the model folder carries a mean vector for the language of every entry
(``xlsent models calibrate``), each entry is centered with its language's mean before it is indexed
(per-language centering); otherwise nothing is centered, and ``/info`` says so.

Scoring (``--scoring``): ``csls`` (the default where the index holds two or more languages) ranks by CSLS
(Conneau et al. 2018), ``2 cos(q, y) − r(q) − r(y)``, with ``r(y)`` the mean cosine of entry ``y`` to its
``k`` = 4 nearest entries of the other languages (computed once, at start-up) and ``r(q)`` the query's to its
``k`` nearest entries outside its own language (or all entries when the request names none); ``cosine``
ranks by cosine. Both are reported with every match. On the development retrieval pools
(``bible-en-ny:dev``, ``udhr-dev``: one language a side, each side centered with its own pool's mean) CSLS,
and centering under it, raised e5-small's P@1 in every direction (``benchmarks/mining/centering_dev.py``); the
served index mixes its languages and centers with calibrated means, which that benchmark does not measure.
An index of one language (a text file) is scored by cosine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from xlsent.utils.errors import XlsentError, named


@dataclass
class Entry:
    text: str
    lang: str
    parallel: str | None
    pair: int


def read_entries(spec: str) -> list[Entry]:
    from xlsent.data.sets.bundled import is_bundled

    path = Path(spec)
    if is_bundled(spec) or path.suffix in (".tsv", ".jsonl", ".gz") or "," in spec:
        from xlsent.data.sets.pairs import load_pairs, side_langs

        ds: Any = load_pairs(spec, dedupe=False).dataset
        src_lang, tgt_lang = side_langs(ds)
        # a row's own code (UDHR: one language a row), else the side's, stated or detected
        tgt_langs = list(ds["tgt_lang"]) if "tgt_lang" in ds.column_names else [""] * len(ds)
        tgt_langs = [tl or tgt_lang for tl in tgt_langs]
        entries = []
        for i, (s, t, tl) in enumerate(zip(ds["src"], ds["tgt"], tgt_langs)):
            entries.append(Entry(s, src_lang or "src", t, i))
            entries.append(Entry(t, tl or "tgt", s, i))
        return entries
    if not path.is_file():
        raise XlsentError(f"{named('index', spec)}: neither a bundled set (xlsent data list) nor a file")
    from xlsent.data.formats.readers import read_lines

    lines = [x.strip() for x in read_lines(path)]
    entries = [Entry(t, "", None, i) for i, t in enumerate(lines) if t]
    if not entries:
        raise XlsentError(f"{named('index', spec)}: no text in the file")
    return entries


SCORINGS = ("csls", "cosine")
K_NN = 4


class SearchIndex:
    """Entries and their vectors in an exact inner-product faiss index, scored by CSLS or cosine."""

    def __init__(self, entries: list[Entry], vectors: np.ndarray, name: str, means=None, scoring: str = "csls") -> None:
        import faiss

        if scoring not in SCORINGS:
            raise XlsentError(f"{named('scoring', scoring)}: use one of {', '.join(SCORINGS)}")
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
        self.vecs = vecs
        from xlsent.models.language_means import language_code

        self.langs = np.array([language_code(e.lang) for e in entries], dtype=object)
        self.scoring = scoring if len(set(self.langs.tolist())) > 1 else "cosine"
        self.r = self._neighbourhoods(vecs) if self.scoring == "csls" else None

    def _neighbourhoods(self, vecs: np.ndarray) -> np.ndarray:
        """r(y): each entry's mean cosine to its K_NN nearest entries of the other languages."""
        from xlsent.similarity import knn

        r = np.zeros(len(vecs), dtype=np.float32)
        for lang in set(self.langs.tolist()):
            mine, other = np.nonzero(self.langs == lang)[0], np.nonzero(self.langs != lang)[0]
            sims, _ = knn(vecs[mine], vecs[other], K_NN, "dot")
            r[mine] = sims.mean(1)
        return r

    @classmethod
    def build(cls, spec: str, encode, means=None, scoring: str = "csls") -> "SearchIndex":
        """Embed the entries of ``spec``; ``means`` (the model's language means) center them when they cover
        every entry's language."""
        entries = read_entries(spec)
        return cls(entries, encode([e.text for e in entries]), spec, means, scoring)

    def __len__(self) -> int:
        return len(self.entries)

    def search(self, vector: np.ndarray, k: int, lang: str | None = None) -> list[dict]:
        """The ``k`` best entries for one query vector (``lang``: the query's language, if the request names it)."""
        q = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        q /= max(float(np.linalg.norm(q)), 1e-12)
        if self.scoring == "cosine":
            scores, idx = self.index.search(q, min(k, len(self.entries)))
            cos = scores[0]
            order = idx[0]
            final = cos
        else:
            cos = self.vecs @ q[0]  # every entry: CSLS re-ranks the whole index (exact, as the faiss index is)
            from xlsent.models.language_means import language_code

            code = language_code(lang) if lang else None
            outside = (self.langs != code if code and (self.langs == code).any() and (self.langs != code).any()
                       else None)
            pool = cos[outside] if outside is not None else cos
            r_q = float(np.sort(pool)[-min(K_NN, len(pool)):].mean())
            csls = 2 * cos - r_q - self.r
            order = np.argsort(-csls, kind="stable")[:min(k, len(self.entries))]
            final = csls[order]
            cos = cos[order]
        out = []
        for s, c, i in zip(final, cos, order):
            if i < 0:
                continue
            e = self.entries[int(i)]
            out.append({"score": float(s), "cosine": float(c), "text": e.text, "lang": e.lang, "parallel": e.parallel,
                        "pair": e.pair})
        return out
