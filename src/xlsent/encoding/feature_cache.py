"""On-disk cache of per-text feature vectors, keyed by (model, feature spec, text).

Each stored chunk is an ``.npz`` file of text hashes and vectors, written
atomically; a folder is one (model fingerprint, feature name) pair. Reading
loads every chunk into a dict, which is fast for the corpus sizes xlsent's
recipes train on (tens of thousands of sentences).
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from xlsent.utils.io import atomic_path


def text_key(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8")).digest()


class FeatureCache:
    """Vectors for texts, stored under ``root``; missing ones computed on demand."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._mem: dict[bytes, np.ndarray] | None = None

    def _load(self) -> dict[bytes, np.ndarray]:
        if self._mem is None:
            self._mem = {}
            for chunk in sorted(self.root.glob("chunk-*.npz")):
                with np.load(chunk) as z:
                    for k, v in zip(z["keys"], z["vectors"]):
                        self._mem[bytes(k)] = v
        return self._mem

    def __len__(self) -> int:
        return len(self._load())

    def missing(self, texts: Sequence[str]) -> list[str]:
        mem = self._load()
        seen: set[bytes] = set()
        out = []
        for t in texts:
            k = text_key(t)
            if k not in mem and k not in seen:
                seen.add(k)
                out.append(t)
        return out

    def put(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        if not len(texts):
            return
        keys = np.array([np.frombuffer(text_key(t), dtype=np.uint8) for t in texts])
        vectors = np.asarray(vectors, dtype=np.float32)
        with atomic_path(self.root / f"chunk-{uuid.uuid4().hex}.npz") as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, keys=keys, vectors=vectors)
        mem = self._load()
        for t, v in zip(texts, vectors):
            mem[text_key(t)] = v

    def get(self, texts: Sequence[str]) -> np.ndarray:
        mem = self._load()
        return np.stack([mem[text_key(t)] for t in texts]) if len(texts) else np.zeros((0, 0), np.float32)


def cached_features(
    caches: dict[str, FeatureCache],
    texts: Sequence[str],
    compute: Callable[[list[str]], dict[str, np.ndarray]],
) -> dict[str, np.ndarray]:
    """Features for ``texts`` under every name in ``caches``, computing only the missing texts once."""
    todo: list[str] = sorted({t for c in caches.values() for t in c.missing(texts)})
    if todo:
        computed = compute(todo)
        for name, cache in caches.items():
            cache.put(todo, computed[name])
    return {name: cache.get(texts) for name, cache in caches.items()}
