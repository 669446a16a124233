"""`ThreadedMap`: a Map whose elements of one bundle run on the worker's cores at once, results in element order.

The analysis parses each work unit into its kept stream (pipelines/analyze/analysis.py). On an in-process runner
every unit arrives in one bundle and Beam runs a bundle's elements one after the other on one thread, while
parsing (Arrow's CSV reader, compute kernels, IPC writes) runs mostly outside the GIL: one core parsed and the
other waited. Here a bundle's elements are handed to a pool of one thread per core as they arrive and their
results are emitted when the bundle finishes, in the order the elements came. A distributed runner still spreads
the elements over its workers by bundle; each worker's bundle uses its own cores.

`fn(element, *args, stop=event)` runs on a pool thread: it should return soon after `event` is set, which
happens when the bundle fails or is interrupted (Ctrl-C in the waiting thread); the bundle waits for every
started element to return before it ends, so no thread writes after the job cleaned up its staging folder.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue


class ThreadedMap(beam.DoFn):
    """`beam.Map(fn, *args)` for elements in the global window, up to `threads` (default: the cores) at once."""

    def __init__(self, fn: Callable, *args, threads: int | None = None):
        super().__init__()
        self._fn = fn
        self._args = args
        self._threads = threads or os.cpu_count() or 1
        self._pool = None

    def start_bundle(self):
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="skewless-bundle")
        self._pending = []

    def process(self, element):
        self._pending.append(self._pool.submit(self._fn, element, *self._args, stop=self._stop))

    def finish_bundle(self):
        try:
            for future in self._pending:
                yield WindowedValue(future.result(), MIN_TIMESTAMP, [GlobalWindow()])
        finally:
            self._stopped()

    def teardown(self):
        self._stopped()

    def _stopped(self) -> None:
        """Stops the elements not finished (nothing once all returned), and waits for the started ones."""
        if self._pool is not None:
            self._stop.set()
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
