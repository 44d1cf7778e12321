"""Moved to :mod:`xlsent.data.formats.multiple_choice` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.formats import multiple_choice

sys.modules[__name__] = multiple_choice
