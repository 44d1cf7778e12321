"""Moved to :mod:`xlsent.data.formats.dictionary` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.formats import dictionary

sys.modules[__name__] = dictionary
