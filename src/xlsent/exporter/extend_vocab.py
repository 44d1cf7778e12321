"""Moved to :mod:`xlsent.models.vocab.extend` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.models.vocab import extend

sys.modules[__name__] = extend
