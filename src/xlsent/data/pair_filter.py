"""Moved to :mod:`xlsent.data.filters.pair_filter` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.filters import pair_filter

sys.modules[__name__] = pair_filter
