"""Parallel pairs for training and evaluation: one entry point for a dataset name or a pairs file.

* :func:`load_pairs` — ``--pairs FILE`` / ``--dataset NAME``: read (:mod:`xlsent.data.formats.readers` or
  :mod:`xlsent.data.sets.bundled`), clean with every filter counted (:mod:`xlsent.data.filters.cleaning`), and
  optionally draw a seeded sample; several sources, comma-separated (``bible-en-ny:train,udhr-all:dev,my.tsv``;
  :func:`split_sources`), are each read, cleaned and sampled on their own, reported per source, and joined, every
  row keeping its own languages;
* :func:`load_train_pairs` — the same from a recipe config's ``train:`` section, split into the
  English side and the other side;
* :func:`english_side` / :func:`section_keys` — which column is English, and the (document,
  section) structure of a corpus where it has one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from xlsent.data.filters.cleaning import CleanReport, clean_pairs
from xlsent.data.formats.readers import read_pairs
from xlsent.data.sets.bundled import is_bundled, load_bundled
from xlsent.utils.errors import XlsentError


def is_english(lang: str | None) -> bool:
    """``en``, ``eng``, ``en-GB`` … (ISO 639-1 or 639-3, any region)."""
    code = (lang or "").lower().replace("_", "-").split("-")[0]
    return code in ("en", "eng")


#: a file named so is a pairs file, never one half of a Moses pair
_PAIRS_FILE_SUFFIXES = (".tsv", ".jsonl", ".json", ".csv")


def _moses_half(part: str) -> bool:
    """A file of one sentence a line (no tab, no JSON object on its first line, no pairs-file suffix): one side
    of a Moses pair ``A,B``."""
    p = Path(part).expanduser()
    if is_bundled(part) or not p.is_file() or p.name.lower().removesuffix(".gz").endswith(_PAIRS_FILE_SUFFIXES):
        return False
    try:
        if p.name.endswith(".gz"):
            import gzip

            with gzip.open(p, "rt", encoding="utf-8", errors="replace") as f:
                first = f.readline()
        else:
            with open(p, encoding="utf-8", errors="replace") as f:
                first = f.readline()
    except OSError:
        return False
    return "\t" not in first and not first.lstrip().startswith("{")


def split_sources(spec: str) -> list[str]:
    """The sources of a pairs spec: one name or file, or several comma-separated (bundled names and files).
    Two neighbouring files of one sentence a line are one Moses pair ``A,B``, as a lone ``A,B`` always was; a
    spec that is itself a bundled name or an existing path is one source."""
    spec = str(spec)
    if "," not in spec or is_bundled(spec) or Path(spec).exists():
        return [spec]
    parts = [x.strip() for x in spec.split(",")]
    if not all(parts):
        raise XlsentError(f"pairs {spec!r}: an empty source between commas — write NAME,NAME,… with no empty part")
    out, i = [], 0
    while i < len(parts):
        if i + 1 < len(parts) and _moses_half(parts[i]) and _moses_half(parts[i + 1]):
            out.append(f"{parts[i]},{parts[i + 1]}")
            i += 2
        else:
            out.append(parts[i])
            i += 1
    return out


def bad_source(spec: str) -> str | None:
    """The first source of ``spec`` (:func:`split_sources`) that is neither a bundled name nor an existing file
    (each file of a Moses pair checked), else None."""
    for part in split_sources(spec):
        if is_bundled(part) or Path(part).expanduser().is_file():
            continue
        if "," in part and all(Path(x).expanduser().is_file() for x in part.split(",", 1)):
            continue
        return part
    return None


@dataclass
class LoadedPairs:
    dataset: object
    source: str
    read_notes: list[str] = field(default_factory=list)
    clean: CleanReport | None = None
    #: several sources: each one as loaded on its own (its cleaning, its notes), in the order given
    parts: list["LoadedPairs"] = field(default_factory=list)

    def notes(self) -> list[str]:
        out = list(self.read_notes)
        if self.parts:
            return out + [x for p in self.parts for x in [*p.notes(), p.count_line()]]
        if self.clean:
            out += [f"{self.source}: filter {n} removed {r} ({w})" for n, r, w in self.clean.steps]
        return out

    def count_line(self, shown: int = 8) -> str:
        """``SOURCE: N pairs (eng/nya)`` — one source's pairs after its cleaning and sampling, and its languages."""
        langs = _source_languages(self.dataset)
        more = f"/… {len(langs) - shown} more" if len(langs) > shown else ""
        return f"{self.source}: {len(self.dataset)} pairs ({'/'.join(langs[:shown]) + more or 'languages unknown'})"


def load_pairs(
    spec: str,
    on_bad_lines: str = "error",
    min_words: int | None = None,
    max_words: int | None = None,
    special_pattern: str | None = None,
    dedupe: bool = True,
    sample: int = 0,
    seed: int = 0,
    file_sample: int | None = None,
) -> LoadedPairs:
    """Read a dataset name or pairs file, clean it (every filter counted), optionally sample ``sample`` pairs
    (``file_sample`` instead from a source that is a file, when given: a recipe draws from bundled sets, and uses a
    user's file whole unless told otherwise).

    Several sources, comma-separated (:func:`split_sources`): every one is checked before any is read (a bad one
    is one line naming it), then each is read, cleaned and sampled (``sample`` pairs from each) on its own; the
    result joins them (:func:`join_sources`), its ``parts`` keep each source's own report."""
    sources = split_sources(spec)

    def drawn(source: str) -> int:
        return sample if file_sample is None or is_bundled(source) else file_sample

    if len(sources) == 1:
        return _load_one(sources[0], on_bad_lines, min_words, max_words, special_pattern, dedupe, drawn(sources[0]),
                         seed)
    bad = bad_source(spec)
    if bad is not None:
        raise XlsentError(f"pairs source {bad!r} (of {spec!r}): no such file and not a bundled dataset — give "
                          "pairs files (TSV, JSONL or Moses A,B) or bundled names (xlsent data list), "
                          "comma-separated")
    parts = [_load_one(x, on_bad_lines, min_words, max_words, special_pattern, dedupe, drawn(x), seed)
             for x in sources]
    total = CleanReport(sum(p.clean.rows_in for p in parts), sum(p.clean.rows_out for p in parts))
    steps: dict[str, list] = {}
    for p in parts:
        for n, r, w in p.clean.steps:
            steps.setdefault(n, [n, 0, w])[1] += r
    total.steps = [tuple(x) for x in steps.values()]
    return LoadedPairs(join_sources(parts), str(spec), [], total, parts)


def _source_languages(ds) -> list[str]:
    """The languages of a source's rows, both sides (stated per row, else detected), in order of appearance."""
    sl, tl = side_langs(ds)
    seen: dict[str, None] = {}
    for col, code in (("src_lang", sl), ("tgt_lang", tl)):
        values = ds[col] if col in ds.column_names else []
        for v in dict.fromkeys(values) if len(values) else [code]:
            if v or code:
                seen[v or code] = None
    return list(seen)


def join_sources(parts: list[LoadedPairs]):
    """One dataset of several sources' pairs: columns ``src``, ``tgt``, ``src_lang``, ``tgt_lang`` (each row's own
    codes — a file's stated or detected ones where a row states none) and ``source``; every source turned so that
    its English side is in the column where the first source has it (:func:`english_side`)."""
    from datasets import Dataset

    cols: dict[str, list] = {"src": [], "tgt": [], "src_lang": [], "tgt_lang": [], "source": []}
    first_en = None
    for p in parts:
        ds = p.dataset
        sl, tl = side_langs(ds)
        en_col = english_side(ds)[1]
        first_en = first_en or en_col
        langs = {c: [x or code for x in ds[c]] if c in ds.column_names else [code] * len(ds)
                 for c, code in (("src_lang", sl), ("tgt_lang", tl))}
        flip = en_col != first_en
        cols["src"] += list(ds["tgt" if flip else "src"])
        cols["tgt"] += list(ds["src" if flip else "tgt"])
        cols["src_lang"] += langs["tgt_lang" if flip else "src_lang"]
        cols["tgt_lang"] += langs["src_lang" if flip else "tgt_lang"]
        cols["source"] += [p.source] * len(ds)
    return Dataset.from_dict(cols)


def _load_one(
    spec: str,
    on_bad_lines: str = "error",
    min_words: int | None = None,
    max_words: int | None = None,
    special_pattern: str | None = None,
    dedupe: bool = True,
    sample: int = 0,
    seed: int = 0,
) -> LoadedPairs:
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
    #: each row's language, the non-English side's code (the source's name where it has none): what
    #: temperature sampling and the held-out part's strata group by
    languages: list[str] = field(default_factory=list)
    #: several sources: ``{"pairs": name, "examples": n, "languages": [...]}`` for each, in the order given
    sources: list[dict] = field(default_factory=list)

    def summary(self) -> dict:
        """What a run trained on, for its record and model card: source, pair count, languages, notes."""
        sl, tl = side_langs(self.dataset)
        out = {"pairs": self.source, "examples": len(self.english), "languages": [x for x in (sl, tl) if x],
               "notes": self.notes}
        if self.sources or len(set(self.languages)) > 1:
            out["languages"] = _source_languages(self.dataset)
        if self.sources:
            out["sources"] = self.sources
        return out


#: the share of a user's training file the cleaning may remove before a warning says so
WARN_CLEANED_SHARE = 0.10


def load_train_pairs(train: dict, seed: int) -> TrainPairs:
    """The pairs a recipe trains on, from its config's ``train:`` section (``pairs``, ``on_bad_lines``,
    ``min_words``, ``max_words``, ``special_pattern``, ``sample``); exact duplicates are removed.

    ``pairs`` may name several sources, comma-separated (:func:`load_pairs`): each is cleaned and sampled on its
    own and reported per source, every row keeps its own languages (``languages``: the non-English side's, per
    row), and each source is turned so that English is on one side for all."""
    loaded = load_pairs(train["pairs"], train["on_bad_lines"], train["min_words"], train["max_words"],
                        train["special_pattern"], True, train["sample"], seed,
                        file_sample=int(train.get("sample_files", 0) or 0))
    ds = loaded.dataset
    for part in loaded.parts or [loaded]:
        clean = part.clean
        if not (clean and clean.rows_in) or is_bundled(part.source):
            continue
        removed = [(n, r) for n, r, _ in clean.steps if r]
        share = 1 - clean.rows_out / clean.rows_in
        if share > WARN_CLEANED_SHARE:
            import warnings

            warnings.warn(f"{part.source}: the cleaning removed {share:.0%} of the pairs (more than "
                          f"{WARN_CLEANED_SHARE:.0%}: " + ", ".join(f"{n} {r}" for n, r in removed) + ") — if they "
                          "are real pairs, loosen train.min_words / train.max_words / train.special_pattern "
                          "(--set train.min_words=0)", stacklevel=2)
    if len(ds) < 2:
        raise XlsentError(f"{train['pairs']}: only {len(ds)} pair(s) left after cleaning — need at least 2")
    other_col, en_col = english_side(ds)
    sources = [{"pairs": p.source, "examples": len(p.dataset), "languages": _source_languages(p.dataset)}
               for p in loaded.parts]
    return TrainPairs(list(ds[en_col]), list(ds[other_col]), ds, other_col, loaded.notes(), str(train["pairs"]),
                      row_languages(ds, other_col, str(train["pairs"])), sources)


def other_language(ds, other_col: str | None = None) -> str:
    """The language code of the non-English side (``other_col``, else :func:`english_side`'s), stated or detected;
    ``""`` where neither."""
    return side_langs(ds)[0 if (other_col or english_side(ds)[0]) == "src" else 1]


def row_languages(ds, other_col: str, source: str = "") -> list[str]:
    """Each row's language: the code its non-English side (``other_col``) states, else the dataset's stated or
    detected code for that side, else the row's source (``source`` column, else ``source``)."""
    code = other_language(ds, other_col)
    col = f"{other_col}_lang"
    n = len(ds)
    stated = list(ds[col]) if col in ds.column_names else [""] * n
    where = list(ds["source"]) if "source" in ds.column_names else [source] * n
    return [s or code or w for s, w in zip(stated, where)]


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


def write_pairs_jsonl(path: str | Path, ds, rows=None) -> None:
    """Write the pairs ``ds`` (its ``rows`` only, when given: indices) as JSONL, atomically: ``src``, ``tgt`` and each
    row's own ``src_lang`` / ``tgt_lang`` (else the dataset's stated or detected codes) — a file that
    ``load_pairs`` and every ``PAIRS`` argument read back."""
    import json

    from xlsent.utils.io import write_text_atomic

    sl, tl = side_langs(ds)
    src, tgt = ds["src"], ds["tgt"]
    cols = ds.column_names
    s_col = ds["src_lang"] if "src_lang" in cols else None
    t_col = ds["tgt_lang"] if "tgt_lang" in cols else None
    keep = range(len(src)) if rows is None else [int(i) for i in rows]
    lines = [json.dumps({"src": src[i], "tgt": tgt[i], "src_lang": (s_col[i] if s_col is not None else "") or sl,
                         "tgt_lang": (t_col[i] if t_col is not None else "") or tl}, ensure_ascii=False)
             for i in keep]
    write_text_atomic(path, "".join(x + "\n" for x in lines))


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
