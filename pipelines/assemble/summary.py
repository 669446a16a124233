"""run.json's fields that `skewless run`, `apply` and `predict` fill alike: the units' summaries summed (refusing
output past `output.max_bad_fraction`), the label, the seconds, the package versions and the machine."""

from __future__ import annotations

import os
import platform
import time
from importlib.metadata import PackageNotFoundError, version

from skewless.config import NUMERIC_LABEL_TRANSFORMS, JobConfig
from skewless.errors import TooManyBadRowsError
from skewless.lazy_imports import lazy_import
from skewless.pipelines.plan.plan import JobPlan
from skewless.pipelines.plan.preflight import no_rows
from skewless.pipelines.write.unit_summary import UnitClock, UnitSummary, read_unit_summary
from skewless.run_directory import RunDirectory
from skewless.run_summary import Label, RowCounts
from skewless.safe_names import vocabulary_filename

# on first use: skewless.layers loads Keras 3, which a job without a transformed label never needs
# (tests/cli/test_cli_startup.py)
label_scale = lazy_import("skewless.layers.label_scale")


def unit_parts(job_plan: JobPlan, staging: str) -> list[UnitSummary]:
    """The summaries `TransformUnitFn` wrote for the plan's units, in unit order."""
    return [read_unit_summary(RunDirectory(staging).unit_summary_file(unit.index)) for unit in job_plan.units]


def sum_parts(config: JobConfig, parts: list[UnitSummary]) -> tuple[int, int, dict, dict]:
    """Rows read, rows quarantined, shards per split and rows written per split, summed over the units;
    refuses output past max_bad_fraction, and an input without rows."""
    read = sum(p.read for p in parts)
    quarantined = sum(p.quarantined for p in parts)
    if read and quarantined / read > config.output.max_bad_fraction:
        reasons = [reason for p in parts for reason in p.reasons][:5]
        raise TooManyBadRowsError(
            f"{quarantined:,} of {read:,} rows ({quarantined / read:.1%}) failed to decode or validate, over "
            f"output.max_bad_fraction {config.output.max_bad_fraction:g}; no output written. First reasons: "
            + "; ".join(reasons)
        )
    if read == 0:  # an input whose sizes did not show it empty (a CSV header alone, a query, a generator)
        raise no_rows(config)
    shards = {split: [p.shards[split] for p in parts] for split in config.output.splits}
    written = {split: sum(s.rows for s in shards[split]) for split in shards}
    return read, quarantined, shards, written


def shared_summary_fields(config: JobConfig, parts: list[UnitSummary], sums: tuple, started: float, pipeline_seconds: float,
                          process_started: float | None, graph_dir: str) -> dict:
    """The fields of run.json that a job and `skewless apply` fill alike, from the units' summaries (`parts`)
    and their sums (`sum_parts`); `graph_dir` is the graph the rows went through."""
    read, quarantined, shards, written = sums
    # rows.unlabeled is there when such rows are left out on purpose (label.missing: drop), even if none were
    unlabeled = ({"unlabeled": sum(p.unlabeled for p in parts)}
                 if config.label is not None and config.label.missing == "drop" else {})
    return {
        "name": config.name,
        "rows": RowCounts(read=read, written=written, quarantined=quarantined, **unlabeled),
        "label": label_summary(config, graph_dir),
        "shards": shards,
        "compression": config.output.compression,
        "format": config.output.format,
        "seconds": {**run_seconds(started, pipeline_seconds, process_started), **transform_pass_seconds([p.clock for p in parts])},
        "versions": package_versions(),
        "platform": machine_summary(),
    }


def label_summary(config: JobConfig, graph_dir: str) -> Label | None:
    """run.json's label: its column, and for a transformed regression label the statistics it was scaled with."""
    if config.label is None:
        return None
    label = Label(column=config.label.column, name=config.label.column, classes=label_classes(config, graph_dir))
    if config.label.transform in NUMERIC_LABEL_TRANSFORMS:
        label.transform = config.label.transform
        label.statistics = label_scale.label_statistics(graph_dir, config.label.column, config.label.transform)
    return label


def label_classes(config: JobConfig, graph_dir: str) -> list[str] | None:
    """The class of each label id, in id order, when the job writes the label as class ids: the map's keys by
    their id (the first key of an id several share; an id no key has is its own text), or the label's
    vocabulary file in the graph. None otherwise."""
    if config.label.map is not None:
        names: dict[int, str] = {}
        for key, value in config.label.map.items():
            names.setdefault(value, key)
        return [names.get(i, str(i)) for i in range(max(names) + 1)] if min(names) >= 0 else None
    if config.label.transform == "vocabulary":
        with open(os.path.join(graph_dir, "transform_fn", "assets", vocabulary_filename(config.label.column)),
                  "rb") as handle:
            return [line.decode("utf-8", "backslashreplace") for line in handle.read().splitlines()]
    return None


def run_seconds(started: float, pipeline_seconds: float, process_started: float | None) -> dict:
    """run.json's timings: the pipeline's, and the total from the process's start (else the job's)."""
    now = time.time()
    if process_started is None:
        return {"pipeline": round(pipeline_seconds, 3), "total": round(now - started, 3)}
    return {"pipeline": round(pipeline_seconds, 3), "startup": round(started - process_started, 3),
            "total": round(now - process_started, 3)}


def transform_pass_seconds(clocks: list[UnitClock]) -> dict:
    """The transform pass's wall seconds (first unit's start to last unit's finish) and the CPU seconds its
    process spent meanwhile, from the units' clocks (`transform.unit_clock`); nothing when the units ran in
    more than one process (another runner's workers), whose CPU clocks do not add up."""
    if not clocks or len({moment.pid for clock in clocks for moment in (clock.started, clock.finished)}) != 1:
        return {}
    first = min((clock.started for clock in clocks), key=lambda moment: moment.wall)
    last = max((clock.finished for clock in clocks), key=lambda moment: moment.wall)
    return {"transform_pass": round(last.wall - first.wall, 3), "transform_pass_cpu": round(last.cpu - first.cpu, 3)}


def machine_summary() -> dict:
    return {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version()}


def package_versions() -> dict:
    versions = {}
    for package in ("skewless", "tensorflow", "tensorflow-transform", "tfx-bsl", "apache-beam", "keras", "pyarrow"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            versions[package] = None
    return versions

