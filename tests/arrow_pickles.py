"""Counts the Arrow tables and record batches pickled in a block: tests of pipelines/runner/arrow_coder.py."""

import collections
import contextlib
import copyreg

from skewless.pipelines.runner import arrow_coder


@contextlib.contextmanager
def arrow_pickles():
    """Counts the tables and record batches pickled in the block, by type name."""
    counts = collections.Counter()

    def counting(value):
        counts[type(value).__name__] += 1
        return value.__reduce__()

    before = {kind: copyreg.dispatch_table.get(kind) for kind in arrow_coder.ARROW_TYPES}
    copyreg.dispatch_table.update({kind: counting for kind in arrow_coder.ARROW_TYPES})
    try:
        yield counts
    finally:
        for kind, reducer in before.items():
            if reducer is None:
                copyreg.dispatch_table.pop(kind, None)
            else:
                copyreg.dispatch_table[kind] = reducer
