"""Moved to :mod:`xlsent.data.formats.documents` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.formats import documents

sys.modules[__name__] = documents
