"""Moved to :mod:`xlsent.data.filters.noise_filters` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.filters import noise_filters

sys.modules[__name__] = noise_filters
