"""One stage of a work unit's processing on a thread of its own, so stages overlap on several cores.

The transform pass's shard writers compress and write on one each (`shards.ShardWriter`): while one block
is gzip'd the next chunk goes through the graph and the encoder. zlib releases the GIL, so the two run on
separate cores. The analysis counts the raw statistics on two (a part of the columns each) while its graph runs
(`analysis.tables_and_statistics`). A stage runs its calls one at a time in the order they were submitted, so
the output is what running them one after another gives, byte for byte; at most `pending` calls are submitted
and not finished (the running one included), which bounds the memory it holds whatever the data size.
(An encode stage of its own, encoding one slice while the next went through the graph, was measured and
not kept: TensorFlow already runs the graph on both cores, and the pass was 5-15% slower with it.)"""

from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Callable


class StageThread:
    """Runs the calls given to `submit` on a thread of its own, in order, at most `pending` unfinished.

    With `threaded=False` each call runs inside `submit` instead: the same calls, in the same order, on the
    caller's thread. An error of a call is raised by the next `submit` or by `drain`.
    """

    def __init__(self, name: str, pending: int, threaded: bool = True):
        self._limit = pending
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name) if threaded else None
        self._pending: deque = deque()

    def submit(self, call: Callable, *args) -> None:
        if self._pool is None:
            call(*args)
            return
        while len(self._pending) >= self._limit:
            self._pending.popleft().result()
        self._pending.append(self._pool.submit(call, *args))

    def drain(self) -> None:
        """Waits for every call submitted and ends the thread; raises the first error of a call."""
        try:
            while self._pending:
                self._pending.popleft().result()
        finally:
            self.abort()

    def abort(self) -> None:
        """Drops the calls not yet started and waits for the running one: nothing runs after this returns."""
        for future in self._pending:
            future.cancel()
        self._pending.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
