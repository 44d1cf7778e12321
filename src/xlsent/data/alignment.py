"""Moved to :mod:`xlsent.data.formats.alignment` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.formats import alignment

sys.modules[__name__] = alignment
