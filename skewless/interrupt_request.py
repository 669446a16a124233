"""Whether the user asked the running command to stop (Ctrl-C), for the one step that must never follow it:
publishing an output.

The `skewless` command's SIGINT handler (cli.py `_on_interrupt`) sets `REQUESTED` and raises
KeyboardInterrupt. A KeyboardInterrupt raised while a C extension calls back into Python can be swallowed
(TensorFlow turned one into a SystemError that tf.Transform's tracing caught); the handler raises it again every
second until reported, but a job near its end could publish within that second. So publishing asks first
(`pipelines/output/staging.py`). A library call in a notebook never sets it: there Ctrl-C is Python's own.
"""

from __future__ import annotations

import threading

REQUESTED = threading.Event()


def stop_if_requested() -> None:
    """Raises KeyboardInterrupt once a Ctrl-C was received, whether or not its first one got through."""
    if REQUESTED.is_set():
        raise KeyboardInterrupt
