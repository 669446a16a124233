"""What a running job reports of its progress: the job (pipelines/output/progress.py) makes `Snapshot`s and the
command line's display (skewless/progress.py) draws them; this module sits between so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass


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
