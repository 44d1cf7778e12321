"""Moved to :mod:`xlsent.data.filters.cleaning` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.filters import cleaning

sys.modules[__name__] = cleaning
