"""`skewless` as a user runs it: `python -m skewless ...` in a subprocess, its output captured."""

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# SIGINT back at its default and unblocked, then Python exec'd in the same process with the arguments given
_DEFAULT_SIGINT_THEN_EXEC = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                             "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT]); "
                             "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


def as_a_shell_starts_it(*python_args: str) -> list[str]:
    """`python PYTHON_ARGS` as a terminal's shell starts a command, SIGINT neither ignored nor blocked, whatever
    this test process's own disposition: an ignored SIGINT is inherited across exec, and `skewless` then leaves
    Ctrl-C ignored, as under `nohup`. For tests that press Ctrl-C (the process ID stays that of the command)."""
    return [sys.executable, "-c", _DEFAULT_SIGINT_THEN_EXEC, *python_args]


def cli(*args, debug: bool = False, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    """The command's result. SKEWLESS_DEBUG is unset unless `debug` (errors are then one line, as users see
    them); tests/ is on PYTHONPATH, so a config may name a generator of tests/generated_rows.py."""
    environment = {key: value for key, value in os.environ.items() if key != "SKEWLESS_DEBUG"}
    environment["PYTHONPATH"] = str(TESTS)
    if debug:
        environment["SKEWLESS_DEBUG"] = "1"
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "skewless", *args], capture_output=True, text=True,
                          env=environment, cwd=cwd, timeout=600)
