"""Moved to :mod:`xlsent.data.formats.labelled` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.formats import labelled

sys.modules[__name__] = labelled
