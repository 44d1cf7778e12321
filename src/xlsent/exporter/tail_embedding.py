"""Moved to :mod:`xlsent.models.vocab.tail_embedding` (issue 78); the old name kept for old imports: the same module."""

import sys

from xlsent.models.vocab import tail_embedding

sys.modules[__name__] = tail_embedding
