"""A blocking call into ADBC's PostgreSQL driver that Ctrl-C ends.

ADBC's driver manager (PostgreSQL), called from the main thread, swaps in a SIGINT handler of its own for the
length of each call: it cancels the statement on the server and tells Python nothing. A cancelled `execute`
returned, its error showed only once rows were read (never, for a query whose schema was all that was wanted),
and a run carried on and published after a Ctrl-C. Called from any other thread it leaves SIGINT to Python. So
the call runs in a thread of its own while the main thread waits for it, where Ctrl-C raises KeyboardInterrupt
(the `skewless` command's handler sees it); the statement is then cancelled and the interrupt goes on.

A call made on a thread of a bundle's pool (`runner.bundle_threads`: the analysis parses the units on all
cores) waits the same way for the element's stop event, which the job sets when it is interrupted or another
element failed: a Ctrl-C during a slow query otherwise waited for the query to end (30 s in the hostile case).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Callable, TypeVar

from skewless.pipelines.runner.element_stop import Stopped, element_stop

T = TypeVar("T")


def interruptible(call: Callable[[], T], cancel: Callable[[], None] | None = None) -> T:
    """`call()`; on Ctrl-C in the main thread, or once the work this thread runs is stopped (`element_stop`),
    `cancel()` (the driver's statement cancel), then KeyboardInterrupt or `Stopped`."""
    main = threading.current_thread() is threading.main_thread()
    stop = None if main else element_stop()
    if not main and stop is None:
        return call()  # only the main thread gets KeyboardInterrupt: elsewhere the driver's own handling is moot
    outcome: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed to the waiting thread, which raises it
            outcome["error"] = error
        finally:
            done.set()

    worker = threading.Thread(target=run, name="skewless-database-call", daemon=True)
    worker.start()
    try:
        if main:
            worker.join()
        else:
            while not done.wait(_STOP_STEP_SECONDS):
                if stop.is_set():
                    raise Stopped("stopped during a database call")
    except BaseException:
        _cancel_and_wait(worker, cancel, main)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


# how long a cancelled call may take to return before the interrupt goes on without it
_CANCELLED_CALL_SECONDS = 10.0
# how often a call off the main thread looks at its stop event
_STOP_STEP_SECONDS = 0.05


def _cancel_and_wait(worker: threading.Thread, cancel: Callable[[], None] | None, main: bool) -> None:
    """Cancels the call and lets it return before the process goes on to end, with SIGINT ignored meanwhile.

    The `skewless` command repeats a Ctrl-C every second until it is reported (cli.py `_repeat_interrupt`), and
    one raised inside `cancel()` (a round trip to the server, slow on a loaded machine) skipped the wait: the
    caller then closed the connection while this thread was still inside the driver's `execute`, and the process
    died of a segmentation fault (exit -11) instead of reporting the interrupt. A thread still inside the driver
    when the interpreter finalizes is unwound through its C++ and aborts the process too (DuckDB: "FATAL:
    exception not rethrown", exit -6). `_thread.interrupt_main` does nothing while SIGINT is ignored; the
    command's handler comes back afterwards and the repeated interrupt goes on. (Off the main thread, where no
    KeyboardInterrupt is raised, SIGINT is left as it is: only the main thread may set a handler.)"""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        if cancel is not None:
            with contextlib.suppress(Exception):  # the statement may have ended meanwhile
                cancel()
        worker.join(_CANCELLED_CALL_SECONDS)
    finally:
        if main:
            signal.signal(signal.SIGINT, previous)
