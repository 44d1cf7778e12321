"""Moved to :mod:`xlsent.data.sets.registry` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.sets import registry

sys.modules[__name__] = registry
