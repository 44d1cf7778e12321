"""Memory a process no longer uses, handed back to the system."""

from __future__ import annotations


def trim_heap() -> None:
    """Collect unreachable objects, then return the freed heap to the system where the C library can (glibc's
    ``malloc_trim``); elsewhere only the collection. A training run's freed activations otherwise stay in glibc's
    arenas, and whatever the process does next (scoring, loading models) adds to that."""
    import ctypes
    import ctypes.util
    import gc

    gc.collect()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass
