"""Moved: the n-gram language identifier lives in :mod:`xlsent.data.langid.ngram`, the code forms in
:mod:`xlsent.data.langid.codes`. This module re-exports their names for the imports that name it."""

from xlsent.data.langid.codes import iso639_3, language_of, macrolanguage
from xlsent.data.langid.ngram import (ALPHA, BUNDLED_MIN_COUNT, BUNDLED_MODEL, CLD2_AS, MIN_COUNT, NGRAMS, NOT_LEARNED,
                                      TEMPERATURE, Identified, NgramIdentifier, bundled_identifier, bundled_model,
                                      cld2_only, identifier_with, identify_texts, learn_bundled, parse_learn,
                                      read_learn, udhr_part, udhr_texts)

__all__ = ["ALPHA", "BUNDLED_MIN_COUNT", "BUNDLED_MODEL", "CLD2_AS", "MIN_COUNT", "NGRAMS", "NOT_LEARNED",
           "TEMPERATURE", "Identified", "NgramIdentifier", "bundled_identifier", "bundled_model", "cld2_only",
           "identifier_with", "identify_texts", "iso639_3", "language_of", "learn_bundled", "macrolanguage",
           "parse_learn", "read_learn", "udhr_part", "udhr_texts"]
