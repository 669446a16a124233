"""Rows processed so far, per pass, for the live progress line and for Beam's metrics.

Each work unit reports its running row count twice: as a Beam counter (namespace ``skewless``:
``rows_analyzed`` / ``rows_transformed``), which every runner aggregates across workers and shows in
its own UI; and as a tiny file in the run's staging folder (``_progress/<pass>-<unit>``), rewritten
after each chunk, because the DirectRunner returns metrics only once the pipeline is done. The
launching process sums those files while the pipeline runs (`snapshot`). On a runner whose workers
do not share the staging folder, the files are simply not there and the line shows nothing; on a
staging folder in an object store none are written (a store write per chunk, for a display).
"""

from __future__ import annotations

import os

from apache_beam.metrics import Metrics

from skewless.pipelines.output.files import is_local
from skewless.progress_snapshot import Snapshot, read_count, write_count
from skewless.run_directory import RunDirectory, progress_name

COUNTERS = {"analyze": "rows_analyzed", "transform": "rows_transformed"}


class RowCounter:
    """Counts one unit's rows in one pass; picklable (it opens nothing until it counts)."""

    def __init__(self, staging: str, stage: str, unit: str):
        # local disks only: os calls on a gs:// path would write a local folder named "gs:"
        self._path = os.path.join(RunDirectory(staging).progress_dir, progress_name(stage, unit)) if is_local(staging) else None
        self._counter = Metrics.counter("skewless", COUNTERS[stage])
        self._rows = 0

    def add(self, rows: int) -> None:
        self._rows += rows
        self._counter.inc(rows)
        if self._path is not None:
            write_count(self._path, self._rows)


def counted(rows, counter: RowCounter):
    """Passes the chunks of a unit through, counting their rows."""
    for chunk in rows:
        counter.add(chunk.rows_read)
        yield chunk


def snapshot(staging: str, total_known: bool = True) -> Snapshot | None:
    """The current pass and its rows so far.

    The transform's total is the rows the analysis read, when it read them all (`total_known`: no
    analyzer cache let it skip files).
    """
    folder = RunDirectory(staging).progress_dir
    try:
        names = [name for name in os.listdir(folder) if not name.endswith(".tmp")]
    except OSError:
        return None
    totals = dict.fromkeys(COUNTERS, 0)
    for name in names:
        stage, rows = name.split("-", 1)[0], read_count(os.path.join(folder, name))
        if rows is not None and stage in totals:
            totals[stage] += rows
    if any(name.startswith("transform-") for name in names):
        total = totals["analyze"] if total_known and totals["analyze"] else None
        # the analysis read every row before the graph the transform waits for was written; none when there was
        # no analysis to read rows (`skewless apply`, a run whose files were all cached)
        finished = (("analyze", totals["analyze"]),) if totals["analyze"] else ()
        return Snapshot("transform", totals["transform"], total=total, finished=finished)
    return Snapshot("analyze", totals["analyze"])
