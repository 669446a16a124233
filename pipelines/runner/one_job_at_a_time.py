"""Jobs of one process run one after another: a second call waits for the first to end, then runs as alone.

tf.Transform traces a `preprocessing_fn` through module globals (its annotators' object tracker: a second
trace in another thread failed with a bare `assert _OBJECT_TRACKER is None`), the eager context holds the
tables a trace makes until the job ends (eager_tables.py), and a job swaps functions of Beam
and tf.Transform for its length (shared_patch.py). Making all of that safe for jobs at once in one process
would buy nothing on the CPU a process has: a notebook's threads that start jobs together get the outputs of
those jobs run one at a time, byte for byte (tests/hostile/test_warm_process.py).
"""

from __future__ import annotations

import threading

# reentrant: a job may start another in its own thread (its progress callback, say) without waiting on itself
_JOB = threading.RLock()


def one_job_at_a_time():
    """Held for the length of a job (`run`, `apply`): a context manager that waits for the job before it."""
    return _JOB
