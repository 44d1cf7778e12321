"""Moved to :mod:`xlsent.data.text.splitting` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.data.text import splitting

sys.modules[__name__] = splitting
