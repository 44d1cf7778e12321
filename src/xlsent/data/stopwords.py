"""Moved to :mod:`xlsent.data.text.stopwords` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.text import stopwords

sys.modules[__name__] = stopwords
