"""Parallel pairs for training and evaluation: one entry point for a dataset name or a pairs file.

* :func:`load_pairs` — ``--pairs FILE`` / ``--dataset NAME``: read (:mod:`xlsent.data.readers` or
  :mod:`xlsent.data.bundled`), clean with every filter counted (:mod:`xlsent.data.cleaning`), and
  optionally draw a seeded sample;
* :func:`load_train_pairs` — the same from a recipe config's ``train:`` section, split into the
  English side and the other side;
* :func:`english_side` / :func:`section_keys` — which column is English, and the (document,
  section) structure of a corpus where it has one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xlsent.data.bundled import is_bundled, load_bundled
from xlsent.data.cleaning import CleanReport, clean_pairs
from xlsent.data.readers import read_pairs
from xlsent.utils.errors import XlsentError


def is_english(lang: str | None) -> bool:
    """``en``, ``eng``, ``en-GB`` … (ISO 639-1 or 639-3, any region)."""
    code = (lang or "").lower().replace("_", "-").split("-")[0]
    return code in ("en", "eng")


@dataclass
class LoadedPairs:
    dataset: object
    source: str
    read_notes: list[str] = field(default_factory=list)
    clean: CleanReport | None = None

    def notes(self) -> list[str]:
        out = list(self.read_notes)
        if self.clean:
            out += [f"{self.source}: filter {n} removed {r} ({w})" for n, r, w in self.clean.steps]
        return out


def load_pairs(
    spec: str,
    on_bad_lines: str = "error",
    min_words: int | None = None,
    max_words: int | None = None,
    special_pattern: str | None = None,
    dedupe: bool = True,
    sample: int = 0,
    seed: int = 0,
) -> LoadedPairs:
    """Read a dataset name or pairs file, clean it (every filter counted), optionally sample ``sample`` pairs."""
    if is_bundled(spec):
        ds, notes = load_bundled(spec), []
    else:
        ds, report = read_pairs(spec, on_bad_lines)
        notes = report.lines() + [f"{spec}: {n}" for n in detected_languages(ds)[2]]
    ds, clean = clean_pairs(ds, min_words=min_words or None, max_words=max_words or None,
                            special_pattern=special_pattern or None, dedupe=dedupe)
    if sample and sample < len(ds):
        ds = ds.shuffle(seed=seed).select(range(sample))
        notes.append(f"{spec}: sampled {sample} of {clean.rows_out} cleaned pairs (seed {seed})")
    return LoadedPairs(ds, spec, notes, clean)


@dataclass
class TrainPairs:
    """English side, other side, the cleaned dataset and the cleaning/sampling notes."""

    english: list[str]
    other: list[str]
    dataset: object
    other_column: str = "tgt"
    notes: list[str] = field(default_factory=list)
    source: str = ""

    def summary(self) -> dict:
        """What a run trained on, for its record and model card: source, pair count, languages, notes."""
        sl, tl = side_langs(self.dataset)
        return {"pairs": self.source, "examples": len(self.english), "languages": [x for x in (sl, tl) if x],
                "notes": self.notes}


#: the share of a user's training file the cleaning may remove before a warning says so
WARN_CLEANED_SHARE = 0.10


def load_train_pairs(train: dict, seed: int) -> TrainPairs:
    """The pairs a recipe trains on, from its config's ``train:`` section (``pairs``, ``on_bad_lines``,
    ``min_words``, ``max_words``, ``special_pattern``, ``sample``); exact duplicates are removed."""
    loaded = load_pairs(train["pairs"], train["on_bad_lines"], train["min_words"], train["max_words"],
                        train["special_pattern"], True, train["sample"], seed)
    ds = loaded.dataset
    clean = loaded.clean
    if clean and clean.rows_in and not is_bundled(str(train["pairs"])):
        removed = [(n, r) for n, r, _ in clean.steps if r]
        share = 1 - clean.rows_out / clean.rows_in
        if share > WARN_CLEANED_SHARE:
            import warnings

            warnings.warn(f"{train['pairs']}: the cleaning removed {share:.0%} of the pairs (more than "
                          f"{WARN_CLEANED_SHARE:.0%}: " + ", ".join(f"{n} {r}" for n, r in removed) + ") — if they "
                          "are real pairs, loosen train.min_words / train.max_words / train.special_pattern "
                          "(--set train.min_words=0)", stacklevel=2)
    if len(ds) < 2:
        raise XlsentError(f"{train['pairs']}: only {len(ds)} pair(s) left after cleaning — need at least 2")
    other_col, en_col = english_side(ds)
    return TrainPairs(list(ds[en_col]), list(ds[other_col]), ds, other_col, loaded.notes(), str(train["pairs"]))


def file_languages(ds) -> tuple[str, str]:
    """The (source, target) language codes a pairs file states in its first row ("" where it states none)."""
    def code(col: str) -> str:
        return (ds[col][0] if col in ds.column_names and len(ds) else "") or ""

    return code("src_lang"), code("tgt_lang")


_DETECTED: dict[str, tuple[str, str, list[str]]] = {}


def _codes(ds) -> tuple[str, str]:
    return detected_languages(ds)[:2]


def detected_languages(ds) -> tuple[str, str, list[str]]:
    """(source code, target code, notes): the codes the file states; a side without one has its language
    detected from a sample of its lines (:func:`xlsent.data.langid.detect_side`), said in the notes, and left
    "" when no language holds a clear majority — never guessed."""
    stated = file_languages(ds)
    if all(stated) or not len(ds):
        return (*stated, [])
    key = getattr(ds, "_fingerprint", None)
    if key and key in _DETECTED:
        return _DETECTED[key]
    from xlsent.data.langid import detect_side

    codes, notes = list(stated), []
    for i, side in enumerate(("src", "tgt")):
        if not codes[i]:
            found = detect_side(list(ds[side][:2000]))
            codes[i] = found.lang or ""
            notes.append(f"no language code for the {side} side: " + (
                f"detected {found.lang} ({found.share:.0%} of {found.sampled} sampled lines)" if found.lang else
                "not detected — its direction is reported as src→tgt / tgt→src"))
    out = (codes[0], codes[1], notes)
    if key:
        _DETECTED[key] = out
    return out


def english_side(ds) -> tuple[str, str]:
    """(other column, English column): the non-English side is the anchor. A side is English when the file says
    so or its lines are detected as English; when neither side is, the target is taken as the anchor — a role
    for training only: reports then label directions src→tgt and tgt→src."""
    src_lang, tgt_lang = _codes(ds)
    if is_english(tgt_lang) and not is_english(src_lang):
        return "src", "tgt"
    return "tgt", "src"


def side_langs(ds) -> tuple[str, str]:
    """(source, target) language codes of a pairs dataset, stated or detected ("" where neither): for encoding
    (a word-gloss encoder leaves English alone and glosses the rest) and for labelling directions."""
    return _codes(ds)


def section_keys(ds) -> list[tuple[str, str]] | None:
    """(document, section) of every row, or None when the corpus has no such structure."""
    cols = ds.column_names
    if {"book", "chapter"} <= set(cols):  # Bible: book = document, chapter = section
        return [(str(b), str(c)) for b, c in zip(ds["book"], ds["chapter"])]
    if "udhr_code" in cols and "id" in cols:  # UDHR: declaration = document, article = section
        return [(str(code), str(i).split(".")[0]) for code, i in zip(ds["udhr_code"], ds["id"])]
    if {"doc", "section"} <= set(cols):
        return [(str(d), str(s)) for d, s in zip(ds["doc"], ds["section"])]
    return None
