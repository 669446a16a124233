"""The stop signal of the work a thread runs, where a blocking call deep inside that work can see it.

A bundle's elements run on a pool (`bundle_threads.ThreadedBundle`), each told to stop by an event once another
failed or the job was interrupted; between its chunks the element checks it. A database read blocks inside its
driver for as long as the server takes (a slow query: minutes), where no check runs, so the read itself waits
for the event too (`reading.interruptible`) and cancels the statement.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

_RUNNING = threading.local()


class Stopped(Exception):
    """Raised by work that stopped because its `stop` event was set: another element of its bundle failed, or
    the job was interrupted (never the bundle's own error)."""


@contextlib.contextmanager
def stopped_by(stop: threading.Event) -> Iterator[None]:
    """Within the block, `element_stop()` on this thread is `stop`."""
    outer = getattr(_RUNNING, "stop", None)
    _RUNNING.stop = stop
    try:
        yield
    finally:
        _RUNNING.stop = outer


def element_stop() -> threading.Event | None:
    """The event that stops the work this thread runs (`stopped_by`); None outside such work."""
    return getattr(_RUNNING, "stop", None)
