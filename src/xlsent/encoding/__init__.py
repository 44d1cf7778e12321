"""Turning texts into vectors: length-sorted embedding and cached hidden-layer features."""
