"""Structural-span retrieval (what SCP trains, Chen et al. 2023): each English span finds its aligned span of the
other language among every span of the pool, and back.

A span's vector is the model's own SCP span vector (Eq. 4): the mean of the last-layer states of its
first and last sub-token, the sentence encoded with the model's document prompt (as in training).
P@1 by cosine with faiss (exact inner product over unit vectors), both directions, with a bootstrap
95% interval over spans, and per structural type (source → target). The pool is every span of the
sampled pairs, so a span competes with the other spans of its own sentence as well as with the
whole pool's. Spans that lie past ``max_seq_length`` pieces are left out and counted.
"""

from __future__ import annotations

import copy
import random
from dataclasses import asdict, dataclass, field

import numpy as np

from xlsent.utils.errors import XlsentError


def sample_records(records: list[dict], n: int, seed: int = 0) -> list[dict]:
    """A seeded sample of ``n`` records (all when ``n`` is 0 or at least their number), in file order."""
    if not n or n >= len(records):
        return records
    idx = sorted(random.Random(seed).sample(range(len(records)), n))
    return [records[i] for i in idx]


def _states_vectors(encoder, tok, texts: list[str], offsets: list[list[list[int] | None]], prompt: str,
                    max_len: int, batch_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Span vectors (one row per span of every text, in order) and whether each could be read."""
    import torch

    from xlsent.models.span_encoder import span_vectors

    rows_out, ok = [], []
    with torch.no_grad():
        for s in range(0, len(texts), batch_size):
            enc = tok([prompt + t for t in texts[s : s + batch_size]], padding=True, truncation=True,
                      max_length=max_len, return_tensors="pt")
            dev = encoder.device
            h = encoder(input_ids=enc["input_ids"].to(dev), attention_mask=enc["attention_mask"].to(dev)).last_hidden_state
            lens = enc["attention_mask"].sum(1).tolist()
            rows, first, last = [], [], []
            for k, spans in enumerate(offsets[s : s + batch_size]):
                for o in spans:
                    good = o is not None and o[1] < lens[k] - 1  # the last position is the end token
                    ok.append(good)
                    rows.append(k)
                    first.append(o[0] if good else 0)
                    last.append(o[1] if good else 0)
            if rows:
                v = span_vectors(h, torch.tensor(rows, device=dev), torch.tensor(first, device=dev),
                                 torch.tensor(last, device=dev))
                rows_out.append(torch.nn.functional.normalize(v.float(), dim=-1).cpu().numpy())
    vecs = np.concatenate(rows_out) if rows_out else np.zeros((0, encoder.config.hidden_size), dtype=np.float32)
    return vecs.astype(np.float32), np.asarray(ok, dtype=bool)


@dataclass(frozen=True)
class SpanDirection:
    """P@1 of one direction over every span, with its bootstrap 95% interval (empty without a bootstrap)."""

    p_at_1: float
    ci95: list[float] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"p@1": self.p_at_1, "ci95": list(self.ci95)}


@dataclass(frozen=True)
class SpanType:
    """P@1 of the spans of one structural type (both directions)."""

    n: int
    src2tgt: float
    tgt2src: float


@dataclass(frozen=True)
class SpanResult:
    """What :func:`span_retrieval` measured; ``to_dict()`` is the JSON of ``xlsent eval spans`` and metrics.json."""

    model: str
    pairs: int
    spans: int
    left_out: int
    src2tgt: SpanDirection
    tgt2src: SpanDirection
    by_type: dict[str, SpanType]
    max_seq_length: int
    prompt: str

    def to_dict(self) -> dict:
        return {"model": self.model, "pairs": self.pairs, "spans": self.spans, "left_out": self.left_out,
                "src2tgt": self.src2tgt.to_dict(), "tgt2src": self.tgt2src.to_dict(),
                "by_type": {k: asdict(v) for k, v in self.by_type.items()},
                "max_seq_length": self.max_seq_length, "prompt": self.prompt}


def _p_at_1(q: np.ndarray, keys: np.ndarray) -> np.ndarray:
    import faiss

    index = faiss.IndexFlatIP(keys.shape[1])
    index.add(np.ascontiguousarray(keys))
    _, ids = index.search(np.ascontiguousarray(q), 1)
    return ids[:, 0] == np.arange(len(q))


def _ci(hits: np.ndarray, bootstrap: int, seed: int) -> list[float]:
    from xlsent.evaluation.bootstrap import mean_ci

    return mean_ci(hits, bootstrap, seed) if bootstrap and len(hits) else []


def span_retrieval(st, prompt: str, records: list[dict], max_seq_length: int = 128, batch_size: int = 32,
                   bootstrap: int = 1000, seed: int = 0, name: str = "") -> SpanResult:
    """P@1 of structural-span retrieval for a loaded ``SentenceTransformer`` (its transformer's last layer, with
    ``prompt`` before each sentence) over the spans of ``records`` (a structural-words file's)."""
    from xlsent.data.derived.structural import add_piece_offsets

    encoder = st[0].auto_model.eval()
    tok = st.tokenizer
    recs = copy.deepcopy(records)
    add_piece_offsets(recs, tok, prompt)  # this model's tokenizer and prompt (cheap: no alignment)
    src, ok_s = _states_vectors(encoder, tok, [r["src"] for r in recs], [[s["src_pieces"] for s in r["spans"]]
                                                                        for r in recs], prompt, max_seq_length, batch_size)
    tgt, ok_t = _states_vectors(encoder, tok, [r["tgt"] for r in recs], [[s["tgt_pieces"] for s in r["spans"]]
                                                                        for r in recs], prompt, max_seq_length, batch_size)
    types = [s["types"] for r in recs for s in r["spans"]]
    keep = ok_s & ok_t
    if keep.sum() < 2:
        raise XlsentError("fewer than 2 structural spans fit in the model's input — raise --max-length or give more pairs")
    src, tgt = src[keep], tgt[keep]
    types = [t for t, k in zip(types, keep) if k]
    s2t, t2s = _p_at_1(src, tgt), _p_at_1(tgt, src)
    by_type = {}
    for kind in ("subject", "verb", "object", "entity"):
        m = np.array([kind in t for t in types])
        if m.any():
            by_type[kind] = SpanType(int(m.sum()), float(s2t[m].mean()), float(t2s[m].mean()))
    return SpanResult(name, len(recs), int(keep.sum()), int((~keep).sum()),
                      SpanDirection(float(s2t.mean()), _ci(s2t, bootstrap, seed)),
                      SpanDirection(float(t2s.mean()), _ci(t2s, bootstrap, seed + 1)),
                      by_type, max_seq_length, prompt)
