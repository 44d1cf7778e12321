"""xlsent: cross-lingual sentence embeddings for low-resource languages."""

from __future__ import annotations

__version__ = "0.1.0"
