"""Comparable documents with titled sections, and sentence pairs and triplets built from them
(Manafi 2025, §3.2.1).

**Format** — JSONL, one document per line::

    {"id": "Q42", "lang": "fa", "title": "...", "sections": [{"title": "...", "text": "..."}, ...]}

The same ``id`` in the two languages' files marks the same document (a Wikipedia page and its
interlanguage link). Bundled ready-made documents: ``bible:eng`` / ``bible:nya`` (one document per
book, its chapters as sections, verses joined into the text) and ``udhr:eng`` / ``udhr:CODE``
(one document, its articles as sections). Their section titles are language-neutral labels
("Matthew 5", "Article 3"; the bundled files carry no translated titles), so title matching is
exact on them.

**Pairs from documents** (:func:`pairs_from_documents`), the paper's procedure:

1. clean titles and texts: NFC, collapsed whitespace, zero-width non-joiner (U+200C) removed
   (``strip_chars``);
2. match section titles of each document pair one-to-one by embedding cosine ≥ ``title_threshold``
   (0.7): all pairs above the threshold, highest first, each title used once — not the order
   of appearance;
3. keep matched sections whose texts both have more than ``min_section_chars`` (200) characters;
4. split both texts into sentences and pair the n-th with the n-th;
5. drop pairs where either sentence has ≤ ``max_short_words`` (10) words. The paper filters
   "sentences that contained 10 or fewer words" without saying whether before or after the
   n-th-sentence pairing; xlsent pairs first, so removing a short sentence does not shift
   every later pair by one;
6. the negative of each pair: an English (target-side) sentence drawn at random (seeded) from
   another section of the same document; a document with one matched section gives no
   negatives, and the count of pairs without one is reported.

Every step reports what it removed and why.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from xlsent.data.filters.cleaning import count_words, normalize_text
from xlsent.data.formats.readers import read_lines
from xlsent.data.formats.text_source import load_json_line
from xlsent.data.text.splitting import split_sentences
from xlsent.similarity import greedy_one_to_one
from xlsent.utils.errors import InputFormatError, XlsentError
from xlsent.utils.text import FIX as NOT_UNICODE_FIX
from xlsent.utils.text import shown, unencodable_problem


@dataclass
class Section:
    title: str
    text: str


@dataclass
class Document:
    id: str
    lang: str
    title: str
    sections: list[Section]


def clean(text: str, strip_chars: str = "\u200c") -> str:
    for ch in strip_chars:
        text = text.replace(ch, "")
    return normalize_text(text)


def read_documents(path: str | Path) -> list[Document]:
    """Documents of a JSONL file, with file:line errors for anything malformed."""
    path = Path(path)
    docs, seen = [], {}
    for n, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        fix = 'write {"id", "lang", "title", "sections": [{"title", "text"}, ...]} on each line'
        obj, problem = load_json_line(line)
        if problem:
            raise InputFormatError(path, n, problem, fix)
        problem = unencodable_problem(obj)
        if problem:
            raise InputFormatError(path, n, problem, NOT_UNICODE_FIX)
        if not isinstance(obj, dict):
            raise InputFormatError(path, n, "not a JSON object", fix)
        for key in ("id", "lang"):
            if not isinstance(obj.get(key), str) or not obj[key].strip():
                raise InputFormatError(path, n, f"missing or empty '{key}'", fix)
        sections = obj.get("sections")
        if not isinstance(sections, list) or not sections:
            raise InputFormatError(path, n, f"document {shown(obj['id'])} has no sections", "give at least one section")
        out = []
        for j, s in enumerate(sections, 1):
            if not isinstance(s, dict) or not isinstance(s.get("title"), str) or not s["title"].strip():
                raise InputFormatError(path, n, f"section {j} of document {shown(obj['id'])} has no title",
                                       "give every section a non-empty \"title\"")
            if not isinstance(s.get("text"), str):
                raise InputFormatError(path, n, f"section {j} of document {shown(obj['id'])} has no text",
                                       "give every section a \"text\" string")
            out.append(Section(s["title"], s["text"]))
        if obj["id"] in seen:
            raise InputFormatError(path, n, f"document id {shown(obj['id'])} already on line {seen[obj['id']]}",
                                   "give each document one line")
        seen[obj["id"]] = n
        docs.append(Document(obj["id"], obj["lang"], str(obj.get("title") or ""), out))
    if not docs:
        raise InputFormatError(path, None, "no document in the file", "give one JSON document per line")
    return docs


def bundled_documents(name: str) -> list[Document]:
    """``bible:eng``, ``bible:nya`` (books with chapters as sections), ``udhr:eng``, ``udhr:CODE`` (articles)."""
    from xlsent.data.sets import registry
    from xlsent.data.sets.bundled import load_bundled

    base, _, lang = name.partition(":")
    if base == "bible" and lang in ("eng", "nya"):
        rows = [dict(r) for split in ("train", "test") for r in registry.load(f"bible-en-ny:{split}", "pairs")]
        side = "src" if lang == "eng" else "tgt"
        books: dict[str, dict[int, list[str]]] = {}
        for r in rows:
            books.setdefault(r["book"], {}).setdefault(int(r["chapter"]), []).append(r[side])
        return [Document(b, lang, b, [Section(f"{b} {c}", " ".join(v)) for c, v in sorted(ch.items())])
                for b, ch in books.items()]
    if base == "udhr" and lang:
        code = "spa" if lang == "eng" else lang  # English comes with every language; any one gives it whole
        side = "src" if lang == "eng" else "tgt"
        arts: dict[str, list[str]] = {}
        for r in load_bundled(f"udhr:{code}"):
            head = r["id"].split(".")[0]
            arts.setdefault("Preamble" if head == "preamble" else f"Article {head}", []).append(r[side])
        return [Document("udhr", lang, "Universal Declaration of Human Rights",
                         [Section(t, " ".join(p)) for t, p in arts.items()])]
    raise XlsentError(f"unknown bundled documents '{name}': use bible:eng, bible:nya, udhr:eng or udhr:CODE")


def bundled_units(name: str) -> tuple[list[str], list[str], str, str]:
    """The registry's loader of document-matching units: (src texts, tgt texts, src lang, tgt lang) of
    ``bible-chapters`` (the New-Testament chapters, verses joined) or ``udhr-articles:CODE`` (the preamble and
    articles, English ↔ CODE)."""
    if name == "bible-chapters":
        from xlsent.data.sets import registry

        chapters: dict[tuple[str, int], tuple[list[str], list[str]]] = {}
        for r in registry.load("bible-en-ny:test", "pairs"):
            en, ny = chapters.setdefault((r["book"], int(r["chapter"])), ([], []))
            en.append(r["src"])
            ny.append(r["tgt"])
        return [" ".join(e) for e, _ in chapters.values()], [" ".join(n) for _, n in chapters.values()], "eng", "nya"
    base, _, code = name.partition(":")
    if base == "udhr-articles" and code:
        en, xx = bundled_documents("udhr:eng")[0], bundled_documents(f"udhr:{code}")[0]
        titles = [s.title for s in xx.sections]
        en_by_title = {s.title: s.text for s in en.sections}
        return [en_by_title[t] for t in titles], [s.text for s in xx.sections], "eng", code
    raise XlsentError(f"unknown bundled documents '{name}': use bible-chapters or udhr-articles:CODE")


def load_documents(spec: str) -> list[Document]:
    """A JSONL file, or a bundled name (``bible:nya``, ``udhr:zul`` …)."""
    return read_documents(spec) if Path(spec).exists() or spec.endswith(".jsonl") else bundled_documents(spec)


def match_titles(sims: np.ndarray, threshold: float = 0.7) -> list[tuple[int, int, float]]:
    """One-to-one (i, j, cos) over a src × tgt title similarity matrix: pairs ≥ threshold, highest first
    (ties: lower i, then lower j) — the same greedy rule as mining's one-to-one selection."""
    i, j = np.nonzero(sims >= threshold)
    s = sims[i, j]
    return [(int(i[n]), int(j[n]), float(s[n])) for n in greedy_one_to_one(i, j, s)]


@dataclass
class DocumentPairs:
    triplets: list[tuple[str, str, str | None]] = field(default_factory=list)  # (anchor src, positive tgt, negative)
    sources: list[tuple[str, str, str]] = field(default_factory=list)  # (document id, src title, tgt title)
    counts: Counter = field(default_factory=Counter)

    def lines(self) -> list[str]:
        return [f"{k}: {v}" for k, v in self.counts.items()]


def pairs_from_documents(src_docs: list[Document], tgt_docs: list[Document], encode, title_threshold: float = 0.7,
                         min_section_chars: int = 200, max_short_words: int = 10, strip_chars: str = "\u200c",
                         splitter: str = "auto", seed: int = 0) -> DocumentPairs:
    """Sentence pairs (+ negatives from other sections) from documents matched by id; ``encode`` embeds titles
    (L2-normalised rows) with ``encode(texts, lang)``."""
    src_langs, tgt_langs = {d.lang for d in src_docs}, {d.lang for d in tgt_docs}
    if len(src_langs) != 1 or len(tgt_langs) != 1:
        raise XlsentError(f"each side must be one language: the source files hold {sorted(src_langs)}, "
                          f"the target files {sorted(tgt_langs)}")
    if src_langs == tgt_langs:
        raise XlsentError(f"both sides are '{next(iter(src_langs))}': give documents in two languages")
    src_lang, tgt_lang = next(iter(src_langs)), next(iter(tgt_langs))
    rng = random.Random(seed)
    out = DocumentPairs()
    by_id = {d.id: d for d in tgt_docs}
    out.counts["documents without a counterpart (skipped)"] = sum(d.id not in by_id for d in src_docs)
    for sd in src_docs:
        td = by_id.get(sd.id)
        if td is None:
            continue
        s_titles = [clean(s.title, strip_chars) for s in sd.sections]
        t_titles = [clean(s.title, strip_chars) for s in td.sections]
        sims = encode(s_titles, src_lang) @ encode(t_titles, tgt_lang).T
        matches = match_titles(sims, title_threshold)
        out.counts["section pairs matched by title"] += len(matches)
        out.counts[f"sections left unmatched (title cosine < {title_threshold} or taken)"] += (
            len(s_titles) + len(t_titles) - 2 * len(matches))
        kept = []
        for i, j, _ in matches:
            a, b = clean(sd.sections[i].text, strip_chars), clean(td.sections[j].text, strip_chars)
            if len(a) <= min_section_chars or len(b) <= min_section_chars:
                out.counts[f"section pairs dropped: a text of ≤ {min_section_chars} characters"] += 1
                continue
            kept.append((i, j, split_sentences(a, src_lang, splitter), split_sentences(b, tgt_lang, splitter)))
        for n, (i, j, ss, ts) in enumerate(kept):
            others = [t for m, (_, _, _, ot) in enumerate(kept) if m != n for t in ot]
            out.counts["sentences without a partner (the other section is shorter)"] += abs(len(ss) - len(ts))
            for a, b in zip(ss, ts):
                if count_words(a) <= max_short_words or count_words(b) <= max_short_words:
                    out.counts[f"sentence pairs dropped: a side of ≤ {max_short_words} words"] += 1
                    continue
                neg = rng.choice(others) if others else None
                if neg is None:
                    out.counts["pairs without a negative (the document has one kept section)"] += 1
                out.triplets.append((a, b, neg))
                out.sources.append((sd.id, sd.sections[i].title, td.sections[j].title))
    out.counts["sentence pairs kept"] = len(out.triplets)
    return out
