"""Moved to :mod:`xlsent.data.formats.comparable` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.formats import comparable

sys.modules[__name__] = comparable
