"""Handing the memory a stage freed back to the system before the next stage starts.

The `skewless` command has glibc's malloc keep what it frees for reuse (`runtime.keep_freed_memory`): each chunk's
arrays take the pages the last chunk's left instead of faulting in fresh ones. Within a stage that is what makes it
fast; past its end the pages are held for nothing, and the next stage, allocating other sizes on other threads,
grew its peak on top of them. At 1M census rows (2 cores, 2026-11-29) trimming gave back 134 MiB when the analysis
graph's stage started (the units parsed on two threads; 250 MiB with 8 MB CSV blocks) and 63 MiB when the
transform pass did. A trim takes ~9 ms per 180 MiB returned, and the next stage's first page faults, once per
stage, not per chunk.
"""

from __future__ import annotations

import pyarrow as pa

from skewless.runtime import glibc_function

_MALLOC_TRIM = glibc_function("malloc_trim")  # None where malloc is not glibc's: nothing kept to hand back this way


def return_freed_memory() -> None:
    """Returns the free pages malloc's arenas and Arrow's memory pool hold to the system (what is in use stays)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
    pool = pa.default_memory_pool()
    if pool.backend_name != "system":  # the system pool's release is malloc_trim, done above
        pool.release_unused()
