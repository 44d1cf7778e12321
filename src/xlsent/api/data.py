"""Corpus tools behind ``xlsent data``: what a test set shares with a training set, and the structural-word spans
the SCP recipe trains on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from xlsent.api._common import Note, at_least, choice, output_file, writes
from xlsent.utils.errors import XlsentError


def overlap(train: str | Path, test: str | Path, model: str = "e5-small", text: bool = False,
            max_pieces: int = 128) -> dict:
    """How much ``test`` shares with ``train`` (Manafi 2025): for tagged sets (CoNLL files or bundled names) the
    entity overlap (Table 3.3, key ``entity``), and for every kind the word overlap under ``model``'s tokenizer
    (Table 3.4, key ``word``; the first ``max_pieces`` pieces of each text). ``text``: the files are plain text,
    one a line, or title-selection files (``text<TAB>gold<TAB>distractor…``)."""
    from xlsent.perturbations.overlap import entity_overlap, word_overlap

    if text:
        from xlsent.data.multiple_choice import read_choices

        def texts(path) -> list[str]:
            p = Path(path)
            if not p.is_file():
                raise XlsentError(f"{p}: no such file — check the path")
            first = p.read_text(encoding="utf-8").splitlines()
            return read_choices(p).texts if first and "\t" in first[0] else [x for x in first if x.strip()]

        tr, te, out = texts(train), texts(test), {}
    else:
        from xlsent.data.tagging import load_tagged

        a, b = load_tagged(str(train)), load_tagged(str(test))
        tr, te = [" ".join(t) for t in a.tokens], [" ".join(t) for t in b.tokens]
        out = {"entity": entity_overlap(a, b)}
    from transformers import AutoTokenizer

    from xlsent.models.handle import transformer_subfolder
    from xlsent.models.registry import resolve_model_path

    root = resolve_model_path(model)
    out["word"] = word_overlap(AutoTokenizer.from_pretrained(str(root / transformer_subfolder(root))), tr, te,
                               max_pieces)
    return out


@writes("output")
def structural_words(pairs: str, output: str | Path, model: str = "e5-small", types: Sequence[str] | None = None,
                     object_deps: Sequence[str] = ("dobj",), sample: int = 0, seed: int = 0,
                     on_bad_lines: str = "error", on_note: Note = None,
                     on_progress: Callable[[str, int, int], None] | None = None) -> dict:
    """Subject, verb, object and entity spans of the English side of ``pairs``, aligned to the other side (Chen et
    al. 2023 §3.1: spaCy, the paper's filters, eflomal), with ``model``'s sub-token offsets; written to ``output``
    (``SPANS.jsonl[.gz]``) and ``SPANS.jsonl.meta.json``, whose dict is returned. Every filter and drop is
    counted in the notes. ``on_progress(stage, done, total)`` follows the parse."""
    from xlsent.data import structural as sw
    from xlsent.data.pairs import english_side, load_pairs, side_langs
    from xlsent.data.stopwords import stopwords_for

    note = on_note or (lambda line: None)
    output_file(output)
    kinds = tuple(sw.TYPES if types is None else types)
    for t in kinds:
        choice(t, sw.TYPES, "types")
    if not kinds:
        raise XlsentError("types=: give at least one of " + ", ".join(sw.TYPES))
    at_least(sample, 0, "sample")
    loaded = load_pairs(pairs, on_bad_lines=on_bad_lines, sample=sample, seed=seed)
    for n in loaded.notes():
        note(n)
    ds: Any = loaded.dataset
    other_col, en_col = english_side(ds)
    langs = dict(zip(("src", "tgt"), side_langs(ds)))
    if langs[en_col] not in ("en", "eng", ""):
        raise XlsentError(f"{pairs}: neither side is marked English (languages {langs['src']!r}, {langs['tgt']!r}) — "
                          "structural words are found with spaCy's English pipeline")
    english, other = list(ds[en_col]), list(ds[other_col])
    from xlsent.models.handle import load_model

    handle = load_model(model)  # before the long parse: a wrong model fails now
    done = [0]

    def advance(k: int) -> None:
        done[0] += k
        if on_progress is not None:
            on_progress("spaCy parse (English side)", done[0], len(english))

    parses = sw.parse_english(english, progress=advance)
    stop, stop_note = stopwords_for("en")
    note("aligning with eflomal …")
    records, counts = sw.extract(english, other, parses, stop, tuple(object_deps), kinds)
    if not records:
        raise XlsentError(f"{pairs}: no pair kept a structural word — see the counts above")
    missing = sw.add_piece_offsets(records, handle.model.tokenizer, handle.prompt)
    for n in counts.notes():
        note(n)
    meta = {"pairs": pairs, "languages": {"src": "en", "tgt": langs[other_col]}, "model": model,
            "prompt": handle.prompt, "tokenizer": sw.tokenizer_fingerprint(handle.model.tokenizer),
            "types": list(kinds), "object_deps": list(object_deps), "stopwords": stop_note,
            "counts": counts.to_dict(), "spans_without_pieces": missing, "notes": loaded.notes() + counts.notes()}
    sw.write_spans(Path(output), records, meta)
    return {**meta, "records": len(records), "spans": sum(len(r["spans"]) for r in records),
            "meta_path": str(sw.meta_path(Path(output)))}


def pairs_from_documents(src: str, tgt: str, model: Any = "e5-small", *, title_threshold: float = 0.7,
                         min_section_chars: int = 200, max_short_words: int = 10, strip_chars: str = "\u200c",
                         splitter: str = "auto", seed: int = 0, device: str = "auto", dtype: str = "auto") -> Any:
    """Sentence pairs and triplets from comparable documents with titled sections (Manafi 2025 §3.2.1;
    :func:`xlsent.data.documents.pairs_from_documents`): ``src`` and ``tgt`` are JSONL files or bundled documents
    (``bible:nya``, ``udhr:eng``), whose section titles ``model`` embeds — on ``device``, in ``dtype`` (as every
    public function: a device that is not there is one line, before any model loads). Returns the
    :class:`~xlsent.data.documents.DocumentPairs` (triplets, counts, notes)."""
    from xlsent.api._common import encoder_for, place
    from xlsent.data import documents

    place(device, dtype)
    s_docs, t_docs = documents.load_documents(src), documents.load_documents(tgt)
    encoder = encoder_for(model, normalize=True)
    return documents.pairs_from_documents(s_docs, t_docs, encoder.encode, title_threshold, min_section_chars,
                                          max_short_words, strip_chars, splitter, seed)


@dataclass(frozen=True)
class Identification:
    """One text's language (:func:`identify`): ISO 639-3, its macrolanguage where it has one, and the score."""

    lang: str | None  # None: the text has no letters to judge (or, among candidates only CLD2 knows, CLD2 read none)
    macrolanguage: str | None
    score: float  # the n-gram model's probability (0–1); for a language only CLD2 knows, CLD2's share of the line


def identify(texts: Sequence[str], *, languages: Sequence[str] | None = None,
             learn: Mapping[str, str | Path] | None = None) -> list[Identification]:
    """The language of each text, among every language the bundled identifier knows (each ``udhr-all`` language
    but ckb, whose text is kmr's, and English: 445; and, read by CLD2, the eleven languages CLD2 knows that no
    bundled text teaches it) or among ``languages`` only (a filter's question, "L or one of its confusables?").

    The identifier is a character n-gram model (:mod:`xlsent.data.langid.ngram`) learned from the UDHR's training
    articles; ``learn`` adds or relearns languages from your own monolingual text (code → a file, one text a
    line): how a language outside every bundled set gets in (``xlsent data langid FILE --learn xyz:FILE``).

    Args:
        texts: the texts, one each.
        languages: candidate codes (ISO 639-1 or 639-3; each must be known, or learned here).
        learn: language code → a UTF-8 text file of that language.

    Returns:
        One :class:`Identification` a text, in order.
    """
    from xlsent.data.langid.codes import language_of, macrolanguage
    from xlsent.data.langid.ngram import CLD2_AS, cld2_only, identifier_with, identify_texts
    from xlsent.utils.errors import named

    if languages is not None and not [c for c in languages if str(c).strip()]:
        raise XlsentError(f"{named('languages', '')}: no candidate given — give at least one language code, or none "
                          "for every language the identifier knows")
    model = identifier_with(learn)
    candidates = None
    if languages is not None:
        candidates = []
        for code in languages:
            lang = language_of(code)
            lang = CLD2_AS.get(lang, lang) if lang else lang
            if lang is None or (lang not in model.languages and lang not in cld2_only(model)):
                raise XlsentError(f"{named('languages', code)}: " + (
                    "not a language code" if lang is None else f"{lang} is not a language the identifier knows")
                    + " — give codes it knows, or teach it a language from your own text (--learn L:FILE)")
            candidates.append(lang)
    return [Identification(x.lang, macrolanguage(x.lang), x.score)
            for x in identify_texts(model, list(texts), candidates)]
