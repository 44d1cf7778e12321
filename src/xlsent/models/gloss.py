"""The folder format of a word-gloss model (``xlsent train gloss``): a sentence-transformers model with
its bilingual dictionary inside.

``gloss_dictionary.tsv`` (``word<TAB>translation``) and ``xlsent_gloss.json`` (which file, the
policy for unknown words, the entry count, the source) sit next to ``modules.json``. The model
itself is an ordinary English sentence-transformer; low-resource text must be glossed word by word
before it is encoded. :class:`xlsent.encoding.encoder.Encoder` does that for every text whose
language is not English, so ``embed``, ``eval`` and ``mine`` score a gloss model the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from xlsent.data.formats.dictionary import BilingualDictionary
from xlsent.utils.io import write_json_atomic, write_text_atomic

GLOSS_FILE = "gloss_dictionary.tsv"
GLOSS_META = "xlsent_gloss.json"


@dataclass
class Gloss:
    """A dictionary and what to do with words it lacks (``keep`` or ``drop``)."""

    dictionary: BilingualDictionary
    unknown: str = "keep"

    def __call__(self, text: str) -> str:
        return self.dictionary.gloss(text, self.unknown)


def load_gloss(model_path: str | Path) -> Gloss | None:
    """The gloss stored in a gloss model's folder (None for other models)."""
    meta = Path(model_path) / GLOSS_META
    if not meta.exists():
        return None
    info = json.loads(meta.read_text(encoding="utf-8"))
    d = BilingualDictionary.from_tsv(Path(model_path) / info["dictionary"])
    d.source = str(model_path)
    return Gloss(d, info.get("unknown", "keep"))


def save_gloss(model_path: str | Path, dictionary: BilingualDictionary, unknown: str = "keep") -> None:
    """Write the dictionary and its record into a model folder (each file atomically)."""
    model_path = Path(model_path)
    write_text_atomic(model_path / GLOSS_FILE, dictionary.to_tsv())
    write_json_atomic(model_path / GLOSS_META, {"dictionary": GLOSS_FILE, "unknown": unknown,
                                                "entries": len(dictionary), "source": dictionary.source})
