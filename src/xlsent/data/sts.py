"""Moved to :mod:`xlsent.data.formats.sts` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.formats import sts

sys.modules[__name__] = sts
