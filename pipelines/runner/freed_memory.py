"""Handing the memory a stage freed back to the system before the next stage starts.

The `skewless` command has glibc's malloc keep what it frees for reuse (`runtime.keep_freed_memory`): each chunk's
arrays take the pages the last chunk's left instead of faulting in fresh ones. Within a stage that is what makes it
fast; past its end the pages are held for nothing, and the next stage allocates other sizes on other threads, so
the process's peak was the sum of two stages' working sets. At 1M census rows (2 cores, 2026-11-29) the parse
stage left 250-300 MB free in the arenas (its units parsed on two threads) when the analysis graph started, and
the analysis left 20-40 MB when the transform pass did. Trimming once per stage costs a few milliseconds and the
next stage's first page faults, not a fault per chunk.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import pyarrow as pa


def _glibc_malloc_trim():
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing kept to hand back this way
        return None


_MALLOC_TRIM = _glibc_malloc_trim()


def return_freed_memory() -> None:
    """Returns the free pages malloc's arenas and Arrow's memory pool hold to the system (what is in use stays)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
    pool = pa.default_memory_pool()
    if pool.backend_name != "system":  # the system pool's release is malloc_trim, done above
        pool.release_unused()

