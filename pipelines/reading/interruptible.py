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
import signal
import threading
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
        _cancel_and_wait(worker, cancel)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


# how long a cancelled call may take to return before the interrupt goes on without it
_CANCELLED_CALL_SECONDS = 10.0


def _cancel_and_wait(worker: threading.Thread, cancel: Callable[[], None] | None) -> None:
    """Cancels the call and lets it return before the process goes on to end, with SIGINT ignored meanwhile.

    The `skewless` command repeats a Ctrl-C every second until it is reported (cli.py `_repeat_interrupt`), and
    one raised inside `cancel()` (a round trip to the server, slow on a loaded machine) skipped the wait: the
    caller then closed the connection while this thread was still inside the driver's `execute`, and the process
    died of a segmentation fault (exit -11) instead of reporting the interrupt. A thread still inside the driver
    when the interpreter finalizes is unwound through its C++ and aborts the process too (DuckDB: "FATAL:
    exception not rethrown", exit -6). `_thread.interrupt_main` does nothing while SIGINT is ignored; the
    command's handler comes back afterwards and the repeated interrupt goes on."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        if cancel is not None:
            with contextlib.suppress(Exception):  # the statement may have ended meanwhile
                cancel()
        worker.join(_CANCELLED_CALL_SECONDS)
    finally:
        signal.signal(signal.SIGINT, previous)
