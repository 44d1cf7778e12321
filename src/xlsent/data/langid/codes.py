"""Language codes: the forms a language is named in, and the one way to its macrolanguage.

The package's own form is ISO 639-3 (``nya``, ``cmn``: what the n-gram identifier learns and answers, through
``python-iso639``). Two edges need another:

* CLD2 names languages as ``langcodes`` normalises them — ISO 639-1 where there is one (``ny``, ``zh``), else
  ISO 639-3 — and so do a user's declared codes once checked (:func:`language_code`), the pairs files and the
  reports: :func:`short_form`;
* a language's macrolanguage (:func:`macrolanguage`, SIL's ISO 639-3 table) in either form: ``form="639-3"``
  (``cmn`` → ``zho``; None where it belongs to none) or ``form="639-1"`` (``cmn`` → ``zh``; the code itself, in
  its short form, where it belongs to none: a key to compare CLD2's readings with a declared code).
"""

from __future__ import annotations

from functools import lru_cache

from xlsent.utils.errors import XlsentError, named

#: the forms :func:`macrolanguage` answers in
FORMS = ("639-3", "639-1")


def language_code(code: str, option: str = "lang") -> str:
    """``code`` as langcodes normalises it (ISO 639-1 where there is one), or an error naming ``option``."""
    import langcodes

    try:
        lang = langcodes.Language.get(code.strip())
    except (ValueError, LookupError):
        lang = None
    if lang is None or not lang.is_valid() or not lang.language:
        raise XlsentError(f"{named(option, code)}: not a known language code — give an ISO 639-1 or 639-3 code, "
                          "e.g. ny or nya, en or eng")
    return lang.language


@lru_cache(maxsize=None)
def short_form(code: str) -> str:
    """``code`` as ``langcodes`` normalises it — ISO 639-1 where there is one (``nya`` → ``ny``, ``iw`` → ``he``,
    ``zh-Hant`` → ``zh``) — or as given when it is none: CLD2's form, and that of a declared code."""
    import langcodes

    try:
        return langcodes.Language.get(code).language or code
    except (ValueError, LookupError):
        return code


@lru_cache(maxsize=None)
def iso639_3(code: str) -> str | None:
    """A code as ISO 639-3 (``ny`` → ``nya``), or None when it is no language code."""
    import iso639

    try:
        return iso639.Language.match(code.strip()).part3
    except (iso639.LanguageNotFoundError, ValueError, LookupError):
        return None


def language_of(code: str) -> str | None:
    """A code for the identifier: ISO 639-1 or 639-3 as ISO 639-3 (``ny`` → ``nya``); any other three letters
    (``qaa``–``qtz``: for local use) as given, lower-cased; else None."""
    c = str(code).strip().lower()
    return iso639_3(c) or (c if len(c) == 3 and c.isascii() and c.isalpha() else None)


def _macro_639_3(code: str) -> str | None:
    import iso639

    try:
        return iso639.Language.match(code).macrolanguage or None
    except (iso639.LanguageNotFoundError, ValueError, LookupError):
        return None


@lru_cache(maxsize=None)
def macrolanguage(code: str | None, form: str = "639-3", own: bool = False) -> str | None:
    """The macrolanguage ``code`` belongs to in ISO 639-3 (SIL's table, through ``python-iso639``), in ``form``:

    * ``"639-3"`` — its ISO 639-3 code (``cmn`` → ``zho``, ``zlm`` → ``msa``, ``hrv`` → ``hbs``), or None when the
      language belongs to none;
    * ``"639-1"`` — its short form, ISO 639-1 where it has one (``cmn``, ``yue``, ``hsn`` → ``zh``; ``arb`` →
      ``ar``; ``khk`` → ``mn``; ``quz``, ``qvh`` → ``qu``; ``ind``, ``zlm`` → ``ms``; ``hrv``, ``srp``, ``bos`` →
      ``sh``; ``nob`` → ``no``), else the code itself in its short form (:func:`short_form`): CLD2 names one member
      or the macrolanguage where a user may name another member, and CLD2 cannot tell the members apart (it reads
      Indonesian paragraphs as Malay, Croatian as Bosnian) — so the language filter compares in this form.
      An empty code is returned as given.

    ``own=True``: the key the language filter compares by — the macrolanguage, else the code itself (in ``"639-3"``:
    the code as ISO 639-3, ``ny`` → ``nya``, else its short form; see :func:`macro`)."""
    if form not in FORMS:
        raise ValueError(f"form={form!r}: give one of {', '.join(FORMS)}")
    if form == "639-3":
        if own:
            return _filter_key(code) if code else code
        return _macro_639_3(code) if code else None
    if not code:
        return code
    import iso639

    norm = short_form(code)
    try:
        whole = _macro_639_3(norm)
        if whole:
            lang = iso639.Language.from_part3(whole)
            return lang.part1 or lang.part3
    except (iso639.LanguageNotFoundError, ValueError, LookupError):
        pass
    return norm


def macro(code: str | None, form: str = "639-1") -> str | None:
    """The key the language filter compares by — the macrolanguage ``code`` belongs to, else the code itself — in
    ``form``:

    * ``"639-1"`` — ``macrolanguage(code, form="639-1")`` (:func:`macrolanguage`): the short form, what the
      filter's notes print;
    * ``"639-3"`` — the same key in ISO 639-3, the form the filter compares in: the macrolanguage's code (``cmn``,
      ``zh`` → ``zho``; ``ind``, ``zlm``, ``ms`` → ``msa``; ``hrv``, ``bos`` → ``hbs``), else the code as ISO 639-3
      (``ny`` → ``nya``), else the code in its short form (one ISO 639 lacks). A code is read through its short
      form first, so CLD2's and old codes land where they did: ``iw`` → ``he`` → ``heb``, ``in`` → ``id`` →
      ``msa``; Tagalog and Filipino one key, as they were one (langcodes reads ``tl`` and ``tgl`` as ``fil``).

    The two forms group the same codes together (checked on every ISO 639 code, CLD2's and the n-gram
    identifier's), and the ``"639-1"`` key of a ``"639-3"`` key is the ``"639-1"`` key of the code.
    ``macrolanguage(code, form, own=True)``, under the name the filter has always used."""
    return macrolanguage(code, form, own=True)


@lru_cache(maxsize=None)
def _filter_key(code: str) -> str:
    norm = short_form(code)
    return _macro_639_3(norm) or iso639_3(norm) or norm
