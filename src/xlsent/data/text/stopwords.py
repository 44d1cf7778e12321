"""Stop words: the stopwords-iso lists where they exist, a frequency rule where they do not.

``data/stopwords/stopwords-iso.json.gz`` is npm ``stopwords-iso@1.1.0`` (MIT; 58 languages, the
lists paper 004 used). For a language it lacks — Chichewa among them — :func:`frequency_stopwords`
derives a list from text in that language: the ``top`` most frequent lower-cased words (default 100)
that are not punctuation. On the Chichewa Old Testament these are the particles and concords
(*ndi*, *kuti*, *wa*, *ku*, *la* …), which is what a stop list holds; the rule and the count are
reported wherever a list is derived.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from functools import lru_cache
from typing import Iterable

from xlsent.utils.errors import XlsentError

#: ISO 639-3 → 639-1 for the languages xlsent bundles data for (stopwords-iso is keyed by 639-1)
_ISO3 = {"eng": "en", "nya": "ny", "jpn": "ja", "spa": "es", "fra": "fr", "swh": "sw", "swa": "sw", "zul": "zu",
         "yor": "yo", "hau": "ha", "som": "so", "afr": "af", "vie": "vi", "cmn": "zh", "zho": "zh"}


@lru_cache(maxsize=1)
def iso_lists() -> dict[str, frozenset[str]]:
    """The stopwords-iso lists by language code (the registry's ``stopwords-iso`` file), lower-cased."""
    from xlsent.data.sets import registry
    from xlsent.data.sets.bundled import data_dir

    path = data_dir() / registry.resolve("stopwords-iso", "resource").entry.files[0]
    if not path.exists():
        raise XlsentError(f"{path}: stop-word lists missing — run `python scripts/build_tagging_data.py --only stopwords`")
    data = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
    return {k: frozenset(w.lower() for w in v) for k, v in data.items()}


def frequency_stopwords(sentences: Iterable[list[str]], top: int = 100) -> frozenset[str]:
    """The ``top`` most frequent lower-cased word tokens (punctuation and digits excluded)."""
    counts = Counter(t.lower() for sent in sentences for t in sent if any(c.isalpha() for c in t))
    return frozenset(w for w, _ in counts.most_common(top))


def stopwords_for(lang: str, sentences: Iterable[list[str]] | None = None, top: int = 100) -> tuple[frozenset[str], str]:
    """The stop list of ``lang`` and a line saying where it came from.

    stopwords-iso when it has the language; otherwise :func:`frequency_stopwords` over ``sentences``
    (an error if none are given)."""
    code = _ISO3.get(lang, lang)
    lists = iso_lists()
    if code in lists:
        return lists[code], f"stop words ({lang}): {len(lists[code])} from stopwords-iso 1.1.0"
    if sentences is None:
        raise XlsentError(f"stopwords-iso has no list for {lang!r}: give text in the language to derive one "
                          "from frequency, or a stop-word file")
    words = frequency_stopwords(sentences, top)
    return words, (f"stop words ({lang}): stopwords-iso has none — the {len(words)} most frequent words of the "
                   "training and test text (frequency rule)")


def read_stopword_file(path: str) -> frozenset[str]:
    """One stop word per line (``#`` comments allowed)."""
    from pathlib import Path

    p = Path(path).expanduser()
    if not p.is_file():
        raise XlsentError(f"{p}: no such stop-word file — check the path")
    return frozenset(x.strip().lower() for x in p.read_text(encoding="utf-8").splitlines()
                     if x.strip() and not x.startswith("#"))


def bundled_lists(name: str = "stopwords-iso") -> dict[str, frozenset[str]]:
    """The registry's loader: the bundled stopwords-iso lists (:func:`iso_lists`)."""
    return iso_lists()
