"""Moved to :mod:`xlsent.data.formats.readers` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.formats import readers

sys.modules[__name__] = readers
