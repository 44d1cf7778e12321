"""Moved to :mod:`xlsent.data.text.transliterate` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.text import transliterate

sys.modules[__name__] = transliterate
