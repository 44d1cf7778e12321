"""Corpus tools behind ``xlsent data``: what a test set shares with a training set, and the structural-word spans
the SCP recipe trains on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from xlsent.api._common import Note, check_options, output_file, writes
from xlsent.data.derived.structural import TYPES as STRUCTURAL_TYPES
from xlsent.utils.errors import XlsentError
from xlsent.utils.options import Option, at_least, one_of

# each function's options, declared once: the ``xlsent data`` commands are built from them
#: :func:`structural_words`
STRUCTURAL: dict[str, Option] = {
    "types": one_of(STRUCTURAL_TYPES, ",".join(STRUCTURAL_TYPES), "structural types to keep"),
    "sample": at_least(0, 0, "seeded sample of N pairs (0 = all)"),
    "model": Option("e5-small", help="model whose sub-token offsets are stored (the one `xlsent train scp` will "
                                     "train; another model's are recomputed there, not re-aligned)"),
    "object_deps": Option("dobj", help="dependency labels read as objects (add attr,pobj,dative …)"),
    "seed": Option(0, help="sample seed"),
}
#: :func:`triplets`
TRIPLETS: dict[str, Option] = {
    "negatives": Option("section", help="section: another section of the same document; hard: mined by --teacher"),
    "teacher": Option("minilm-en", help="model that mines hard negatives"),
    "relative_margin": Option(0.05, help="hard mining: skip candidates within this share of the positive's score"),
    "seed": Option(0, help="seed for negative sampling"),
}
#: :func:`pairs_from_documents`
DOCUMENTS: dict[str, Option] = {
    "model": Option("e5-small", help="model that embeds the section titles"),
    "title_threshold": Option(0.7, help="title cosine needed to match two sections"),
    "min_section_chars": Option(200, help="keep matched sections whose texts both exceed this length"),
    "max_short_words": Option(10, help="drop sentence pairs with a side of this many words or fewer"),
    "strip_chars": Option("\u200c", help="characters removed from titles and texts (default U+200C ZWNJ)"),
    "splitter": Option("auto", help="sentence splitter"),
    "seed": Option(0, help="seed for the negatives"),
}
#: :func:`overlap`
OVERLAP: dict[str, Option] = {
    "train": Option(..., help="training file: BIO (or a bundled tagged set), or with --text one text per line"),
    "test": Option(..., help="test file of the same kind"),
    "model": Option("e5-small", help="tokenizer for the word overlap (Table 3.4)"),
    "text": Option(False, help="plain text / title-selection files: word overlap only"),
    "max_pieces": Option(128, help="first N pieces of each text (Table 3.4 uses 128)"),
}
#: :func:`identify_file`
LANGID: dict[str, Option] = {
    "learn": Option([], help="L:FILE — teach the n-gram language identifier language L from your own monolingual "
                    "text, one text a line (repeatable): how a language neither it nor CLD2 knows gets checked"),
    "output": Option(None, help="write lang<TAB>macrolanguage<TAB>score<TAB>text a line here (default: print it)"),
    "languages": Option("", help="candidate codes, comma-separated (default: every language the identifier knows)"),
}


def overlap(train: str | Path, test: str | Path, model: str = "e5-small", text: bool = False,
            max_pieces: int = 128) -> dict:
    """How much ``test`` shares with ``train`` (Manafi 2025): for tagged sets (CoNLL files or bundled names) the
    entity overlap (Table 3.3, key ``entity``), and for every kind the word overlap under ``model``'s tokenizer
    (Table 3.4, key ``word``; the first ``max_pieces`` pieces of each text). ``text``: the files are plain text,
    one a line, or title-selection files (``text<TAB>gold<TAB>distractor…``)."""
    from xlsent.perturbations.overlap import entity_overlap, word_overlap

    if text:
        from xlsent.data.formats.multiple_choice import read_choices

        def texts(path) -> list[str]:
            p = Path(path)
            if not p.is_file():
                raise XlsentError(f"{p}: no such file — check the path")
            first = p.read_text(encoding="utf-8").splitlines()
            return read_choices(p).texts if first and "\t" in first[0] else [x for x in first if x.strip()]

        tr, te, out = texts(train), texts(test), {}
    else:
        from xlsent.data.formats.tagging import load_tagged

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
    from xlsent.data.derived import structural as sw
    from xlsent.data.sets.pairs import english_side, load_pairs, side_langs
    from xlsent.data.text.stopwords import stopwords_for

    note = on_note or (lambda line: None)
    output_file(output)
    kinds = tuple(sw.TYPES if types is None else types)
    for t in kinds:
        STRUCTURAL["types"].check(t, "types")
    if not kinds:
        raise XlsentError("types=: give at least one of " + ", ".join(sw.TYPES))
    check_options(STRUCTURAL, {"sample": sample})
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


@writes("output")
def pairs_from_documents(src: str, tgt: str, model: Any = "e5-small", *, title_threshold: float = 0.7,
                         min_section_chars: int = 200, max_short_words: int = 10, strip_chars: str = "\u200c",
                         splitter: str = "auto", seed: int = 0, device: str = "auto", dtype: str = "auto",
                         output: str | Path | None = None, on_note: Note = None) -> Any:
    """Sentence pairs and triplets from comparable documents with titled sections (Manafi 2025 §3.2.1;
    :func:`xlsent.data.formats.documents.pairs_from_documents`): ``src`` and ``tgt`` are JSONL files or bundled documents
    (``bible:nya``, ``udhr:eng``), whose section titles ``model`` embeds — on ``device``, in ``dtype`` (as every
    public function: a device that is not there is one line, before any model loads). Returns the
    :class:`~xlsent.data.formats.documents.DocumentPairs` (triplets, counts, notes: each also said to ``on_note``);
    with ``output``, also writes them (TSV anchor, positive, negative: :func:`write_triplets`) and ``OUTPUT.json``
    (the counts and sections)."""
    from xlsent.api._common import encoder_for, place
    from xlsent.data.formats import documents
    from xlsent.utils.io import write_json_atomic

    output_file(output)
    place(device, dtype)
    s_docs, t_docs = documents.load_documents(src), documents.load_documents(tgt)
    encoder = encoder_for(model, normalize=True)
    res = documents.pairs_from_documents(s_docs, t_docs, encoder.encode, title_threshold, min_section_chars,
                                         max_short_words, strip_chars, splitter, seed)
    if on_note is not None:
        for line in res.lines():
            on_note(line)
    if output is not None:
        write_triplets(output, [(a, p, n or "") for a, p, n in res.triplets], "the documents")
        write_json_atomic(Path(str(output) + ".json"), {"src": src, "tgt": tgt, "model": model,
                                                        "counts": dict(res.counts),
                                                        "sections": [list(x) for x in dict.fromkeys(res.sources)]})
    return res


@writes("output")
def triplets(source: str, output: str | Path, *, negatives: str = "section", teacher: str = "minilm-en",
             relative_margin: float = 0.05, seed: int = 0, on_bad_lines: str = "error", on_note: Note = None) -> list:
    """Cross-lingual triplets from parallel data (``xlsent data triplets``): anchor = the low-resource side,
    positive = its English translation, negative by ``negatives`` (:func:`xlsent.data.derived.triplets.build_triplets`;
    ``hard``: mined by ``teacher``), written to ``output`` (TSV, :func:`write_triplets`); what reading the pairs
    and building them reported is said to ``on_note`` first. Returns the triplets."""
    from xlsent.data.derived.triplets import build_triplets
    from xlsent.data.sets.pairs import load_pairs
    from xlsent.models.handle import load_model

    output_file(output)
    loaded = load_pairs(source, on_bad_lines=on_bad_lines, dedupe=False)
    model = load_model(teacher).model if negatives == "hard" else None
    ds, report = build_triplets(loaded.dataset, negatives, seed, teacher=model, relative_margin=relative_margin)
    rows = list(zip(ds["anchor"], ds["positive"], ds["negative"]))
    if on_note is not None:
        for line in loaded.notes() + report.lines():
            on_note(line)
    write_triplets(output, rows, "the corpus")
    return rows


def write_triplets(output: str | Path, rows: list[tuple], source: str) -> None:
    """``rows`` as a TSV of anchor, positive, negative (a header first); a sentence with a tab or a newline is one
    line naming ``source`` to clean, nothing written."""
    from xlsent.utils.io import write_text_atomic

    bad = sum(any("\t" in x or "\n" in x for x in row) for row in rows)
    if bad:
        raise XlsentError(f"{bad} sentence(s) contain tabs or newlines and cannot be written as TSV — clean {source} "
                          "first")
    write_text_atomic(Path(output), "anchor\tpositive\tnegative\n" + "".join("\t".join(r) + "\n" for r in rows))


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


def identify_file(file: str | Path, *, languages: Sequence[str] | None = None,
                  learn: Mapping[str, str | Path] | None = None) -> tuple[list[str], list[Identification]]:
    """The lines of a UTF-8 text file (split at ``\\n`` only; a line that is not UTF-8 is one error naming the file and
    line) and the language of each (:func:`identify`; ``xlsent data langid``)."""
    from xlsent.data.formats.text_source import decode_line

    file = Path(file)
    raw = file.read_bytes().split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    lines = [decode_line(file, line, i) for i, line in enumerate(raw, 1)]
    return lines, identify(lines, languages=languages, learn=learn)


def corpus_stats(source: str, model: str | None = None, on_bad_lines: str = "error") -> dict:
    """Pairs, languages and length distribution of a dataset or pairs file (``xlsent data stats``); with ``model``,
    its tokenizer's coverage per language (unknown-piece rate, pieces per word)
    (:func:`xlsent.data.sets.stats.corpus_stats`), the ``source`` and the reader's ``notes`` added."""
    from xlsent.data.sets.pairs import load_pairs
    from xlsent.data.sets.stats import corpus_stats as stats
    from xlsent.models.handle import load_model

    loaded = load_pairs(source, on_bad_lines=on_bad_lines, dedupe=False)
    tokenizer = load_model(model).model.tokenizer if model else None
    return {**stats(loaded.dataset, tokenizer), "source": source, "notes": loaded.notes()}
