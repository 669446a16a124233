"""`skewless` as a user runs it: `python -m skewless ...` in a subprocess, its output captured."""

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


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
