"""What a running job reports of its progress: the job (pipelines/progress.py) makes `Snapshot`s and the
command line's display (skewless/progress.py) draws them; this module sits between so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Snapshot:
    """Where a job is: its stage, the rows processed in that stage so far, and the rows expected (if known)."""

    stage: str
    rows: int
    total: int | None = None
