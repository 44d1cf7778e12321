"""Moved to :mod:`xlsent.data.derived.negatives` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.derived import negatives

sys.modules[__name__] = negatives
