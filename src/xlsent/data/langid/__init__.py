"""Language identification of lines, offline, in one package: the code forms, CLD2, xlsent's n-gram identifier and
the script of a text.

* :mod:`~xlsent.data.langid.codes` — the forms a language is named in: ISO 639-3 (the package's own:
  :func:`~xlsent.data.langid.codes.iso639_3`, :func:`~xlsent.data.langid.codes.language_of`), the short form of
  CLD2, of the reports and of a user's checked code (:func:`language_code`: ISO 639-1 where there is one, via
  ``langcodes``), and the one :func:`~xlsent.data.langid.codes.macrolanguage` (``form="639-3"`` or ``"639-1"``;
  :func:`macro` is its ``"639-1"`` form).
* :mod:`~xlsent.data.langid.cld2` — CLD2 (``pycld2``, about 160 languages, its model in the wheel): :func:`detect`,
  :func:`detectable`; the only module that reads CLD2's codes.
* :mod:`~xlsent.data.langid.ngram` — the character n-gram identifier of every ``udhr-all`` language and any taught
  it (:class:`~xlsent.data.langid.ngram.NgramIdentifier`, the bundled model ``langid/udhr-ngrams.npz``,
  :func:`~xlsent.data.langid.ngram.identify_texts`).
* :mod:`~xlsent.data.langid.scripts` — the writing system of a text: ISO 15924 (``Latn``:
  :func:`~xlsent.data.langid.scripts.detect_script`), and the language filter's coarser :func:`script`
  (``LATIN``, from the first word of the Unicode names).
* :mod:`~xlsent.data.langid.sides` — each side's language of a pairs file: declared, else detected
  (:func:`detect_side`, :func:`pair_languages`).

This module re-exports the names that ``xlsent.data.langid`` held when it was one module (CLD2 and the codes);
the identifier's are in :mod:`~xlsent.data.langid.ngram` (and, as before, ``xlsent.data.identify``).
"""

from xlsent.data.langid.cld2 import Detection, detect, detectable, detectable_macros
from xlsent.data.langid.codes import language_code, macro, macrolanguage
from xlsent.data.langid.scripts import script
from xlsent.data.langid.sides import SideLanguage, detect_side, pair_languages

__all__ = ["Detection", "SideLanguage", "detect", "detect_side", "detectable", "detectable_macros",
           "language_code", "macro", "macrolanguage", "pair_languages", "script"]
