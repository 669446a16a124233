"""The CLI's process settings for memory (skewless.runtime), each in a fresh interpreter: they must run before
pyarrow is imported, and a setting the user made wins."""

import os
import subprocess
import sys
import textwrap

import pytest

POOL_AFTER_SETUP = (
    "from skewless import runtime; runtime.arrow_allocates_from_malloc(); import pyarrow; "
    "print(pyarrow.default_memory_pool().backend_name)"
)

# `skewless ARGS` as the console script runs it, printing at exit, after the command's own exit handlers, Arrow's
# pool (pyarrow is imported by then, by the command itself) and, on Linux, glibc's malloc_info (one `<heap nr=...>`
# per arena)
MEMORY_OF_A_COMMAND = """
import atexit, ctypes, sys

def report():
    print("pool:", sys.modules["pyarrow"].default_memory_pool().backend_name, flush=True)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL("libc.so.6")
        libc.fdopen.restype = ctypes.c_void_p
        out = libc.fdopen(1, b"w")
        libc.malloc_info(0, ctypes.c_void_p(out))
        libc.fflush(ctypes.c_void_p(out))

atexit.register(report)
from skewless.cli import main
sys.argv = ["skewless", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("users_pool, expected", [(None, "system"), ("mimalloc", "mimalloc")])
def test_arrow_allocates_from_malloc_unless_the_user_chose_a_pool(users_pool, expected):
    env = {key: value for key, value in os.environ.items() if key != "ARROW_DEFAULT_MEMORY_POOL"}
    if users_pool is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = users_pool
    done = subprocess.run([sys.executable, "-c", POOL_AFTER_SETUP], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == expected


def test_a_job_run_by_the_command_allocates_from_malloc_in_two_arenas(tmp_path):
    """Loading the config imports pyarrow (the transforms' registry) before the job starts: the pool is chosen
    before that (pyarrow's default was mimalloc here in every run until 2026-11-28: a peak 45-75 MB higher). The
    arena limit is set before any thread allocates: checking the input starts pyarrow's threads, and set after
    that, the job ran on three arenas (1M census rows: a peak 35 MiB higher, 2026-11-29)."""
    (tmp_path / "rows.csv").write_text("x,word\n" + "".join(f"{i},w{i % 3}\n" for i in range(40)))
    (tmp_path / "job.yaml").write_text(textwrap.dedent(f"""\
        name: pool
        input: {{format: csv, header: true, paths: [{tmp_path / 'rows.csv'}]}}
        features: {{x: {{transform: z_score}}, word: {{transform: vocabulary}}}}
        output: {{dir: {tmp_path / 'out'}, shards: 1}}
        """))
    env = {key: value for key, value in os.environ.items()
           if key not in ("ARROW_DEFAULT_MEMORY_POOL", "MALLOC_ARENA_MAX")}
    done = subprocess.run([sys.executable, "-c", MEMORY_OF_A_COMMAND, "run", str(tmp_path / "job.yaml")], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "run.json").exists()
    assert "pool: system" in done.stdout.splitlines()
    if sys.platform.startswith("linux"):
        assert 1 <= done.stdout.count("<heap nr=") <= 2, done.stdout


ARENAS_AFTER_THREADS = """
import ctypes, sys, threading
from skewless import runtime
if sys.argv[1] == "setup":
    runtime.keep_freed_memory()
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
start = threading.Barrier(8)

def allocate():
    start.wait()
    for _ in range(200):
        blocks = [libc.malloc(65536) for _ in range(50)]
        for block in blocks:
            libc.free(block)

threads = [threading.Thread(target=allocate) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
libc.fdopen.restype = ctypes.c_void_p
out = libc.fdopen(1, b"w")
libc.malloc_info(0, ctypes.c_void_p(out))
libc.fflush(ctypes.c_void_p(out))
"""


def _arenas(setup: str, env: dict) -> int:
    done = subprocess.run([sys.executable, "-c", ARENAS_AFTER_THREADS, setup], env=env, capture_output=True,
                          check=True)
    return done.stdout.count(b"<heap nr=")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_the_jobs_threads_share_two_malloc_arenas_unless_the_user_chose():
    """Each arena keeps its own freed memory (the trim threshold is 1 GB): the job's threads share two."""
    env = {key: value for key, value in os.environ.items() if key != "MALLOC_ARENA_MAX"}
    if _arenas("none", env) <= 2:  # by default, eight threads allocating at once get arenas of their own
        pytest.skip("the threads did not contend for malloc here: no arena to limit")
    assert _arenas("setup", env) <= 2
    assert _arenas("setup", {**env, "MALLOC_ARENA_MAX": "1"}) == 1
