"""Parallel data: readers, cleaning filters, negatives, bundled datasets."""
