"""Moved to :mod:`xlsent.data.formats.conll` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.formats import conll

sys.modules[__name__] = conll
