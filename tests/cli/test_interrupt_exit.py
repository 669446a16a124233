"""A Ctrl-C ends the `skewless` command with exit code 130 at once, whatever thread the interrupted work left
running: the process does not wait for it at exit.

Beam's state sampler is such a thread: each bundle starts one (not a daemon) and stops it in a `finally` that a
Ctrl-C raised a line earlier skips. A run interrupted there waited for it at exit, for ever (CI, 2026-11-27:
"Ctrl-C during the pipeline" timed out after 300 s with `threading._shutdown` waiting).
"""

import os
import signal
import subprocess
import threading
import time

import pytest

from commands import as_a_shell_starts_it
from example_job import example_config
from skewless import interrupt_request
from skewless.config import load_config

# `skewless clean OUTPUT` whose work is a wait the Ctrl-C ends (in steps: the main thread raises a SIGINT the
# kernel handed to another thread between them), beside a state sampler nobody stops, as the interrupt left it
SCRIPT = r"""
import os, signal, sys, threading, time
from apache_beam.runners.worker import statesampler
from apache_beam.utils.counters import CounterFactory
from skewless import cli
from skewless.pipelines.output import staging

def wait_for_ctrl_c(output):
    print("waiting", flush=True)
    while True:
        time.sleep(0.05)

staging.clean = wait_for_ctrl_c
statesampler.StateSampler("bundle", CounterFactory()).start()
sys.argv = ["skewless", "clean", "out"]
cli.main()
"""


def test_ctrl_c_ends_the_command_though_a_thread_it_left_runs(tmp_path):
    process = subprocess.Popen(as_a_shell_starts_it("-c", SCRIPT), cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "waiting\n"  # the command runs, the sampler's thread beside it
    process.send_signal(signal.SIGINT)
    started = time.monotonic()
    try:
        code = process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise AssertionError("the interrupted command waited for the thread it left: it never ended") from None
    assert code == 130
    assert process.stderr.read().strip().splitlines()[-1] == "skewless: interrupted"
    assert time.monotonic() - started < 30


def test_a_ctrl_c_that_never_got_through_publishes_nothing(tmp_path, monkeypatch):
    """The command's SIGINT handler records the Ctrl-C (`interrupt_request.REQUESTED`) before raising it; where a C
    extension swallowed that KeyboardInterrupt and the job reached its end before the handler raised it again, the
    job still publishes nothing: it raises KeyboardInterrupt where it would publish and removes its staging."""
    from skewless.pipelines import run

    received = threading.Event()
    received.set()
    monkeypatch.setattr(interrupt_request, "REQUESTED", received)
    with pytest.raises(KeyboardInterrupt):
        run(load_config(example_config(tmp_path / "out", input={"format": "synthetic", "rows": 200, "seed": 3})))
    assert sorted(os.listdir(tmp_path)) == []
