"""Moved to :mod:`xlsent.data.derived.projection` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.derived import projection

sys.modules[__name__] = projection
