"""What a running job reports of its progress: the job (pipelines/output/progress.py) makes `Snapshot`s and the
command line's display (skewless/progress.py) draws them; this module sits between so neither imports the other.
A unit's running row count travels in a file of its own (`write_count`), which the parse-ahead process
(pipelines/reading/parse_ahead.py), without Beam, writes too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


def write_count(path: str, rows: int) -> None:
    """Writes a unit's row count so far to its progress file `path` (and its folder), whole: a reader never sees
    half a number. A folder that cannot be written is no error: progress is only a display."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temp = f"{path}.tmp"
        with open(temp, "w") as handle:
            handle.write(str(rows))
        os.replace(temp, path)
    except OSError:
        pass


def read_count(path: str) -> int | None:
    """The row count `write_count` wrote to `path`, or None where there is none (yet)."""
    try:
        with open(path) as handle:
            return int(handle.read() or 0)
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Snapshot:
    """Where a job is: its stage, the rows processed in that stage so far, and the rows expected (if known).

    `finished` holds the stages that ended before this one, with their final rows: a display polls, so
    the last snapshot it saw of a stage is usually from before that stage's end (or there was none).
    """

    stage: str
    rows: int
    total: int | None = None
    finished: tuple[tuple[str, int], ...] = ()
