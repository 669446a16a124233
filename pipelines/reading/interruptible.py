"""A blocking call into ADBC's PostgreSQL driver that Ctrl-C ends.

ADBC's driver manager (PostgreSQL), called from the main thread, swaps in a SIGINT handler of its own for the
length of each call: it cancels the statement on the server and tells Python nothing. A cancelled `execute`
returned, its error showed only once rows were read (never, for a query whose schema was all that was wanted),
and a run carried on and published after a Ctrl-C. Called from any other thread it leaves SIGINT to Python. So
the call runs in a thread of its own while the main thread waits for it, where Ctrl-C raises KeyboardInterrupt
(the `skewless` command's handler sees it); the statement is then cancelled and the interrupt goes on.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Callable, TypeVar

T = TypeVar("T")


def interruptible(call: Callable[[], T], cancel: Callable[[], None] | None = None) -> T:
    """`call()`; on Ctrl-C in the main thread, `cancel()` (the driver's statement cancel), then KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        return call()  # only the main thread gets KeyboardInterrupt: elsewhere the driver's own handling is moot
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed to the waiting thread, which raises it
            outcome["error"] = error

    worker = threading.Thread(target=run, name="skewless-database-call", daemon=True)
    worker.start()
    try:
        worker.join()
    except BaseException:
        if cancel is not None:
            with contextlib.suppress(Exception):  # the statement may have ended meanwhile
                cancel()
        _wait_for(worker)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


# how long a cancelled call may take to return before the interrupt goes on without it
_CANCELLED_CALL_SECONDS = 10.0


def _wait_for(worker: threading.Thread) -> None:
    """Lets a cancelled call return before the process goes on to end: a thread still inside the driver when the
    interpreter finalizes is unwound through its C++ and aborts the process (DuckDB: "FATAL: exception not
    rethrown", exit -6). Further Ctrl-Cs meanwhile (the `skewless` command repeats one until it is reported) wait."""
    deadline = time.monotonic() + _CANCELLED_CALL_SECONDS
    while worker.is_alive() and time.monotonic() < deadline:
        try:
            worker.join(0.05)
        except KeyboardInterrupt:
            pass
