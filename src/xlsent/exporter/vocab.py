"""Moved to :mod:`xlsent.models.vocab.trim` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.models.vocab import trim

sys.modules[__name__] = trim
