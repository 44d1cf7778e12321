"""Moved to :mod:`xlsent.models.vocab.romanize` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.models.vocab import romanize

sys.modules[__name__] = romanize
