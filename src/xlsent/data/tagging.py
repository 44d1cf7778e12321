"""Moved to :mod:`xlsent.data.formats.tagging` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.formats import tagging

sys.modules[__name__] = tagging
