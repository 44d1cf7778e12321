"""Moved: the script of a text (ISO 15924) lives in :mod:`xlsent.data.langid.scripts`. This module re-exports its
names for the imports that name it."""

from xlsent.data.langid.scripts import (SCRIPT_PREFIXES, UNDETERMINED, char_script, detect_script, letter_like,
                                        newer_letter, script_counts)

__all__ = ["SCRIPT_PREFIXES", "UNDETERMINED", "char_script", "detect_script", "letter_like", "newer_letter",
           "script_counts"]
