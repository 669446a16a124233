"""`skewless run`'s input parsed while the command imports TensorFlow, tf.Transform and Beam.

A fresh `skewless run` spends its first seconds on one core: importing TensorFlow, tf.Transform and Beam (about
3 s) and building the pipeline (about 1 s more) while the other core idles; the job's first stage then parses
every work unit into the kept stream the analysis and the transform pass read back (`parsed_units`). `started`
plans the job, claims its staging folder and starts the parsing process (`reading/parse_ahead.py`) on the idle
core before the imports: the job's first stage finds the units parsed. At 1M census rows 9.38 -> 8.20 s wall, the
same bytes and peak (three pairs, 2026-11-29; docs/performance.md).

Where the job cannot take what the process parsed (its own plan of the input differs: a file changed meanwhile;
workers in other processes), it stops the process and parses as it would have (`ParseAhead.discard`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from typing import Iterator

from skewless import staged_folder
from skewless.config import JobConfig
from skewless.input_formats import INPUT_FORMATS
from skewless.pipelines.plan.plan import plan
from skewless.pipelines.plan.preflight import CheckedInputs
from skewless.pipelines.reading import parse_ahead
from skewless.pipelines.reading.sources import RowReader
from skewless.run_directory import RunDirectory

# Input files of fewer bytes than this (on disk) are parsed by the job, and not planned before the imports: the
# process's start (~0.6 s of CPU on the other core, which the imports then share) made a fresh 1,000-row run 0.25 s
# slower (4 pairs, 2026-11-29), more than parsing such an input takes (~12 ms per MB of census CSV: 0.4 s here)
WORTH_PARSING_AHEAD = 32 * 2**20


def applies(config: JobConfig) -> bool:
    """Whether `skewless run` parses `config`'s input ahead: files its reader reads with pyarrow alone, kept for the
    transform pass (input.keep_parsed), read whole (no analyzer cache), into a local staging folder, on a machine
    with /proc (the process's liveness is read there) and a second core to parse on."""
    return (INPUT_FORMATS[config.input.format].parsed_ahead and config.input.keep_parsed and config.cache_dir is None
            and "://" not in config.output.dir and os.path.isdir("/proc") and (os.cpu_count() or 1) > 1)


class ParseAhead:
    """The parsing process of one `skewless run`, the plan it parses and the staging folder it writes in."""

    def __init__(self, config: JobConfig, claimed: str, units: list, columns: list, process: subprocess.Popen,
                 handoff: parse_ahead.Handoff):
        self.config, self.claimed, self.units, self.columns = config, claimed, units, columns
        self.handoff = handoff
        self._process = process

    def matches(self, config: JobConfig, units: list, columns: list) -> bool:
        """Whether the job's own plan is the one the process parses: the same config, units and column types."""
        return config is self.config and units == self.units and columns == self.columns

    def stop(self) -> None:
        """Ends the process (at once: the job parses what it has not finished) and waits for it."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()

    def discard(self) -> None:
        """Ends the process and deletes what it wrote: the job parses every unit."""
        self.stop()
        self.handoff.discard(self.units)

    def close(self) -> None:
        """Ends the process, then releases the staging folder's claim if this process still holds it (the job
        released it if it staged the run; a refusal before that did not)."""
        self.stop()
        record = staged_folder.read_owner(self.claimed)
        if record is not None and record["pid"] == os.getpid() and staged_folder.owner_alive(record):
            staged_folder.release(self.claimed)


@contextlib.contextmanager
def started(config: JobConfig, checked: CheckedInputs | None) -> Iterator[ParseAhead | None]:
    """Claims `config`'s staging folder and starts parsing its input there, where that `applies` and the input is
    worth it (else yields None); on the way out ends the process and releases a claim the job did not. `checked`:
    what `preflight.check_inputs` read of the input (None: it could not read without Beam, nor can this)."""
    # planned from the files and types the check read without Beam, so the process starts ~1 s sooner: Beam's
    # import took that long in the plan, and the process, ending sooner, no longer ran beside the imports' last
    # ~100 MiB (1M rows, 2026-11-29)
    if checked is None or not applies(config) or sum(map(os.path.getsize, checked.paths)) < WORTH_PARSING_AHEAD:
        yield None
        return
    job_plan = plan(config, checked)  # the job plans again, and takes the units only if its plan is this one
    reader = RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    claimed = staged_folder.claim(config.output.dir)
    try:
        run = RunDirectory(os.path.join(claimed, staged_folder.STAGED))
        os.makedirs(run.parsed_dir)
        units = sorted(job_plan.units, key=lambda unit: unit.index)
        spawned = parse_ahead.spawn(reader, units, run.parsed_dir, run.progress_dir, next(iter(job_plan.datasets)))
    except BaseException:
        staged_folder.release(claimed)
        raise
    if spawned is None:
        staged_folder.release(claimed)
        yield None
        return
    ahead = ParseAhead(config, claimed, job_plan.units, job_plan.columns, *spawned)
    try:
        yield ahead
    finally:
        ahead.close()
