"""Moved to :mod:`xlsent.data.derived.structural` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.derived import structural

sys.modules[__name__] = structural
