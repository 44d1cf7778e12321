"""Moved to :mod:`xlsent.data.sets.stats` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.sets import stats

sys.modules[__name__] = stats
