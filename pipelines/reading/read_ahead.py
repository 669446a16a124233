"""Reading a work unit's next chunk while the current one is processed.

Reading a chunk (Arrow's CSV, Parquet and TFRecord decoding, pyarrow compute casts and checks) runs
mostly outside the GIL, and so does what follows it (TensorFlow running the graph, gzip on the
writer's thread). One thread reading ahead lets the two overlap on a second core. It holds at most
`depth` finished chunks, so memory grows by that, not with the unit.
"""

from __future__ import annotations

import queue
import threading
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")

_END = object()


def read_ahead(items: Iterable[T], depth: int = 1) -> Iterator[T]:
    """The items of `items`, in order, produced by a thread of their own up to `depth` ahead.

    An error of the producer is raised here, at the item it stopped at. Closing this iterator early
    (the consumer failed or stopped) stops the producer after the item it is on and closes `items`.
    """
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(entry) -> bool:
        while not stop.is_set():
            try:
                ready.put(entry, timeout=0.05)
                return True
            except queue.Full:
                pass
        return False

    def produce() -> None:
        iterator = iter(items)
        try:
            for item in iterator:
                if not offer((item, None)):
                    return
            offer((_END, None))
        except BaseException as error:  # handed to the consumer, which raises it
            offer((_END, error))
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()

    producer = threading.Thread(target=produce, name="skewless-read-ahead", daemon=True)
    producer.start()
    try:
        while True:
            item, error = ready.get()
            if item is _END:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        producer.join()
