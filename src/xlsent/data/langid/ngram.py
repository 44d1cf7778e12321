"""Language identification for the long tail: a character n-gram model of every language it was taught (issue 61).

Its languages are ISO 639-3 codes (:func:`~xlsent.data.langid.codes.language_of` turns a user's code into one);
CLD2's readings come in through :mod:`xlsent.data.langid.cld2` in that form too.

The model is multinomial naive Bayes over character n-grams of words (scikit-learn's ``char_wb`` analyzer: each
word padded with spaces, 1- to 4-grams, lower-cased) — the family of HeLI and of fastText's language identifiers,
which do well from a few kilobytes of text a language, which is all the UDHR gives most of ours:

* training counts each language's n-grams; a language's log-probability of an n-gram is
  ``log((c + α) / (N + α V))`` (additive smoothing over the shared vocabulary of ``V`` n-grams; ``N`` the
  language's n-gram count);
* only what a language has seen is stored — its n-gram counts, a sparse matrix of languages × vocabulary, and its
  total ``N`` — and scored as ``delta = log p(g) − floor = log(1 + c / α)`` for a seen n-gram over
  ``floor = log(α / (N + α V))`` for everything else: the model holds what the text held, not languages × vocabulary;
* a text's score for a language is ``Σ count(g) · delta(g) + floor · (its n-grams)``, in- and out-of-vocabulary
  alike (its log-likelihood); the log-likelihoods of the candidate languages, divided by :data:`TEMPERATURE`, go
  through a softmax — the ``score`` of the best language is its share of that softmax among the candidates, so
  ``languages=`` (a filter's question: "L or one of its confusables?") changes the score as well as the answer.
  Naive Bayes over overlapping n-grams is overconfident (each character counts in several n-grams); the
  temperature, fitted on the development articles (temperature scaling: the one number minimising the held-out
  log-loss), makes the score a probability one can read — a line of one or two words gets a modest score, a
  paragraph near 1 (``benchmarks/clean_pairs/langid_heldout.py`` reports its calibration).

CLD2 knows eleven languages no bundled text teaches the model (Assamese, Bashkir, Interlingue, Inupiaq, Kashmiri,
Limbu, Nauru, Oriya, Sindhi, Klingon, Volapük: :func:`cld2_only`); :func:`identify_texts` — what
``xlsent.identify`` and ``xlsent data langid`` answer — takes CLD2's *reliable* reading of a line when it is one of
them, so the answers cover every language of ``udhr-all``, the Bible's and CLD2's.

A model is learned from monolingual text (:meth:`NgramIdentifier.learn`), extended with a language of the
user's (:meth:`NgramIdentifier.extend`: the new language's counts against the same vocabulary plus the n-grams only
it has), saved as one compressed ``.npz`` and read back (:meth:`NgramIdentifier.save` / :meth:`NgramIdentifier.load`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from xlsent.data.langid.cld2 import detect, detectable_639_3
from xlsent.data.langid.codes import language_of, macrolanguage

#: the n-gram lengths of the analyzer (characters, within words padded with a space each side)
NGRAMS = (1, 4)
#: additive smoothing of every language's n-gram counts
ALPHA = 0.5
#: a language keeps its n-grams seen at least this many times (1: every one)
MIN_COUNT = 1
#: the bundled model's: 2 was as good as 1 and 3 on the development articles at half of 1's size
#: (docs/experiments/langid.md)
BUNDLED_MIN_COUNT = 2
#: the bundled model, under the package data (``scripts/build_data.py --only langid`` writes it)
BUNDLED_MODEL = "langid/udhr-ngrams.npz"
#: the softmax of the candidates' whole-text log-likelihoods is taken at this temperature — fitted on the
#: development articles' paragraphs and their first 1, 2, 3, 5, 8 and 13 words (28,835 texts) by minimising the
#: log-loss: expected calibration error 0.011 there, against 0.056 for a softmax of per-n-gram log-likelihoods
#: (docs/experiments/langid.md)
TEMPERATURE = 4.2


def _analyzer(ngrams: tuple[int, int] = NGRAMS):
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(analyzer="char_wb", ngram_range=ngrams, lowercase=True).build_analyzer()


@dataclass(frozen=True)
class Identified:
    """One text's most likely language among the candidates, and its share of the candidates' softmax."""

    lang: str | None  # None: the text has no letters to judge
    score: float


class NgramIdentifier:
    """A character n-gram naive-Bayes model of each language it knows (see the module)."""

    def __init__(self, languages: Sequence[str], vocabulary: Sequence[str], counts, totals: Sequence[int],
                 ngrams: tuple[int, int] = NGRAMS, alpha: float = ALPHA):
        import scipy.sparse as sp

        self.languages = list(languages)
        self.vocabulary = list(vocabulary)
        self.index = {g: i for i, g in enumerate(self.vocabulary)}
        self.counts = sp.csr_matrix(counts, dtype=np.int64)
        self.totals = np.asarray(totals, dtype=np.int64)
        self.ngrams = (int(ngrams[0]), int(ngrams[1]))
        self.alpha = float(alpha)
        v = len(self.vocabulary)
        # log p(g) = log((c + α) / (N + α V)); floor = log(α / (N + α V)); delta = log p(g) − floor = log1p(c / α)
        self.floor = (np.log(self.alpha) - np.log(self.totals + self.alpha * v)).astype(np.float32)
        self.delta = self.counts.astype(np.float32)
        self.delta.data = np.log1p(self.delta.data / self.alpha).astype(np.float32)
        self._analyze = _analyzer(self.ngrams)
        self._row = {lang: i for i, lang in enumerate(self.languages)}

    # -- learning -------------------------------------------------------------------------------------------------

    @classmethod
    def learn(cls, texts: Mapping[str, Iterable[str]], ngrams: tuple[int, int] = NGRAMS, alpha: float = ALPHA,
              min_count: int = MIN_COUNT) -> "NgramIdentifier":
        """A model of each language in ``texts`` (language code → its lines)."""
        analyze = _analyzer(ngrams)
        return cls._from_counts({lang: _count(analyze, lines) for lang, lines in texts.items()}, ngrams, alpha,
                                min_count)

    @classmethod
    def _from_counts(cls, counts: Mapping[str, Mapping[str, int]], ngrams, alpha: float,
                     min_count: int = 1, totals: Mapping[str, int] | None = None) -> "NgramIdentifier":
        import scipy.sparse as sp

        empty = [lang for lang, c in counts.items() if not c]
        if empty:
            raise ValueError(f"no text to learn from for {', '.join(empty)}")
        n = {lang: (totals or {}).get(lang) or sum(c.values()) for lang, c in counts.items()}
        kept = {lang: {g: k for g, k in c.items() if k >= min_count} or dict(c) for lang, c in counts.items()}
        vocab = sorted({g for c in kept.values() for g in c})
        index = {g: i for i, g in enumerate(vocab)}
        rows = np.concatenate([np.full(len(c), r, dtype=np.int64) for r, c in enumerate(kept.values())])
        cols = np.concatenate([np.fromiter((index[g] for g in c), np.int64, len(c)) for c in kept.values()])
        vals = np.concatenate([np.fromiter(c.values(), np.int64, len(c)) for c in kept.values()])
        matrix = sp.csr_matrix((vals, (rows, cols)), shape=(len(kept), len(vocab)), dtype=np.int64)
        return cls(list(kept), vocab, matrix, [n[lang] for lang in kept], ngrams, alpha)

    def extend(self, texts: Mapping[str, Iterable[str]], min_count: int = MIN_COUNT) -> "NgramIdentifier":
        """This model with the languages of ``texts`` added (or relearned, where it knew them already): a language
        outside every bundled set gets in from the user's own monolingual text."""
        counts, totals = self.language_counts(), dict(zip(self.languages, self.totals.tolist()))
        for lang, lines in texts.items():
            counts[lang] = _count(self._analyze, lines)
            totals[lang] = sum(counts[lang].values())
        return self._from_counts(counts, self.ngrams, self.alpha, min_count, totals)

    def language_counts(self) -> dict[str, dict[str, int]]:
        """Each language's stored n-gram counts."""
        out = {}
        for r, lang in enumerate(self.languages):
            row = self.counts.getrow(r)
            out[lang] = {self.vocabulary[j]: int(k) for j, k in zip(row.indices, row.data)}
        return out

    # -- judging --------------------------------------------------------------------------------------------------

    def scores(self, texts: Sequence[str], languages: Sequence[str] | None = None,
               per_ngram: bool = True) -> tuple[list[str], np.ndarray]:
        """(candidate languages, per-text log-likelihood of each — per n-gram, or the text's whole with
        ``per_ngram=False``): ``languages`` restricts the candidates to those given that the model knows (all of
        them when None)."""
        import scipy.sparse as sp

        rows = self._rows(languages)
        data: list[int] = []
        cols: list[int] = []
        indptr, totals = [0], np.zeros(len(texts), dtype=np.float64)
        for i, text in enumerate(texts):
            grams = self._analyze(text or "")
            totals[i] = len(grams)
            found: dict[int, int] = {}
            for g in grams:
                j = self.index.get(g)
                if j is not None:
                    found[j] = found.get(j, 0) + 1
            cols.extend(found)
            data.extend(found.values())
            indptr.append(len(cols))
        x = sp.csr_matrix((np.asarray(data, dtype=np.float32), np.asarray(cols, dtype=np.int64), indptr),
                          shape=(len(texts), len(self.vocabulary)))
        d = self.delta[rows]
        loglik = np.asarray((x @ d.T).todense(), dtype=np.float64) + totals[:, None] * self.floor[rows][None, :]
        return [self.languages[r] for r in rows], loglik / np.maximum(totals, 1)[:, None] if per_ngram else loglik

    def identify(self, texts: Sequence[str], languages: Sequence[str] | None = None) -> list[Identified]:
        """Each text's most likely language among the candidates and its softmax share (see the module)."""
        names, s = self.scores(texts, languages, per_ngram=False)
        out = []
        for i, text in enumerate(texts):
            if not any(ch.isalpha() for ch in text or ""):
                out.append(Identified(None, 0.0))
                continue
            row = s[i] - s[i].max()
            p = np.exp(row / TEMPERATURE)
            best = int(np.argmax(row))
            out.append(Identified(names[best], float(p[best] / p.sum())))
        return out

    def _rows(self, languages: Sequence[str] | None) -> list[int]:
        if languages is None:
            return list(range(len(self.languages)))
        rows = [self._row[x] for x in dict.fromkeys(languages) if x in self._row]
        if not rows:
            raise ValueError(f"none of the candidate languages {', '.join(languages)} is known to the model")
        return rows

    # -- files ----------------------------------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """One compressed ``.npz``: languages, vocabulary, the sparse counts, each language's total and settings."""
        from xlsent.utils.io import atomic_path

        path = Path(path)
        c = self.counts.tocsr()
        with atomic_path(path) as tmp, open(tmp, "wb") as f:
            np.savez_compressed(
                f, languages=np.asarray(self.languages), vocabulary=np.asarray(self.vocabulary),
                data=c.data.astype(np.uint32), indices=c.indices.astype(np.int32), indptr=c.indptr.astype(np.int64),
                totals=self.totals, ngrams=np.asarray(self.ngrams), alpha=np.asarray(self.alpha))
        return path

    @classmethod
    def load(cls, path: str | Path) -> "NgramIdentifier":
        import scipy.sparse as sp

        with np.load(path, allow_pickle=False) as z:
            langs, vocab = [str(x) for x in z["languages"]], [str(x) for x in z["vocabulary"]]
            counts = sp.csr_matrix((z["data"].astype(np.int64), z["indices"], z["indptr"]),
                                   shape=(len(langs), len(vocab)))
            return cls(langs, vocab, counts, z["totals"], (int(z["ngrams"][0]), int(z["ngrams"][1])),
                       float(z["alpha"]))


def _count(analyze, lines: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in lines:
        for g in analyze(line or ""):
            counts[g] = counts.get(g, 0) + 1
    return counts


def udhr_part(paragraph_id: str) -> str:
    """Which part of the UDHR a paragraph is in for language identification, by article, never by line: ``test``
    (articles 5, 10, …, 30: read once), ``dev`` (articles 3, 8, …, 28: choosing settings) or ``train`` (the
    preamble and every other article: what the bundled model learns from)."""
    article = paragraph_id.split(".")[0]  # "10.1": article 10's first paragraph
    if not article.isdigit():
        return "train"
    return {0: "test", 3: "dev"}.get(int(article) % 5, "train")


#: udhr-all declarations the identifier does not learn: the udhr package's ``ckb`` (Central Kurdish, written in the
#: Arabic script) is the Latin Kurmanji text of its ``kmr`` word for word — two labels for one text would tie
NOT_LEARNED = {"ckb": "the udhr package's ckb declaration is its kmr (Kurmanji) text, word for word"}


def udhr_texts(part: str = "train") -> dict[str, list[str]]:
    """Each ``udhr-all`` language's paragraphs of one part (:func:`udhr_part`), English's once (every declaration
    aligns to the same English paragraphs), keyed by ISO 639-3 code; the languages of :data:`NOT_LEARNED` left
    out."""
    from xlsent.data.sets import registry

    ds = registry.load("udhr-all", "pairs")
    out: dict[str, list[str]] = {}
    english: set[str] = set()
    for pid, src, tgt, lang in zip(ds["id"], ds["src"], ds["tgt"], ds["tgt_lang"]):
        if udhr_part(pid) != part or lang in NOT_LEARNED:
            continue
        out.setdefault(lang, []).append(tgt)
        if src not in english:
            english.add(src)
            out.setdefault("eng", []).append(src)
    return out


def learn_bundled() -> NgramIdentifier:
    """The bundled model: every ``udhr-all`` language (and English) learned from the UDHR's training articles only,
    so that the held-out figures of ``benchmarks/clean_pairs/langid_heldout.py`` are the shipped model's."""
    return NgramIdentifier.learn(udhr_texts("train"), min_count=BUNDLED_MIN_COUNT)


@lru_cache(maxsize=1)
def bundled_identifier() -> NgramIdentifier:
    """The bundled model (:data:`BUNDLED_MODEL`), read once."""
    from xlsent.data.sets.bundled import data_dir
    from xlsent.utils.errors import XlsentError

    path = data_dir() / BUNDLED_MODEL
    if not path.is_file():
        raise XlsentError(f"{path}: the bundled language identifier is missing — rebuild it with "
                          "python scripts/build_data.py --only langid")
    return NgramIdentifier.load(path)


def read_learn(learn: Mapping[str, str | Path] | None, option: str = "learn") -> dict[str, list[str]]:
    """``learn`` (language code → a UTF-8 text file of that language, one text a line) checked and read: each
    code (:func:`language_of`) → its non-empty lines; a bad code, a missing or empty file is one clear error."""
    from xlsent.utils.errors import XlsentError, named

    out: dict[str, list[str]] = {}
    if isinstance(learn, (list, tuple)):  # the CLI's form, "L:FILE" each
        learn = parse_learn(learn, option)
    for code, path in (learn or {}).items():
        lang = language_of(code)
        if lang in out:
            raise XlsentError(f"{named(option, code)}: {lang} is taught twice — give one file a language")
        if lang is None:
            raise XlsentError(f"{named(option, code)}: not a language code — give an ISO 639-1 or 639-3 code (or "
                              "three letters of your own, e.g. qaa–qtz)")
        p = Path(path)
        if not p.is_file():
            raise XlsentError(f"{named(option, f'{code}:{path}')}: no such file — give a text file of that language, "
                              "one text a line")
        try:
            lines = [x for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]
        except (UnicodeDecodeError, OSError) as exc:
            raise XlsentError(f"{named(option, f'{code}:{path}')}: cannot be read as UTF-8 text "
                              f"({exc.__class__.__name__}) — give a UTF-8 text file of that language, one text a "
                              "line") from None
        if not lines:
            raise XlsentError(f"{named(option, f'{code}:{path}')}: the file holds no text")
        out[lang] = lines
    return out


def parse_learn(specs: Sequence[str], option: str = "--learn") -> dict[str, str]:
    """The CLI's repeatable ``--learn L:FILE`` as {L: FILE}."""
    from xlsent.utils.errors import XlsentError

    out = {}
    for spec in specs:
        code, sep, path = spec.partition(":")
        if not sep or not code or not path:
            raise XlsentError(f"{option} {spec!r}: give L:FILE, e.g. {option} xyz:my-text.txt")
        out[code] = path
    return out


def identifier_with(learn: Mapping[str, str | Path] | None = None, option: str = "learn") -> NgramIdentifier:
    """The bundled identifier, taught the languages of ``learn`` (:func:`read_learn`) where given — a language
    outside every bundled set gets in from the user's own monolingual text. The taught model is kept for the same
    texts for the rest of the process."""
    if not learn:
        return bundled_identifier()
    texts = read_learn(learn, option)
    return _taught(tuple((lang, tuple(lines)) for lang, lines in sorted(texts.items())))


@lru_cache(maxsize=4)
def _taught(texts: tuple) -> NgramIdentifier:
    return bundled_identifier().extend(dict(texts), min_count=BUNDLED_MIN_COUNT)  # pruned as the bundled ones are


def cld2_only(model: NgramIdentifier) -> frozenset[str]:
    """CLD2's languages (ISO 639-3) that ``model`` knows neither as themselves nor through a language of their
    macrolanguage (CLD2's ``ar`` is the model's ``arb``…; its ``bh``, the Bihari group, is the model's Bhojpuri,
    Maithili and Magahi and no ISO 639-3 language) nor under :data:`CLD2_AS`."""
    known = set(model.languages) | {macrolanguage(lang) for lang in model.languages} - {None}
    return frozenset(c for c in detectable_639_3() if c not in known and CLD2_AS.get(c, c) not in known)


#: CLD2's codes for a language the model knows under another code: its Filipino is the model's Tagalog (Filipino is
#: the standard form of Tagalog; CLD2 reads the UDHR's Tagalog as Filipino)
CLD2_AS = {"fil": "tgl"}


def identify_texts(model: NgramIdentifier, texts: Sequence[str], languages: Sequence[str] | None = None
                   ) -> list[Identified]:
    """``model.identify``, and for a line CLD2 reliably reads as a language of :func:`cld2_only` (among
    ``languages``, when given: ISO 639-1 or 639-3 codes) CLD2's reading — its score CLD2's share of the line in that
    language, which is no calibrated probability (CLD2 gives none). With candidates only CLD2 knows, a line CLD2
    does not reliably read as one of them gets no language (None, 0)."""
    extra = cld2_only(model)
    known = None
    if languages is not None:
        codes = [CLD2_AS.get(c, c) for c in (language_of(x) for x in languages) if c]
        known = [c for c in dict.fromkeys(codes) if c in model.languages]
        extra = extra & set(codes)
        if not known and not extra:
            raise ValueError(f"none of the candidate languages {', '.join(map(str, languages))} is known to the "
                             "model or to CLD2")
    out = model.identify(texts, known) if known or known is None else [Identified(None, 0.0) for _ in texts]
    if extra:
        for i, text in enumerate(texts):
            found = detect(text or "")
            code = found.code if found.reliable else None
            if code in extra:
                out[i] = Identified(code, found.percent / 100)
    return out


def bundled_model(name: str = "udhr-langid") -> NgramIdentifier:
    """The registry's loader: the bundled language identifier (:func:`bundled_identifier`)."""
    return bundled_identifier()
