"""Filters for the noise of mined and aligned pairs, each switchable, each counted with examples of what it removed.

In this order (a pair is counted by the first filter that removes it):

* ``language`` — each side against its declared language, compared as macrolanguages (SIL's ISO 639-3 table: a
  side declared ``ind`` may be read as Malay, ``hrv`` as Bosnian). Who judges a side — the notes say: CLD2
  (:mod:`xlsent.data.langid.cld2`: fast, about 160 languages) where it knows the declared language, with xlsent's
  character n-gram identifier (:mod:`xlsent.data.langid.ngram`: every ``udhr-all`` language, and any language taught it
  from the user's own text) for the lines CLD2 cannot place (mostly lines in a language CLD2 does not know) and as
  a second opinion on every other line (issue 76): on a line CLD2 reads as the side's own, another language it
  reads by the margin stands (CLD2 reads Yao and Tumbuka as Chichewa); on a line CLD2 reads as another language,
  its reading of another language by :data:`CONFIRM_MARGIN` nats confirms CLD2 — the line is noise however often
  that language recurs on the side (Galician in a Spanish file, Norwegian in a Danish one: CLD2 reads them
  reliably, and before they recurred on a tenth of the side and were kept) — and its reading of the side's own
  language as the best overrules CLD2 (Rundi read as Kinyarwanda); the other side's language is CLD2's to tell
  from the side's own, both ways (the n-gram model learned English from the UDHR alone: it reads Scots paragraphs
  as English). The n-gram identifier alone judges the other languages it knows. It reads a line as another
  language when that language beats the best of the side's own by more than :data:`NGRAM_MARGIN` nats of the
  line's log-likelihood (a short line needs a clearer difference). A side is taken as the identifier *reads* it:
  the declared language, and any language CLD2 reliably reads on at least ``readings`` (10%) of the side's lines
  where the n-gram identifier does not know the declared language or neither confirms nor overrules CLD2 — CLD2
  reads a language it does not know, or a close relative, as one language again and again (Kabuverdianu as
  Portuguese), while noise in other languages is scattered; the other side's language counts so only on a
  ``majority`` of the lines not read as a third language, where those are a majority of the side themselves
  (Nigerian Pidgin, or Scots, read as English). The n-gram identifier knows the declared language, so for a side
  it judges no other reading is taken as the side's but the other side's language on a majority (a crawl's text in
  the neighbouring language is noise however much of it there is); on a CLD2 side its readings, and CLD2's
  readings it confirms, count so only on a majority too (most of a side declared ``pt`` read as Kabuverdianu, or
  as Galician: the declaration names a relative — the note says how to declare it). Each such reading is said in
  the notes. A line identified (CLD2: *reliably*) as a language the side is not read as is removed (an
  unreliable or empty CLD2 detection alone keeps the line: CLD2 is unsure of ~1% of Chichewa Bible verses) —
  unless at least ``own_words`` (half) of its words are the side's own, words seen at least twice in the side's
  other lines: CLD2 takes Chichewa lists of names for Kinyarwanda, Venda or Shona, and these keep their pairs.
  For a declared language neither identifier knows, the report says it could not be confirmed, and the side is
  checked against its own vocabulary instead: a line of at least 5 distinct words that shares under 0.3 × the
  side's median share of words seen in its other lines is removed (a paragraph of another language in the same
  script shares almost none); not judged where that median is under 0.4 (scripts written without spaces, sides
  whose words rarely repeat). A line whose writing system differs from its side's own (the script of most of the
  side's lines: Cyrillic on a Latin side) is removed too — a check that needs no model, so it works for any
  language.
* ``copy`` — the target equals the source after normalisation (lower-cased; punctuation, symbols and digits
  removed; spaces collapsed).
* ``near-duplicate`` — either side, normalised so, equals that side of an earlier pair: the first is kept; and a
  pair whose two sides both equal those of an earlier pair that a filter above removed goes as well (a copy of
  noise is noise — while a pair sharing only one side with a removed pair, a source's second translation, stays).
* ``length-ratio`` — the log of the target's over the source's character length is an outlier of the file's own
  distribution: further than ``max_z`` robust standard deviations (1.4826 × the median absolute deviation)
  from the median — so it adapts to the language pair. A target cut off is removed too: more than
  :data:`CUT_Z` (1.25) robust standard deviations shorter than the median, ending in a word where its source ends
  a sentence — judged only
  where the file's targets end with punctuation whenever their sources end a sentence (on at least 90% of its
  pairs of ordinary length, within those 1.25 robust standard deviations: the cut ones do not lower it). Skipped, with a
  note, below ``min_rows_for_ratio`` pairs.
* ``numbers`` — both sides hold digits and their numbers differ (``1,000`` = ``1000``; a side without digits
  may spell its numbers out, so it is not compared).

Inside, languages are compared in ISO 639-3 (``macro(code, "639-3")``: a macrolanguage's code, ``zho``, ``msa``,
else the language's; CLD2's readings translated at its edge, :attr:`xlsent.data.langid.cld2.Detection.macro_code`)
and scripts in ISO 15924 (:func:`xlsent.data.langid.scripts.filter_script`: ``Latn``, ``Cyrl``, ``Jpan`` for Han
with kana); the notes print the short forms they always printed (``ny``, ``zh``; ``latin``, ``cjk``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

NOISE_FILTERS = ("language", "copy", "near-duplicate", "length-ratio", "numbers")
#: the length-ratio filter's bound, in robust standard deviations, chosen on udhr-all:dev with
#: benchmarks/clean_pairs/filter_noise.py: 4 removed far more loose true translations than cut targets, which the cut
#: rule catches (docs/experiments/langid.md)
MAX_Z = 5.0
#: the cut rule's bound, in robust standard deviations below the file's median ratio (a target ending in a word where
#: its source ends a sentence, in a file whose targets otherwise end with punctuation) — chosen on udhr-all:dev with
#: benchmarks/clean_pairs/filter_noise.py: 2 let 44 of 464 cut targets through; 1.25 lets 29 through and loses no more
#: true pairs, 1 loses one more (docs/experiments/langid.md)
CUT_Z = 1.25
_NUMBER = re.compile(r"\d+(?:[.,\u00a0 ]\d{3})*(?:[.,]\d+)?")


@dataclass
class FilterCount:
    name: str
    removed: int
    why: str
    examples: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"filter": self.name, "removed": self.removed, "why": self.why,
                "examples": [{"src": s, "tgt": t} for s, t in self.examples]}


@dataclass
class NoiseReport:
    rows_in: int
    rows_out: int
    filters: list[FilterCount]
    notes: list[str]
    removed_by: list[str | None] = field(default_factory=list)  # per pair in: the filter that removed it, or None

    def to_dict(self) -> dict:
        return {"rows_in": self.rows_in, "rows_out": self.rows_out,
                "filters": [f.to_dict() for f in self.filters], "notes": self.notes}


def normalise(text: str) -> str:
    """Lower-cased, without punctuation, symbols or digits, spaces collapsed: what copies and duplicates share."""
    kept = "".join(ch if not unicodedata.category(ch)[0] in "PSN" else " " for ch in text.lower())
    return " ".join(kept.split())


def numbers(text: str) -> list[str]:
    return sorted(re.sub(r"[.,\u00a0 ](?=\d{3}\b)", "", m) for m in _NUMBER.findall(text))


def _own_shares(texts: Sequence[str], keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per line: the share of its (distinct, normalised) words seen in at least one other kept line of the side,
    and how many distinct words it has."""
    sets = [set(normalise(t).split()) for t in texts]
    counts: Counter = Counter()
    for words, k in zip(sets, keep):
        if k:
            counts.update(words)
    share = np.array([sum(counts[w] - (1 if k else 0) >= 1 for w in words) / len(words) if words else 1.0
                      for words, k in zip(sets, keep)])
    return share, np.array([len(w) for w in sets])


def _strangers(texts: Sequence[str], keep: np.ndarray, vocabulary: tuple[float, float, int]) -> np.ndarray:
    """Lines of a side in a language no detector knows that are not in the side's language: a side's own lines
    share many of its words (function words, the subject's terms), a paragraph of another language almost none.
    ``vocabulary`` = (share, median, words): a line of at least ``words`` distinct words is a stranger when the share
    of them seen in the side's other lines is under ``share`` × the side's median share — judged only where that
    median is at least ``median`` (not for scripts written without spaces, or agglutinative sides whose words
    rarely repeat)."""
    share_of, median_at_least, min_words = vocabulary
    share, size = _own_shares(texts, keep)
    if not keep.any():
        return np.zeros(len(texts), dtype=bool)
    med = float(np.median(share[keep]))
    if med < median_at_least:
        return np.zeros(len(texts), dtype=bool)
    return keep & (size >= min_words) & (share < share_of * med)


_FINAL = set(".!?…。！？؟।॥።՝։")


def _ends_sentence(text: str) -> bool:
    """The text ends a sentence: its last character, after closing quotes and brackets, is a full stop, ! or ? (in
    any script)."""
    text = text.rstrip()
    while text and (unicodedata.category(text[-1]) in ("Pe", "Pf") or text[-1] in "'\""):
        text = text[:-1].rstrip()
    return bool(text) and text[-1] in _FINAL


def _ends_in_a_word(text: str) -> bool:
    text = text.rstrip()
    return bool(text) and unicodedata.category(text[-1])[0] in "LMN"


def _truncated(src: Sequence[str], tgt: Sequence[str], keep: np.ndarray, z: np.ndarray, below: float,
               habit: float) -> np.ndarray:
    """Targets cut off: shorter than the file's ratio by more than ``below`` robust standard deviations, ending in a
    word where their source ends a sentence — judged only where the file's targets end with punctuation whenever
    their sources end a sentence, on at least ``habit`` of its pairs of ordinary length (within ``below`` robust
    standard deviations: the cut ones do not lower it) — not for a script or style without it."""
    ends = np.array([_ends_sentence(s) for s in src], dtype=bool)
    open_ = np.array([_ends_in_a_word(t) for t in tgt], dtype=bool)
    base = keep & ends & (np.abs(z) <= below)  # the habit of pairs of ordinary length: the cut ones do not count
    if not base.any() or 1.0 - float(open_[base].mean()) < habit:
        return np.zeros(len(src), dtype=bool)
    return keep & ends & open_ & (z < -below)


#: the n-gram identifier's reading of a line counts against the side's language only when that reading's log-likelihood
#: (the line's whole: a short line carries less evidence) beats the best of the side's own language(s) by more than this
#: many nats — chosen on udhr-all:dev with benchmarks/clean_pairs/filter_noise.py: the smallest margin tried at which
#: the file lost no more than 1% of its true pairs (docs/experiments/langid.md)
NGRAM_MARGIN = 80.0
#: lines scored by the n-gram identifier at once (its scores are lines × languages)
_CHUNK = 4096


def _ngram_gaps(model, texts: Sequence[str], keep: np.ndarray, lang: str) -> tuple[list[str | None], np.ndarray]:
    """Per kept line with letters: the best of the n-gram identifier's languages outside the side's own (the model's
    languages whose macrolanguage is ``lang``), as a macrolanguage in ISO 639-3 (:func:`langid.macro`, ``"639-3"``),
    and by how many nats of the line's log-likelihood it beats the best of the side's own (negative: the side's own
    language scores best); (None, -inf) for other lines."""
    from xlsent.data.langid.codes import macro

    macros = [macro(code, "639-3") for code in model.languages]
    own = np.array([m == lang for m in macros])
    other: list[str | None] = [None] * len(texts)
    gap = np.full(len(texts), -np.inf)
    idx = [i for i in range(len(texts)) if keep[i] and any(ch.isalpha() for ch in texts[i])]
    for start in range(0, len(idx), _CHUNK):
        part = idx[start:start + _CHUNK]
        _, s = model.scores([texts[i] for i in part], per_ngram=False)
        mine = s[:, own].max(axis=1) if own.any() else np.full(len(part), -np.inf)
        s = np.where(own[None, :], -np.inf, s)
        best = s.argmax(axis=1)
        for j, i in enumerate(part):
            other[i], gap[i] = macros[int(best[j])], float(s[j, best[j]] - mine[j])
    return other, gap


def _ngram_readings(model, texts: Sequence[str], keep: np.ndarray, lang: str, margin: float) -> list[str | None]:
    """Each kept line's language as the n-gram identifier reads it, as a macrolanguage (ISO 639-3):
    ``lang`` when one of the side's own languages (the model's languages whose macrolanguage is ``lang``) scores
    best or within ``margin`` (nats of the line's log-likelihood) of the best; None for a line without letters."""
    other, gap = _ngram_gaps(model, texts, keep, lang)
    return [None if o is None else (o if g > margin else lang) for o, g in zip(other, gap)]


def _second_opinion(model, texts: Sequence[str], keep: np.ndarray, lang: str, cld2: list[str | None],
                    margin: float, confirm: float, partner: str | None = None
                    ) -> tuple[list[str | None], np.ndarray, str]:
    """The n-gram identifier's second opinion on a side CLD2 judges, where it knows the side's language ``lang``
    (``cld2``: CLD2's reliable reading of each line, as a macrolanguage, or None; ``partner``: the other side's
    language; every code the filter's ISO 639-3 key, :func:`langid.macro` ``"639-3"``). Returns each line's reading,
    which readings are the identifier's (a side takes those as its own only on a majority; CLD2's own readings recur
    on ``readings`` of it), and what it did, for the notes:

    * a line CLD2 cannot place: the identifier's reading (another language where it beats the side's own by
      ``margin``);
    * a line CLD2 reads as ``lang``: another language the identifier reads by ``margin`` stands — but the other
      side's language;
    * a line CLD2 reads as another language: where the identifier reads another language too, by ``confirm``, the
      line is that language's (a neighbour's text is noise however often it recurs: Galician in a Spanish file);
      where it reads ``lang`` best, the line is the side's own; else CLD2's reading stands — and so it does where
      CLD2 reads the other side's language.

    The other side's language (English, mostly) is CLD2's to tell from the side's own, both ways: CLD2 knows it
    better than a model that learned English from the UDHR alone, which reads Scots paragraphs as English."""
    from xlsent.data.langid.cld2 import detectable_macros
    from xlsent.data.langid.codes import macro

    other, gap = _ngram_gaps(model, texts, keep, lang)
    known = detectable_macros("639-3")
    found, by_ngram = list(cld2), np.zeros(len(texts), dtype=bool)
    said: Counter = Counter()
    for i, (f, o, g) in enumerate(zip(cld2, other, gap)):
        if not keep[i] or o is None:
            continue
        if f is None:
            found[i], by_ngram[i] = (o if g > margin else lang), True
            said["unsure"] += 1
        elif f == partner and f in known:  # CLD2 tells the other side's language from the side's own: its reading
            continue
        elif f == lang:
            if g > margin and not (o == partner and o in known):
                found[i], by_ngram[i] = o, True
                said["own, known" if o in known else "own"] += 1
        elif g > confirm:
            found[i], by_ngram[i] = o, True
            said["confirmed"] += 1
        elif g < 0:
            found[i], by_ngram[i] = lang, True
            said["overruled"] += 1
    shown = macro(lang)  # the short form the notes print
    parts = [text for key, text in (
        ("unsure", f"for the {said['unsure']} line(s) CLD2 could not place"),
        ("own", f"for the {said['own']} line(s) CLD2 read as {shown} that it reads as a language CLD2 does not know"),
        ("own, known", f"for the {said['own, known']} line(s) CLD2 read as {shown} that it reads as another language "
                       "CLD2 knows"),
        ("confirmed", f"confirming {said['confirmed']} line(s) CLD2 read as another language"),
        ("overruled", f"reading {said['overruled']} line(s) CLD2 read as another language as {shown}")) if said[key]]
    how = "CLD2, and the n-gram identifier " + (
        ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else
        parts[0] if parts else "as a second opinion (it changed no reading)")
    return found, by_ngram, how


#: on a line CLD2 reliably reads as another language than the side's, the n-gram identifier's reading of another
#: language confirms it — the line is noise however often its language recurs on the side — when that reading beats the
#: best of the side's own language(s) by more than this many nats. Chosen on udhr-all:dev with
#: benchmarks/clean_pairs/neighbour_filter.py: the largest margin tried (0, 20, 40, 60, 80) at which as many
#: neighbouring-language translations were removed as at 0 (docs/experiments/langid.md)
CONFIRM_MARGIN = 60.0


def _bundled():
    from xlsent.data.langid.ngram import bundled_identifier

    return bundled_identifier()


def knows(model, lang: str | None) -> bool:
    """Whether the n-gram identifier knows ``lang`` (a code as :func:`langid.macro` gives it, in either form) or a
    member of it."""
    from xlsent.data.langid.codes import macro

    key = macro(lang, "639-3")
    return bool(lang) and any(macro(code, "639-3") == key for code in model.languages)


def _language(src: Sequence[str], tgt: Sequence[str], langs: tuple[str | None, str | None],
              keep: np.ndarray, notes: list[str], own_words: float, readings: float, majority: float,
              vocabulary: tuple[float, float, int] = (0.3, 0.4, 5), identifier=None,
              margin: float | None = None, confirm: float | None = None) -> tuple[np.ndarray, str]:
    from xlsent.data.langid.cld2 import detect, detectable_macros
    from xlsent.data.langid.codes import macro
    from xlsent.data.langid.scripts import filter_script, script_name

    margin = NGRAM_MARGIN if margin is None else margin
    confirm = CONFIRM_MARGIN if confirm is None else confirm

    drop = np.zeros(len(src), dtype=bool)
    parts = []
    for side, texts, lang in (("source", src, langs[0]), ("target", tgt, langs[1])):
        scripts = [filter_script(t) for t in texts]  # ISO 15924, as the filter groups scripts (Jpan: Han and kana)
        common = [s for s, k in zip(scripts, keep) if k and s]
        main = max(set(common), key=common.count) if common else None
        if main:
            drop |= np.array([bool(s) and s != main for s in scripts]) & keep
            parts.append(f"{side} not in the {script_name(main)} script")
        if lang is None:
            notes.append(f"language: no {side} language declared — only its script was checked "
                         f"(--{'src' if side == 'source' else 'tgt'}-lang)")
            continue
        # compared as macrolanguages, in ISO 639-3: CLD2 says zh, ar, ms where a user declares cmn, arb, ind (all
        # zho, ara, msa here); the notes print the short form, shown
        lang, other = macro(lang, "639-3"), macro(langs[1] if side == "source" else langs[0], "639-3")
        shown = macro(lang)
        # who judges the side: CLD2 (fast, reliable where it knows the language), else the n-gram identifier
        # (xlsent.data.langid.ngram: every udhr-all language, and any taught it), else neither
        by_ngram = np.zeros(len(texts), dtype=bool)  # lines whose reading is the n-gram identifier's
        if lang in detectable_macros("639-3"):
            judge, how = "CLD2", "CLD2"
            found = [None if not k else detect(t) for t, k in zip(texts, keep)]
            found = [d.macro_code if d is not None and d.reliable else None for d in found]
            identifier = identifier or _bundled()
            if knows(identifier, lang):
                # the n-gram identifier's second opinion on every line (_second_opinion): on the lines CLD2 cannot
                # place, on those it reads as the side's own (a neighbour it does not know: Tumbuka in a Chichewa
                # file) and on those it reads as another language (a neighbour it knows, recurring: Galician in a
                # Spanish file — or the side's own language misread: Rundi as Kinyarwanda)
                found, by_ngram, how = _second_opinion(identifier, texts, keep, lang, found, margin, confirm, other)
        else:
            identifier = identifier or _bundled()
            judge = how = "the n-gram identifier" if knows(identifier, lang) else None
            found = _ngram_readings(identifier, texts, keep, lang, margin) if judge else [None] * len(texts)
        notes.append(f"language: the {side}'s language ({shown}) judged by {how}" if judge else
                     f"language: the {side}'s language ({shown}) is known to neither CLD2 nor the n-gram identifier — "
                     "teach it the language from your own monolingual text (--learn L:FILE)")
        # the side's own readings: a detector reads a language it does not know, or a close relative, as one language
        # again and again (Kabuverdianu as Portuguese, Rundi as Kinyarwanda); injected or crawled noise in another
        # language is scattered. A language read on a share of the side's lines is the side's; the other side's
        # language only on a majority (Nigerian Pidgin read as English; below, of which lines).
        lines = int(keep.sum()) or 1
        accepted = {lang} if judge else set()
        # the n-gram identifier knows the declared language: a language it reads with confidence is noise however
        # often it recurs (a crawl's text in the neighbouring language is exactly that) — but the other side's, on a
        # majority; CLD2 reads languages it does not know as relatives, so for it a recurring reading is the side's
        ngram = judge == "the n-gram identifier"
        # the n-gram identifier's readings on a CLD2 side (with those of CLD2 it confirms) are taken as the side's
        # only on a majority: most of the side in another language is a side declared as its relative (Kabuverdianu
        # or Galician declared pt), not noise; less of it is the neighbour's text, noise however often it recurs
        second = Counter(f for f, b in zip(found, by_ngram) if f and b and not ngram and f != lang)
        for found_lang, count in second.items():
            if count >= readings * lines:
                flag = "--src-lang" if side == "source" else "--tgt-lang"
                taken = count >= majority * lines
                if taken:
                    accepted.add(found_lang)
                unknown = ", a language CLD2 does not know," if found_lang not in detectable_macros("639-3") else ","
                notes.append(f"language: the n-gram identifier reads {count / lines:.0%} of the {side}'s lines as "
                             f"{macro(found_lang)}{unknown} not the declared {shown} — " + (
                                 "taken as the side's (most of it)" if taken else "those lines are removed")
                             + f"; if that is your text's language, declare it ({flag} {macro(found_lang)})")
        # the other side's language is weighed against the lines not read as a third language, where those are most
        # of the side: where a neighbour's text fills part of a side, the rest is still the side's if most of it
        # reads as the other side's language (Scots read as English); a side mostly in third languages is not
        # handed to the other side's language by a few of its lines
        third = sum(1 for f in found if f is not None and f not in (lang, other))
        settled = lines - third if lines - third >= majority * lines else lines
        for found_lang, count in Counter(f for f, b in zip(found, by_ngram) if f and not (b and not ngram)).items():
            share = majority if found_lang == other else readings
            of = max(1, settled) if found_lang == other else lines
            if ngram and found_lang not in (lang, other) and count >= share * lines:
                notes.append(f"language: the n-gram identifier reads {count / lines:.0%} of the {side}'s lines as "
                             f"{macro(found_lang)}, not the declared {shown} — those lines are removed; if that is "
                             f"how your {shown} is written, teach it from your own text (--learn {shown}:FILE)")
            if found_lang != lang and count >= share * of and not (ngram and found_lang != other):
                accepted.add(found_lang)
                among = f" ({count} of the {of} not read as a third language)" if of < lines else ""
                notes.append(f"language: {judge} reads {count / lines:.0%} of the {side}'s lines as "
                             f"{macro(found_lang)}{among} — "
                             f"taken as how it reads the declared {shown} (a close relative, or a language it does "
                             "not know), not as noise")
        flagged = [f is not None and f not in accepted for f in found]
        if not judge:
            strangers = _strangers(texts, keep & ~np.array(flagged, dtype=bool), vocabulary)
            drop |= strangers
            notes.append(f"language: lines of the {side} that share almost none of its own words are removed "
                         f"({int(strangers.sum())}), but the declared language cannot be confirmed")
        # the side's own words: those seen twice in its lines that are not flagged; a flagged line mostly in them stays
        words: Counter = Counter()
        for f, k, t in zip(flagged, keep, texts):
            if k and not f:
                words.update(set(normalise(t).split()))
        own = {w for w, c in words.items() if c >= 2}
        for i, f in enumerate(flagged):
            if f and not drop[i]:
                tokens = normalise(texts[i]).split()
                drop[i] = not tokens or sum(w in own for w in tokens) < own_words * len(tokens)
        by = f" ({judge})" if judge else ""
        read_as = ", ".join(sorted(map(macro, accepted)))  # the short forms, in the order the notes always gave
        parts.append(f"{side} identified as a language it is not read as ({read_as}){by}"
                     if accepted else f"{side} reliably identified as any language")
        if not judge:
            parts.append(f"{side} sharing almost none of the side's own words (its language, {shown}, unknown to "
                         "CLD2 and the n-gram identifier)")
    why = "; ".join(parts) or "nothing to check"
    return drop, why + (" (a line mostly in its side's own words is kept)" if any(langs) else "")


def apply_noise_filters(src: Sequence[str], tgt: Sequence[str], langs: tuple[str | None, str | None] = (None, None),
                        filters: Sequence[str] = NOISE_FILTERS, max_z: float = MAX_Z, min_rows_for_ratio: int = 30,
                        own_words: float = 0.5, readings: float = 0.1, majority: float = 0.5,
                        vocabulary: tuple[float, float, int] = (0.3, 0.4, 5), truncated: tuple[float, float] = (CUT_Z, 0.9),
                        examples: int = 3, identifier=None, margin: float | None = None,
                        confirm: float | None = None) -> tuple[np.ndarray, NoiseReport]:
    """A keep-mask over the pairs and what each filter removed. ``langs``: the sides' normalised codes
    (:func:`xlsent.data.langid.codes.language_code`), None where unknown; ``identifier``: the n-gram identifier for the
    languages CLD2 does not know (default: the bundled one, :func:`xlsent.data.langid.ngram.bundled_identifier`; one
    taught a language of yours: :func:`xlsent.data.langid.ngram.identifier_with`)."""
    n = len(src)
    keep = np.ones(n, dtype=bool)
    counts, notes = [], []
    removed_by: list[str | None] = [None] * n

    def record(name: str, drop: np.ndarray, why: str) -> None:
        drop = drop & keep
        idx = np.nonzero(drop)[0]
        counts.append(FilterCount(name, int(len(idx)), why, [(src[i], tgt[i]) for i in idx[:examples]]))
        keep[idx] = False
        for i in idx:
            removed_by[i] = name

    if "language" in filters:
        drop, why = _language(src, tgt, langs, keep, notes, own_words, readings, majority, vocabulary, identifier,
                              margin, confirm)
        record("language", drop, why)
    norm_s = norm_t = None
    if "copy" in filters or "near-duplicate" in filters:
        norm_s, norm_t = [normalise(t) for t in src], [normalise(t) for t in tgt]
    if "copy" in filters:
        record("copy", np.array([bool(a) and a == b for a, b in zip(norm_s, norm_t)], dtype=bool),
               "target equal to the source (lower-cased, without punctuation and digits)")
    if "near-duplicate" in filters:
        seen_s, seen_t, seen, drop = set(), set(), set(), np.zeros(n, dtype=bool)
        for i in range(n):
            pair = (norm_s[i], norm_t[i])
            if keep[i] and ((norm_s[i] and norm_s[i] in seen_s) or (norm_t[i] and norm_t[i] in seen_t)
                            or (all(pair) and pair in seen)):
                drop[i] = True
            elif keep[i]:
                seen_s.add(norm_s[i])
                seen_t.add(norm_t[i])
            seen.add(pair)
        record("near-duplicate", drop, "a side equal to that side of an earlier pair kept, or both sides equal to "
               "those of an earlier pair removed (same normalisation)")
    if "length-ratio" in filters:
        ratio = np.array([math.log((len(b) + 1) / (len(a) + 1)) for a, b in zip(src, tgt)])
        if keep.sum() < min_rows_for_ratio:
            notes.append(f"length-ratio: skipped, fewer than {min_rows_for_ratio} pairs to learn the ratio from")
        else:
            med = float(np.median(ratio[keep]))
            mad = 1.4826 * float(np.median(np.abs(ratio[keep] - med))) or 1e-6
            z = (ratio - med) / mad
            cut = _truncated(src, tgt, keep, z, *truncated)
            record("length-ratio", (np.abs(z) > max_z) | cut,
                   f"target/source length ratio outside {math.exp(med - max_z * mad):.2f}–"
                   f"{math.exp(med + max_z * mad):.2f} (the file's median {math.exp(med):.2f} ± {max_z:g} robust "
                   f"standard deviations of its log), or a target cut off: shorter than {math.exp(med - truncated[0] * mad):.2f}× "
                   "its source and ending in mid-sentence where the source ends a sentence")
    if "numbers" in filters:
        drop = np.zeros(n, dtype=bool)
        for i in range(n):
            if keep[i]:
                a, b = numbers(src[i]), numbers(tgt[i])
                drop[i] = bool(a) and bool(b) and a != b
        record("numbers", drop, "the two sides' numbers differ")
    return keep, NoiseReport(n, int(keep.sum()), counts, notes, removed_by)
