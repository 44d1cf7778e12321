"""Moved to :mod:`xlsent.data.sets.bundled` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.sets import bundled

sys.modules[__name__] = bundled
