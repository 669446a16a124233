"""One stage of a work unit's processing on a thread of its own, so stages overlap on several cores.

The transform pass hands each chunk from one stage to the next (the graph on the worker's thread, encoding
and the split statistics on one `StageThread`, gzip on each shard writer's), so while one chunk is
compressed the next is encoded and the one after it transformed. NumPy, Arrow, TensorFlow's kernels and
zlib release the GIL, so the stages run on separate cores. A stage runs its calls one at a time in the
order they were submitted, so the output is what running them one after another gives, byte for byte; at
most `pending` calls are submitted and not finished (the running one included), which bounds the chunks it
holds whatever the data size.
"""

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
