"""Moved to :mod:`xlsent.data.sets.mixing` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.sets import mixing

sys.modules[__name__] = mixing
