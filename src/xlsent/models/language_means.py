"""Per-language mean vectors carried in a model folder, for centering single texts.

Per-language centering (:func:`xlsent.similarity.center`) needs each language's mean vector. Over a
pool (an evaluation set, two files to mine) the pool's own mean serves; a service embedding one query
at a time must know the means in advance. ``xlsent models calibrate MODEL --lang CODE=FILE …`` embeds
text the user gives for each language and stores the means here, in ``xlsent_language_means.npz``
inside the model folder (one float32 row per language code, plus how many texts and which file made
it). The file is not part of the folder's fingerprint (caches of the model's vectors stay valid), and
nothing else in the folder changes: ``SentenceTransformer(path)`` loads it as before.

A centered vector is ``unit(unit(v) − mean[lang])``; the same function serves ``xlsent embed --center`` and
the service, so both give the same vectors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from xlsent.similarity import center, unit
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import atomic_path

MEANS_FILE = "xlsent_language_means.npz"


def language_code(code: str) -> str:
    """A language code as stored: lower case, ``_`` → ``-`` (``ny``, ``nya``, ``pt-br``)."""
    return code.strip().lower().replace("_", "-")


@dataclass
class LanguageMeans:
    """Mean vectors by language code, and where each came from (``{"texts": n, "source": file}``)."""

    means: dict[str, np.ndarray]
    sources: dict[str, dict] = field(default_factory=dict)

    @property
    def languages(self) -> list[str]:
        return sorted(self.means)

    def to_dict(self) -> dict:
        """The calibrated languages, the width and where each mean came from (the vectors stay in the folder)."""
        return {"languages": self.languages, "dimension": self.dimension, "sources": self.sources}

    @property
    def dimension(self) -> int:
        return len(next(iter(self.means.values()))) if self.means else 0

    def has(self, lang: str | None) -> bool:
        return bool(lang) and language_code(lang) in self.means

    def mean(self, lang: str) -> np.ndarray:
        code = language_code(lang)
        if code not in self.means:
            raise XlsentError(f"no mean vector for language '{lang}' in this model (calibrated: "
                              f"{', '.join(self.languages) or 'none'}) — calibrate it (xlsent.calibrate, or "
                              f"xlsent models calibrate MODEL --lang {code}=FILE)")
        return self.means[code]

    def apply(self, vectors: np.ndarray, lang: str) -> np.ndarray:
        """``unit(unit(v) − mean[lang])`` for every row (the means are means of unit vectors)."""
        return unit(center(unit(vectors), self.mean(lang)))

    def summary(self) -> dict:
        return {code: self.sources.get(code, {}) for code in self.languages}

    def save(self, folder: str | Path) -> Path:
        """Write (atomically) into ``folder``; returns the file."""
        path = Path(folder) / MEANS_FILE
        arrays = {f"mean:{k}": np.asarray(v, dtype=np.float32) for k, v in self.means.items()}
        arrays["meta"] = np.array(json.dumps({"schema": "xlsent.language_means/1", "sources": self.sources}))
        with atomic_path(path) as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, **arrays)
        return path


def read_language_means(folder: str | Path | None) -> LanguageMeans | None:
    """The means stored in a model folder, or None when it carries none."""
    if folder is None:
        return None
    path = Path(folder) / MEANS_FILE
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        means = {k.split(":", 1)[1]: np.asarray(z[k], dtype=np.float32) for k in z.files if k.startswith("mean:")}
    return LanguageMeans(means, meta.get("sources", {}))


def calibrate(encode, texts_by_lang: dict[str, list[str]], sources: dict[str, str],
              existing: LanguageMeans | None = None) -> LanguageMeans:
    """Means of ``encode(texts, lang)`` (unit rows) per language, merged over ``existing`` (a language given
    again is replaced)."""
    means = dict(existing.means) if existing else {}
    info = dict(existing.sources) if existing else {}
    for lang, texts in texts_by_lang.items():
        code = language_code(lang)
        if not texts:
            raise XlsentError(f"the texts of {lang} ({sources.get(lang, '')}): no text to calibrate on")
        vecs = unit(encode(texts, code))
        if means and len(vecs[0]) != len(next(iter(means.values()))):
            raise XlsentError(f"the texts of {lang}: this model's vectors have {len(vecs[0])} dimensions, the stored "
                              f"means {len(next(iter(means.values())))} — calibrate a model folder only with its own "
                              "model")
        means[code] = vecs.mean(0).astype(np.float32)
        info[code] = {"texts": len(texts), "source": sources.get(lang, "")}
    return LanguageMeans(means, info)
