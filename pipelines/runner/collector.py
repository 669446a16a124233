"""The garbage collector leaves the objects that existed before a job alone while the job runs.

A process that has imported TensorFlow, tf.Transform and Beam holds about 900,000 long-lived objects, and a
notebook that ran jobs before holds more. Every full collection during a job walks all of them again, and a
job makes enough objects (traced graphs, Beam's transforms and bundles) to trigger hundreds of collections:
in a warm process, a 1,000-row run spent about a third of its CPU seconds there (issue 34). `gc.freeze()`
moves the objects that exist now out of the collector's reach; `gc.unfreeze()` puts them back when the job
ends, so the host process's collector is as it was (garbage among them is collected then). Objects the job
makes are collected as usual meanwhile.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def pre_existing_objects_frozen():
    """Freezes the heap for the block, then unfreezes it; a process that froze objects itself (the `skewless`
    command does after its imports, `runtime.import_frozen`) keeps its own arrangement untouched."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
