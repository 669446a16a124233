"""The parsing process of `skewless run`: the input parsed into the run's kept streams while the command imports
TensorFlow, tf.Transform and Beam (`plan/ahead_of_imports.py` starts it), and the job's side of the handoff.

The process parses the work units, in input order, with the job's own reader, into the very streams the job's
first stage would write (`parsed_units`), with the row counts its `RowCounter` would write; it imports pyarrow and
the readers only, never Beam or TensorFlow, and writes only in the run's claimed staging folder. The two share the
units through files in the streams' folder: a unit is parsed by whichever first creates its claim file
(``unit-NNNNN.arrow.claim``, created exclusively). The job (`Handoff.parsed`) waits for a unit the process claimed,
and parses it itself where the process ended without writing its stream (killed, stopped, or an error, which the
job's own read of the unit then reports as it always has). Once the job's first stage starts (`_STOP`), the
process ends after the chunk it is on, and its memory is returned. It dies with the job's process (Linux's
parent-death signal) and ignores Ctrl-C, which the job's process handles.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

import pyarrow as pa

from skewless import runtime, staged_folder
from skewless.pipelines.reading import unit_stream
from skewless.pipelines.reading.format import WorkUnit
from skewless.pipelines.reading.sources import RowReader
from skewless.progress_snapshot import read_count, write_count
from skewless.run_directory import parsed_unit_name, progress_name, progress_unit

_STOP = "parse-ahead.stop"  # in the streams' folder: the job's first stage has started, the process is to end
_CLAIM = ".claim"  # a unit's stream name plus this: who parses the unit
_POLL_SECONDS = 0.005
_PR_SET_PDEATHSIG = 1  # prctl(2)


@dataclass(frozen=True)
class Handoff:
    """What the job needs of the parsing process; picklable (Beam pickles the first stage's DoFn)."""

    folder: str  # the kept streams' folder, the run's own (`RunDirectory.parsed_dir`)
    progress_dir: str  # where the units' row counts are written (`RunDirectory.progress_dir`)
    dataset: str  # the analysis's one dataset: the progress files' names
    pid: int
    started: int  # the process's start time (/proc): a pid another process has taken since is not it

    def parsed(self, unit: int, stop: threading.Event) -> int | None:
        """The rows of `unit` once the process has written its stream, or None where the job is to parse the unit
        itself: the process had not claimed it (and now never will), ended without writing it, or `stop` was set
        (another unit failed)."""
        _touch(os.path.join(self.folder, _STOP))
        if _claim(self.folder, unit):
            return None
        stream = os.path.join(self.folder, parsed_unit_name(unit))
        while not os.path.exists(stream):
            if stop.is_set():
                return None
            if not self._running():
                if not os.path.exists(stream):  # it may have written the stream just before it ended
                    return None
                break
            time.sleep(_POLL_SECONDS)
        return read_count(self.progress_file(unit))

    def progress_file(self, unit: int) -> str:
        return os.path.join(self.progress_dir, progress_name("analyze", progress_unit(unit, self.dataset)))

    def discard(self, units: list[WorkUnit]) -> None:
        """Deletes what the process wrote (streams, claims, row counts); call once it has ended."""
        for name in os.listdir(self.folder):
            os.remove(os.path.join(self.folder, name))
        for unit in units:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.progress_file(unit.index))

    def _running(self) -> bool:
        status = staged_folder.process_status(self.pid)
        return status is not None and status[0] not in ("Z", "X") and status[1] == self.started


def spawn(reader: RowReader, units: list[WorkUnit], folder: str, progress_dir: str, dataset: str
          ) -> tuple[subprocess.Popen, Handoff] | None:
    """Starts the process parsing `units` (in this order) with `reader` into `folder`, an existing folder; None
    where it cannot be told apart from a later process of its pid (no start time), which could have the job
    write a unit beside it."""
    process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    status = staged_folder.process_status(process.pid)
    if status is None:
        process.kill()
        process.wait()
        return None
    handoff = Handoff(folder, progress_dir, dataset, process.pid, status[1])
    with contextlib.suppress(BrokenPipeError):  # it ended already: the job parses every unit
        process.stdin.write(pickle.dumps((reader, units, handoff, os.getpid())))
        process.stdin.close()
    return process, handoff


def _claim(folder: str, unit: int) -> bool:
    """Claims `unit` for whoever asks first: True once, False to everyone after."""
    try:
        os.close(os.open(os.path.join(folder, parsed_unit_name(unit) + _CLAIM), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def _touch(path: str) -> None:
    with open(path, "a"):
        pass


def _parse(reader: RowReader, unit: WorkUnit, handoff: Handoff) -> bool:
    """Writes `unit`'s stream as the job's first stage would (`parsed_units.kept`), and its row count as the job's
    `RowCounter` would; the stream is complete (renamed) only once its last chunk is written. Returns False,
    the stream left incomplete, once the job's first stage has started (`_stop_asked`)."""
    stream = os.path.join(handoff.folder, parsed_unit_name(unit.index))
    rows = 0
    with open(f"{stream}.partial", "wb") as handle:
        for chunk in unit_stream.written(reader.read(unit), handle):
            if _stop_asked(handoff):
                return False
            rows += chunk.rows_read
            write_count(handoff.progress_file(unit.index), rows)
    write_count(handoff.progress_file(unit.index), rows)  # a unit without rows too: the job takes it by its count
    os.rename(f"{stream}.partial", stream)
    return True


def _stop_asked(handoff: Handoff) -> bool:
    """Whether the job's first stage has started: its threads then parse on both cores, and this process, kept
    running beside them, took 110-130 MB more at the peak of 5M- and 20M-row runs (2026-11-29)."""
    return os.path.exists(os.path.join(handoff.folder, _STOP))


def _main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the job's process handles Ctrl-C, and ends this one
    prctl = runtime.glibc_function("prctl")
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    reader, units, handoff, parent = pickle.load(sys.stdin.buffer)
    if os.getppid() != parent:  # the job's process ended before the signal was asked for
        return
    pa.set_cpu_count(1)  # the job's process imports on the other core
    for unit in units:
        if _stop_asked(handoff) or (_claim(handoff.folder, unit.index) and not _parse(reader, unit, handoff)):
            return


if __name__ == "__main__":
    try:
        _main()
    except Exception:  # noqa: BLE001 - the job parses what this did not write, and reports its errors
        sys.exit(1)
