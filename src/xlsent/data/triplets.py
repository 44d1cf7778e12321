"""Moved to :mod:`xlsent.data.derived.triplets` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.derived import triplets

sys.modules[__name__] = triplets
