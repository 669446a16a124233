"""Work of one bundle on the worker's cores at once: a bundle's elements run on a pool of one thread per core,
their results emitted in element order when the bundle finishes.

On an in-process runner every work unit arrives in one bundle and Beam runs a bundle's elements one after the
other on one thread, while the work per unit (Arrow's CSV reader and compute kernels, TensorFlow's graph, the
Example encoder, zlib) runs mostly outside the GIL: one core worked and the other waited. A distributed runner
still spreads the elements over its workers by bundle; each worker's bundle uses its own cores.

`ThreadedBundle.run_element(element, stop)` runs on a pool thread: it should return (or raise) soon after `stop`
is set, which happens when an element of the bundle failed or the waiting thread was interrupted (Ctrl-C); the
bundle waits for every started element before it ends, so no thread writes after the job cleaned up its staging
folder.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Callable

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from skewless.pipelines.runner.element_stop import stopped_by

_WAIT_STEP_SECONDS = 0.1


class ThreadedBundle(beam.DoFn):
    """A DoFn whose `run_element` runs up to `threads` (default: the cores) elements at once, in the global window;
    with one thread, each in `process`."""

    def __init__(self, threads: int | None = None):
        super().__init__()
        self._threads = threads
        self._pool = None

    def run_element(self, element, stop: threading.Event):
        raise NotImplementedError

    def start_bundle(self):
        self._stop = threading.Event()
        threads = self._threads or os.cpu_count() or 1
        # one thread: each element runs in `process`, on the DoFn's own thread, as a plain DoFn's would
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="skewless-bundle") if threads > 1 else None
        self._pending = []

    def process(self, element):
        if self._pool is None:
            yield self._run(element)
        else:
            self._pending.append(self._pool.submit(self._run, element))

    def _run(self, element):
        with stopped_by(self._stop):
            return self.run_element(element, self._stop)

    def finish_bundle(self):
        try:
            for future in self._pending:
                # waits in short steps: the waiting (main) thread runs Python between them, so a Ctrl-C that the
                # kernel handed to another thread is raised here within a step, not once the element is done
                while not wait([future], timeout=_WAIT_STEP_SECONDS).done:
                    pass
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


class ThreadedMap(ThreadedBundle):
    """`beam.Map(fn, *args)` as a `ThreadedBundle`: `fn(element, *args, stop=event)`."""

    def __init__(self, fn: Callable, *args, threads: int | None = None):
        super().__init__(threads)
        self._fn = fn
        self._args = args

    def run_element(self, element, stop: threading.Event):
        return self._fn(element, *self._args, stop=stop)
