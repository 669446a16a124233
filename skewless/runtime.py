"""How the `skewless` command sets up its own process before heavy work. Process-wide, so only the CLI
calls these (the library leaves a host process's settings alone), but for `import_tensorflow_quietly`, which
`skewless.layers` and `skewless.pipelines` call, and `glibc_function`, a lookup that sets nothing (the job's
`freed_memory` uses it). Figures: the 2-core benchmark machine.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import gc
import importlib
import logging
import os
import re
import sys
import tempfile
import threading
from typing import NoReturn

from skewless.command_clock import STARTED

# What TensorFlow 2.21's native libraries log on stderr as they load (oneDNN is on, no CUDA driver),
# whatever TF_CPP_MIN_LOG_LEVEL says: absl INFO lines and the notice that precedes them.
_NATIVE_LOAD_NOTICE = re.compile(r"I\d{4} |WARNING: All log messages before absl::InitializeLog\(\) is called")


# TensorFlow's C++ log levels: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL only
_TF_LOG_LEVEL = "TF_CPP_MIN_LOG_LEVEL"

# which Keras `tf.keras` is: "1" tf_keras (Keras 2), else Keras 3
_LEGACY_KERAS = "TF_USE_LEGACY_KERAS"

# which allocator pyarrow's default memory pool uses, read when pyarrow is imported
_ARROW_POOL = "ARROW_DEFAULT_MEMORY_POOL"

# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
# malloc arenas the job's threads share (glibc's default: 8 per core); a user's MALLOC_ARENA_MAX wins
_ARENAS = 2


def quiet_tensorflow_logs() -> None:
    """Hides TensorFlow's C++ log lines (CUDA stubs, oneDNN notices, "Could not find cuda drivers"): they
    come at every start on a CPU-only machine and say nothing about the job. Must run before TensorFlow is
    imported; a TF_CPP_MIN_LOG_LEVEL the user set wins (0 shows them all, as `--debug` does)."""
    os.environ.setdefault(_TF_LOG_LEVEL, "3")


def import_tensorflow_quietly() -> None:
    """The Python API's first import of TensorFlow, as quiet as the command's: its C++ log lines hidden (the
    CUDA and oneDNN notices at import, "failed call to cuInit" later, tf.data's INFO lines) and its load-time
    notices dropped. A TF_CPP_MIN_LOG_LEVEL the user set wins; where TensorFlow was imported already (by the
    user, or Keras with its TensorFlow backend), it has printed its start-up lines, and nothing changes."""
    if "tensorflow" in sys.modules:
        return
    quiet_tensorflow_logs()
    with _native_load_notices_dropped():
        importlib.import_module("tensorflow")


def import_tf_transform_stack(*modules: str) -> None:
    """`import_frozen(*modules)` for a command that runs tf.Transform and no Keras 3 or JAX model: without
    loading Keras 3 or JAX on the way.

    TensorFlow imports the optimizers of whichever Keras `tf.keras` is as it is imported, and tf.Transform
    sets TF_USE_LEGACY_KERAS=1 when it is imported itself (it works with Keras 2, tf_keras, only): setting it
    first (unless the user did) spares loading Keras 3 for nothing, 0.6 s of CPU and 1,000 modules. tf.lite
    imports JAX where it is installed (`from jax import jit`, 0.7 s) for a converter no job uses, and
    TensorFlow's legacy Keras engine imports SciPy for its sparse-matrix inputs (`scipy.sparse`, 0.5 s of a
    fresh run) where it is installed, a Keras 2 training input no job passes: both hidden while the stack is
    imported, importable again afterwards. Keras 3, JAX and SciPy are still imported where a command uses
    them later (the Keras preprocessor, skewless.layers, validate's p-values). So is h5py, which the legacy
    Keras engines import for HDF5 model files no job writes: its import runs `uname -p` in a forked child
    (`platform.processor`), whose memory, the command's by then, the process tree's RSS counted twice.
    """
    os.environ.setdefault(_LEGACY_KERAS, "1")
    with _hidden(("jax", "scipy", "h5py")):
        import_frozen(*modules)


def no_ipython() -> None:
    """Tells Beam there is no IPython session without it importing IPython to ask: the `skewless` command's
    process is never one (a notebook that runs the command starts a new process), and Beam asks when it builds
    and runs a pipeline (`is_in_ipython`), which imported IPython and what it imports: 0.5 s per run. Beam and
    the other libraries treat an IPython that cannot be imported as not running; one already imported stays."""
    sys.modules.setdefault("IPython", None)


def process_start_time() -> float:
    """When this command started, in `time.time()` seconds: when its interpreter first imported skewless (the
    console script's first import). Not the kernel's record of the process's start: a process ID a shell ran
    other commands under before exec'ing `skewless` started long before (startup read 136-409 s for a 9 s job
    after `bash -c 'pip install ... && skewless run ...'`); the interpreter's own first ~0.1 s are not counted."""
    return STARTED


def import_frozen(*modules: str) -> None:
    """Imports the heavy stack with the garbage collector paused, then freezes what the imports made.

    TensorFlow, tf.Transform and Beam leave about 900,000 long-lived objects behind, and every full
    collection walks all of them again: 1.5-2 s while importing, 2.5 s over a 1M-row job and 1.5 s when
    the process exits. Frozen objects are never walked; what the command creates afterwards is collected
    as usual.
    """
    gc.disable()
    try:
        with _native_load_notices_dropped() if _tensorflow_info_hidden() else contextlib.nullcontext():
            for module in modules:
                importlib.import_module(module)
    finally:
        gc.freeze()
        gc.enable()


@contextlib.contextmanager
def _hidden(names: tuple[str, ...]):
    """Makes `import NAME` fail meanwhile (as if not installed) for each name not imported yet; afterwards it
    imports as usual for whoever needs it."""
    hidden = [name for name in names if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None
    try:
        yield
    finally:
        for name in hidden:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


def _tensorflow_info_hidden() -> bool:
    return os.environ.get(_TF_LOG_LEVEL, "0") not in ("", "0")


@contextlib.contextmanager
def _native_load_notices_dropped():
    """Drops TensorFlow's load-time INFO lines from stderr (6 of them) so that a command's error stays the
    one line it prints; anything else written to stderr meanwhile (a warning, an import error) is kept."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            lines = captured.read().decode("utf-8", errors="replace").splitlines(keepends=True)
            sys.stderr.write("".join(line for line in lines if not _NATIVE_LOAD_NOTICE.match(line)))
            sys.stderr.flush()


def arrow_allocates_from_malloc() -> None:
    """Has Arrow allocate from malloc (unless ARROW_DEFAULT_MEMORY_POOL says otherwise) rather than from pyarrow's
    bundled mimalloc, which reserves 1 GiB of address space and keeps the pages it used: at 1M census rows the
    peak was 45-75 MB lower with malloc (three pairs, 2026-11-28; docs/performance.md). pyarrow reads the
    variable as it is imported, and loading any config imports it (the transforms' registry): the `skewless`
    command calls this first, before any command runs (tests/cli/test_runtime_memory.py runs a job through the
    command and asks its pool)."""
    os.environ.setdefault(_ARROW_POOL, "system")


def keep_freed_memory() -> None:
    """Lets glibc's malloc reuse freed blocks of up to 256 MB instead of unmapping them (no-op elsewhere).

    The job allocates arrays of a few MB per chunk (encoded rows, TFRecord framing, Arrow buffers). By
    default glibc gives each one fresh pages from the kernel and returns them on free, so every chunk
    pays page faults and zeroing: at 1M rows that was 1.5 s more in the encoder and the framing alone,
    and the whole job ran 17.9 s instead of 15.6 s. Freed memory is kept for reuse up to 1 GB above
    the heap's top. Its price is memory held between chunks, and between stages until the job returns it when the
    next stage starts (pipelines/runner/freed_memory.py: 134 MiB at 1M census rows when the analysis starts).

    Each malloc arena keeps its own freed memory, and glibc gives threads arenas of their own (up to 8 per core):
    with the work units parsed and transformed on both cores, the job's threads held more freed memory between
    stages. Two arenas for the process: at 1M census rows the peak fell from 1,165 to 1,117 MiB at the same wall
    time (2 cores, 4 runs each, paired, 2026-11-27). A thread takes its arena at its first allocation and the limit
    holds only for arenas made after it, so the command calls this before anything starts a thread: called after
    the input check (which starts pyarrow's threads), the job ran on three arenas and peaked 35 MiB higher
    (tests/cli/test_runtime_memory.py counts a job's arenas).
    """
    mallopt = glibc_function("mallopt")
    if mallopt is None:
        return
    mallopt(_M_MMAP_THRESHOLD, 256 << 20)
    mallopt(_M_TRIM_THRESHOLD, 1 << 30)
    if "MALLOC_ARENA_MAX" not in os.environ:
        mallopt(_M_ARENA_MAX, _ARENAS)


def glibc_function(name: str):
    """The C library's function `name` through ctypes, or None where the C library has none (not glibc: musl,
    macOS). Looked up among the symbols the process has loaded (the C library's among them), not by
    `ctypes.util.find_library`, which runs `ldconfig -p` in a forked child: the job looks up `malloc_trim` once
    TensorFlow is imported, and a fork of that process (~0.8 GB resident) counted twice in the process tree's
    memory (a 1M-row run's tree peaked at 1.72 GB in the benchmark of 2026-11-29 11:07, 0.91-0.97 GB otherwise)."""
    try:
        return getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError, TypeError):  # TypeError: Windows loads no library by None
        return None


def quiet_pipeline_errors() -> None:
    """Keeps Beam's runners from logging a failed step's traceback: the CLI reports the error in one line
    (the traceback with --debug)."""
    logging.getLogger("apache_beam.runners").setLevel(logging.CRITICAL)


def exit_without_teardown(code: int, interrupted: bool = False) -> NoReturn:
    """Ends the process as `sys.exit(code)` would, minus the interpreter's teardown, where the heavy stack
    was imported and no other thread runs, or the command was `interrupted` (else it exits as usual, waiting
    for the threads).

    Teardown finalizes the stack's ~900,000 import-time objects module by module: 0.4-0.6 s after every job,
    for nothing, since the process ends. What teardown does that matters is done first: the exit handlers
    (logging flushed, TensorFlow's AutoGraph temporary files removed, the tests' own handlers) and the
    standard streams flushed. A command's output files are closed before it returns.

    After a Ctrl-C the threads are not waited for: the command cleaned up on its way out, and the interrupt
    can leave a thread that never ends. Beam's state sampler is one: each bundle starts it (not a daemon) and
    stops it in a `finally`, which a Ctrl-C raised a line before the stop skips; the process then waited for
    it at exit, for ever (seen once in CI and once in 40 interrupted runs beside a busy core, 2026-11-27).
    """
    if not interrupted and ("tensorflow" not in sys.modules or threading.active_count() > 1):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or a broken pipe: as at a normal exit, nothing more to say
            pass
    os._exit(code)
