"""Moved to :mod:`xlsent.data.formats.text_source` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.formats import text_source

sys.modules[__name__] = text_source
