"""Moved to :mod:`xlsent.data.sets.pairs` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.sets import pairs

sys.modules[__name__] = pairs
