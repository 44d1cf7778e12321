"""Labelled texts for zero-shot classification transfer: MLDoc-style files and the bundled Bible-genre task.

**Files** (MLDoc's format): one ``label<TAB>text`` a line, UTF-8; a line without a tab, with an
empty label or an empty text is an error that names the file and line.

**Bundled task** ``bible-genre`` (a substitute: there is no MLDoc for Chichewa): every Bible verse
labelled with the genre of its book — the conventional division of the Protestant canon into six
classes: *law* (Genesis–Deuteronomy), *history* (Joshua–Esther, and Acts, the history of the early
church), *wisdom* (Job–Song of Solomon: wisdom and poetry), *prophets* (Isaiah–Malachi, and
Revelation, an apocalyptic prophecy), *gospels* (Matthew–John) and *epistles* (Romans–Jude).
It is **split by book** (:data:`TEST_BOOKS`, at least one book per class): the classifier trains on
English verses of the other books and is tested on Chichewa verses of the test books, so no
translation of a training verse is tested. The in-language upper bound trains on the Chichewa
verses of the training books. Each side is capped per class (seeded) to keep CPU encoding short.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xlsent.data.formats.readers import read_lines
from xlsent.utils.errors import InputFormatError

GENRES = {
    "law": ("Genesis", "Exodus", "Leviticus", "Numbers", "Deuteronomy"),
    "history": ("Joshua", "Judges", "Ruth", "1 Samuel", "2 Samuel", "1 Kings", "2 Kings", "1 Chronicles",
                "2 Chronicles", "Ezra", "Nehemiah", "Esther", "Acts"),
    "wisdom": ("Job", "Psalms", "Proverbs", "Ecclesiastes", "Song of Solomon"),
    "prophets": ("Isaiah", "Jeremiah", "Lamentations", "Ezekiel", "Daniel", "Hosea", "Joel", "Amos", "Obadiah",
                 "Jonah", "Micah", "Nahum", "Habakkuk", "Zephaniah", "Haggai", "Zechariah", "Malachi", "Revelation"),
    "gospels": ("Matthew", "Mark", "Luke", "John"),
    "epistles": ("Romans", "1 Corinthians", "2 Corinthians", "Galatians", "Ephesians", "Philippians", "Colossians",
                 "1 Thessalonians", "2 Thessalonians", "1 Timothy", "2 Timothy", "Titus", "Philemon", "Hebrews",
                 "James", "1 Peter", "2 Peter", "1 John", "2 John", "3 John", "Jude"),
}
GENRE_OF = {book: genre for genre, books in GENRES.items() for book in books}
#: books whose verses are the test side (≥ 1 per class); every other book is the training side
TEST_BOOKS = ("Deuteronomy", "2 Kings", "Nehemiah", "Acts", "Proverbs", "Jeremiah", "Amos", "Revelation", "John",
              "Hebrews", "1 Peter", "1 John")


@dataclass
class Labelled:
    texts: list[str]
    labels: list[str]
    source: str
    lang: str = ""


def read_labelled(path: str | Path) -> Labelled:
    """``label<TAB>text`` lines (MLDoc's format), with file:line errors."""
    path = Path(path)
    texts, labels = [], []
    for i, line in enumerate(read_lines(path), 1):
        if not line.strip():
            raise InputFormatError(path, i, "blank line", "remove it: one label<TAB>text a line")
        if "\t" not in line:
            raise InputFormatError(path, i, "no tab between label and text", "write label<TAB>text")
        label, text = line.split("\t", 1)
        if not label.strip() or not text.strip():
            raise InputFormatError(path, i, "empty label or text", "write label<TAB>text, both non-empty")
        labels.append(label.strip())
        texts.append(text.strip())
    return Labelled(texts, labels, str(path))


def _cap(rows: list[tuple[str, str]], per_class: int, seed: int) -> list[tuple[str, str]]:
    import random

    if not per_class:
        return rows
    out = []
    for genre in GENRES:
        mine = [r for r in rows if r[0] == genre]
        random.Random(f"{seed}-{genre}").shuffle(mine)
        out += mine[:per_class]
    return out


def bible_genre(per_class: int = 500, seed: int = 0) -> dict[str, Labelled]:
    """The bundled task: ``train`` (English, training books), ``test`` (Chichewa, test books) and
    ``train_target`` (Chichewa, training books: the in-language upper bound)."""
    from xlsent.data.sets import registry

    verses = [r for name in ("bible-en-ny:train", "bible-en-ny:test") for r in registry.load(name, "pairs")]
    train = [(GENRE_OF[r["book"]], r["src"], r["tgt"]) for r in verses if r["book"] not in TEST_BOOKS]
    test = [(GENRE_OF[r["book"]], r["src"], r["tgt"]) for r in verses if r["book"] in TEST_BOOKS]

    def side(rows, col: int, lang: str, what: str) -> Labelled:
        kept = _cap([(r[0], r[col]) for r in rows], per_class, seed)
        return Labelled([t for _, t in kept], [g for g, _ in kept], f"bible-genre:{what}", lang)

    return {"train": side(train, 1, "en", "train (eng)"), "test": side(test, 2, "ny", "test (nya)"),
            "train_target": side(train, 2, "ny", "train (nya)")}


def bundled_labelled(name: str, per_class: int = 500, seed: int = 0) -> dict[str, Labelled]:
    """The registry's loader: ``bible-genre`` (:func:`bible_genre`)."""
    from xlsent.utils.errors import XlsentError

    if name != "bible-genre":
        raise XlsentError(f"unknown classification task '{name}' — the bundled one is bible-genre")
    return bible_genre(per_class, seed)
