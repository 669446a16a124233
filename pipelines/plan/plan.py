"""The job's plan: its input resolved into column types and work units, before any pipeline runs.

The job (pipelines/commands/run.py) runs a plan; `skewless verify` and the native Keras preprocessor's check
read sample rows of the same plan, so all three see the input as the job reads it.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass

import pyarrow as pa

from skewless.config import InputConfig, JobConfig
from skewless.pipelines.reading import sources
from skewless.pipelines.reading.columns import RawColumn
from skewless.pipelines.reading.format import WorkUnit
from skewless.input_formats import reader_of
from skewless.pipelines.plan import shard_count
from skewless.pipelines.plan.preflight import CheckedInputs, no_rows
from skewless.pipelines.plan.raw_types import resolve_columns


@dataclass
class JobPlan:
    """What the job will read: the input config (CSV columns from the header), column types, work units."""

    input_config: object
    columns: list[RawColumn]
    units: list
    estimated_bytes: int
    datasets: dict  # analysis dataset name -> its work units (one dataset unless there is an analyzer cache)


def plan(config: JobConfig, checked: CheckedInputs | None = None) -> JobPlan:
    """Resolves inputs, column types and work units; the job and `skewless verify` share it. Refuses an input its
    sizes show empty (no bytes, rows or records) before types are inferred from it. `checked`: the input files,
    their resolved config and column types, where the caller read them without Beam (`preflight.check_inputs`)."""
    input_format = reader_of(config.input.format)
    if checked is not None:
        paths, input_config = checked.paths, checked.input_config
    else:
        paths = input_format.inputs(config.input)
        input_config = input_format.resolved(config.input, paths)
    sizes = input_sizes(input_config, paths)
    if input_format.size_known and not sum(sizes):
        raise no_rows(config)
    columns = checked.columns if checked is not None else resolve_columns(config, input_config, paths)
    estimated = estimated_output_bytes(input_config, sizes)
    count = config.output.shards
    if count == "auto" and not input_format.size_known:
        count = 10 * config.output.readers  # a generator's size is unknown: the readers' rule alone
    elif count == "auto":
        count = shard_count.auto_shard_count(estimated, config.output.target_shard_mb, config.output.readers)
    units = plan_units(input_config, paths, sizes, count)
    return JobPlan(input_config, columns, units, estimated, _datasets(config, units))


def input_sizes(input_config: InputConfig, paths: list[str]) -> list[int]:
    """Per input, the size that work is divided by: bytes (CSV), rows (Parquet, synthetic), records (TFRecord).

    Counting TFRecord records checks every record, so a damaged file fails here, before the job starts.
    """
    return reader_of(input_config.format).sizes(input_config, paths)


def plan_units(input_config: InputConfig, paths: list[str], sizes: list[int], num_units: int) -> list[WorkUnit]:
    """Cuts the inputs, in order, into `num_units` contiguous units of about equal size (`InputFormat.plan_units`)."""
    return reader_of(input_config.format).plan_units(input_config, paths, sizes, num_units)


def _datasets(config: JobConfig, units: list) -> dict:
    """Without an analyzer cache, the whole input is one dataset; with one, each input file (or directory) is one."""
    if not config.cache_dir:
        return {"input": units}
    groups: dict[str, list] = {}
    for path, file_units in datasets_by_file(units).items():
        key = os.path.dirname(path) if config.cache_key == "directory" else path
        groups.setdefault(key, []).extend(file_units)
    return {dataset_name(key, _fingerprint(config, file_units)): file_units for key, file_units in groups.items()}


def dataset_name(path: str, fingerprint: str) -> str:
    """A cache key for a file or directory: its name for people, a digest of its contents' fingerprint for the cache."""
    digest = hashlib.sha256(f"{path}\0{fingerprint}".encode()).hexdigest()[:16]
    base = "".join(c if c.isalnum() or c in "-_" else "_" for c in os.path.basename(path.rstrip("/")))[:40]
    return f"{base}-{digest}"


def datasets_by_file(units: list[WorkUnit]) -> dict[str, list[WorkUnit]]:
    """The work units cut by input file: path -> the units' segments of that file, in order."""
    by_path: dict[str, list[WorkUnit]] = {}
    for unit in units:
        for segment in unit.segments:
            by_path.setdefault(segment.path, []).append(WorkUnit(unit.index, (segment,)))
    return by_path


def _fingerprint(config: JobConfig, units: list) -> str:
    """What makes a dataset's cache stale: its files' names, sizes and modification times."""
    input_format = reader_of(config.input.format)
    paths = sorted({segment.path for unit in units for segment in unit.segments})
    return "\n".join(input_format.fingerprint(config.input, path) for path in paths)


def estimated_output_bytes(input_config, sizes: list[int]) -> int:
    if not reader_of(input_config.format).sized_in_bytes:
        # sizes are row / record counts here
        return sum(sizes) * shard_count.SYNTHETIC_ROW_BYTES
    return sum(sizes)


def sample_rows(config: JobConfig, job_plan: JobPlan, sample: int) -> pa.Table:
    """Valid rows (as the job judges them) spread over the work units: an equal share from the start of each."""
    reader = sources.RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    share = math.ceil(sample / len(job_plan.units))
    tables = []
    for unit in job_plan.units:
        taken = 0
        for chunk in reader.read(unit):
            tables.append(chunk.table.slice(0, share - taken))
            taken += tables[-1].num_rows
            if taken >= share:
                break
    return pa.concat_tables(tables).slice(0, sample)
