"""Corpus statistics: sizes, languages, lengths, and a tokenizer's coverage per language."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from xlsent.data.filters.cleaning import count_words


def length_summary(texts: list[str]) -> dict:
    words = np.array([count_words(t) for t in texts])
    if not len(words):
        return {}
    return {
        "min": int(words.min()),
        "median": float(np.median(words)),
        "mean": float(words.mean()),
        "p95": float(np.percentile(words, 95)),
        "max": int(words.max()),
    }


def tokenizer_stats(tokenizer, texts: list[str]) -> dict:
    """Unknown-token rate (share of pieces that are ``unk``) and pieces per word."""
    enc = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    return piece_stats(enc, tokenizer.unk_token_id, texts)


def piece_stats(ids: list[list[int]], unk_id: int | None, texts: list[str]) -> dict:
    """``unk_rate`` (share of the pieces that are the tokenizer's unknown piece) and ``pieces_per_word`` of texts
    already split into piece ids (without special tokens); words as :func:`~xlsent.data.filters.cleaning.count_words`
    counts them (whitespace tokens; a character of a script written without spaces is a word)."""
    pieces = sum(len(e) for e in ids)
    n_unk = sum(sum(1 for i in e if i == unk_id) for e in ids) if unk_id is not None else 0
    words = sum(count_words(t) for t in texts)
    return {
        "unk_rate": n_unk / pieces if pieces else 0.0,
        "pieces_per_word": pieces / words if words else 0.0,
    }


def corpus_stats(dataset, tokenizer=None) -> dict:
    """Pairs, languages and per-language length (and tokenizer) statistics of a pairs dataset."""
    by_lang: dict[str, list[str]] = defaultdict(list)
    from xlsent.data.sets.pairs import detected_languages

    detected = detected_languages(dataset)[:2]  # a side the file gives no code is detected (or left "src"/"tgt")
    src_langs = dataset["src_lang"] if "src_lang" in dataset.column_names else [""] * len(dataset)
    tgt_langs = dataset["tgt_lang"] if "tgt_lang" in dataset.column_names else [""] * len(dataset)
    for s, t, sl, tl in zip(dataset["src"], dataset["tgt"], src_langs, tgt_langs):
        by_lang[sl or detected[0] or "src"].append(s)
        by_lang[tl or detected[1] or "tgt"].append(t)
    langs = {}
    for lang, texts in by_lang.items():
        unique = list(dict.fromkeys(texts))
        entry = {"sentences": len(texts), "unique": len(unique), "words": length_summary(unique)}
        if tokenizer is not None:
            entry.update(tokenizer_stats(tokenizer, unique))
        langs[lang] = entry
    return {"pairs": len(dataset), "languages": langs}
