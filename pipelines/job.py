"""`run(config)`: the batch job, one Beam pipeline.

    work units ──read──> raw tables ──> tft_beam.AnalyzeDataset ──> WriteTransformFn ──┐ (graph written)
                             └──────> RawStatsFn ──> _stats.json                       │
    work units ──TransformUnitFn (read, apply graph, split, encode, write shards) <───┘ ──> _parts/*.json

The input is read twice, once per pass, rather than held between the passes: memory stays flat
whatever the data size. Everything is written into a staging directory beside the output, which is
renamed into place only when the pipeline succeeded and the quarantine is within bounds, so a killed
job never leaves a directory that looks complete.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
import uuid
from dataclasses import dataclass, field

from skewless.config import JobConfig, load_config
from skewless.errors import ConfigError, InputError, OutputExistsError, TooManyBadRowsError
from skewless.pipelines.columns import RawColumn
from skewless.report import render_report

STATS_FILE = "_stats.json"
STAGING_MARK = ".staging-"
PARTS_DIR = "_parts"


@dataclass
class RunResult:
    output_dir: str
    rows: dict
    shards: dict
    seconds: dict
    features: dict = field(default_factory=dict)

    @property
    def graph_dir(self) -> str:
        return os.path.join(self.output_dir, "transform_graph")

    def summary(self) -> str:
        written = ", ".join(f"{split} {n:,}" for split, n in self.rows["written"].items())
        shard_count = sum(len(s) for s in self.shards.values())
        return (
            f"{self.output_dir}: read {self.rows['read']:,} rows, wrote {written} "
            f"in {shard_count} shards, quarantined {self.rows['quarantined']:,}; "
            f"{self.seconds['total']:.1f} s"
        )


def run(config, overwrite: bool = False, beam_args: list[str] | None = None) -> RunResult:
    """Runs the job. `config` is a JobConfig, a path to a YAML config, or a dict."""
    if not isinstance(config, JobConfig):
        config = load_config(config)
    started = time.time()
    output_dir = config.resolve(config.output.dir)
    if os.path.exists(output_dir) and not overwrite:
        raise OutputExistsError(f"{output_dir}: output directory exists (pass --overwrite to replace it)")
    job_plan = plan(config)
    _remove_stale_staging(output_dir)
    staging = f"{output_dir.rstrip('/')}{STAGING_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    os.makedirs(staging)
    try:
        _run_pipeline(config, job_plan, staging, beam_args or [])
        pipeline_seconds = time.time() - started
        report = _assemble(config, job_plan, staging, started, pipeline_seconds)
        _publish(staging, output_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    # after publishing, so the page names the run's real path; `skewless report` can always re-render it
    render_report(output_dir)
    return RunResult(output_dir, report["rows"], report["shards"], report["seconds"], report["features"])


@dataclass
class _Plan:
    input_config: object
    columns: list[RawColumn]
    units: list
    estimated_bytes: int


def plan(config: JobConfig) -> _Plan:
    """Resolves inputs, column types and work units; the job and `skewless verify` share it."""
    from skewless.pipelines import shards, sources
    from skewless.pipelines.raw_types import resolve_columns

    input_config = config.input
    paths = [] if input_config.format == "synthetic" else sources.expand_paths(input_config, config.resolve)
    if input_config.format == "csv" and input_config.header and not input_config.columns:
        input_config = input_config.model_copy(update={"columns": _csv_header(paths[0], input_config.delimiter)})
    columns = resolve_columns(config, input_config, paths)
    sizes = sources.input_sizes(input_config, paths)
    estimated = _estimated_output_bytes(input_config, sizes)
    count = config.output.shards
    if count == "auto":
        count = shards.auto_shard_count(estimated, config.output.target_shard_mb, config.output.readers)
    units = sources.plan_units(input_config, paths, sizes, count)
    return _Plan(input_config, columns, units, estimated)


def _estimated_output_bytes(input_config, sizes: list[int]) -> int:
    from skewless.pipelines.shards import SYNTHETIC_ROW_BYTES

    if input_config.format in ("synthetic", "parquet", "tfrecord"):
        # sizes are row / record counts here
        return sum(sizes) * SYNTHETIC_ROW_BYTES
    return sum(sizes)


def _csv_header(path: str, delimiter: str) -> list[str]:
    import csv

    from apache_beam.io.filesystems import CompressionTypes, FileSystems

    compression = CompressionTypes.GZIP if path.endswith(".gz") else CompressionTypes.UNCOMPRESSED
    with FileSystems.open(path, compression_type=compression) as handle:
        line = handle.readline().decode("utf-8", errors="replace")
    names = [name.strip() for name in next(csv.reader([line], delimiter=delimiter), [])]
    if not names or any(not name for name in names):
        raise InputError(f"{path}:1: the CSV header has an empty column name")
    return names


def _pipeline_options(config: JobConfig, beam_args: list[str]):
    from apache_beam.options.pipeline_options import PipelineOptions

    options = {"runner": config.runner.name, **config.runner.options}
    try:
        return PipelineOptions(flags=beam_args, **options)
    except Exception as error:
        raise ConfigError(f"runner options: {error}") from None


def _run_pipeline(config: JobConfig, job_plan: _Plan, staging: str, beam_args: list[str]) -> None:
    import apache_beam as beam
    import tensorflow_transform.beam as tft_beam
    from apache_beam.io.filesystems import FileSystems
    from tfx_bsl.tfxio import tensor_adapter, tensor_representation_util

    from skewless.pipelines.columns import arrow_schema, raw_schema, to_record_batch
    from skewless.pipelines.preprocessing import build_preprocessing_fn
    from skewless.pipelines.sources import RowReader
    from skewless.pipelines.stats import RawStatsFn
    from skewless.pipelines.transform import TransformUnitFn

    graph_dir = os.path.join(staging, "transform_graph")
    reader = RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    columns = job_plan.columns
    adapter_config = tensor_adapter.TensorAdapterConfig(
        arrow_schema(columns),
        tensor_representation_util.InferTensorRepresentationsFromSchema(raw_schema(columns)),
    )
    vocabulary_features = [n for n, f in config.features.items() if f.transform == "vocabulary"]

    with beam.Pipeline(options=_pipeline_options(config, beam_args)) as pipeline:
        with tft_beam.Context(temp_dir=os.path.join(staging, "tmp")):
            tables = (
                pipeline
                | "PlanAnalysis" >> beam.Create(job_plan.units, reshuffle=True)
                | "ReadForAnalysis" >> beam.FlatMap(lambda unit, r=reader: (c.table for c in r.read(unit)))
            )
            batches = tables | "ToRecordBatches" >> beam.Map(to_record_batch, columns)
            transform_fn = (batches, adapter_config) | "Analyze" >> tft_beam.AnalyzeDataset(
                build_preprocessing_fn(config, columns)
            )
            graph_written = transform_fn | "WriteGraph" >> tft_beam.WriteTransformFn(graph_dir)
        _ = (
            tables
            | "RawStats" >> beam.CombineGlobally(RawStatsFn(columns))
            | "WriteStats" >> beam.Map(_write_json, FileSystems.join(staging, STATS_FILE))
        )
        _ = (
            pipeline
            | "PlanTransform" >> beam.Create(job_plan.units, reshuffle=True)
            | "TransformAndWrite"
            >> beam.ParDo(
                TransformUnitFn(
                    reader,
                    columns,
                    graph_dir,
                    staging,
                    config.output.splits,
                    config.output.compression,
                    len(job_plan.units),
                    vocabulary_features,
                ),
                graph_ready=beam.pvalue.AsSingleton(graph_written),
            )
            | "WriteParts" >> beam.Map(lambda part, d=staging: _write_json(part, _part_path(d, part["unit"])))
        )
    shutil.rmtree(os.path.join(staging, "tmp"), ignore_errors=True)


def _allowed_values(config: JobConfig) -> dict[str, list[str]]:
    if config.label is not None and config.label.map is not None:
        return {config.label.column: list(config.label.map)}
    return {}


def _part_path(staging: str, unit: int) -> str:
    return os.path.join(staging, PARTS_DIR, f"unit-{unit:05d}.json")


def _write_json(value, path: str) -> None:
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.create(path) as handle:
        handle.write(json.dumps(value, sort_keys=True).encode())


def _assemble(config: JobConfig, job_plan: _Plan, staging: str, started: float, pipeline_seconds: float) -> dict:
    """Sums the units' summaries into run.json, and refuses output past max_bad_fraction."""
    with open(os.path.join(staging, STATS_FILE)) as handle:
        raw_stats = json.load(handle)
    parts = []
    for unit in job_plan.units:
        with open(_part_path(staging, unit.index)) as handle:
            parts.append(json.load(handle))
    read = sum(p["read"] for p in parts)
    quarantined = sum(p["quarantined"] for p in parts)
    if read and quarantined / read > config.output.max_bad_fraction:
        reasons = [reason for p in parts for reason in p["reasons"]][:5]
        raise TooManyBadRowsError(
            f"{quarantined:,} of {read:,} rows ({quarantined / read:.1%}) failed to decode or validate, over "
            f"output.max_bad_fraction {config.output.max_bad_fraction:g}; no output written. First reasons: "
            + "; ".join(reasons)
        )
    if read == 0:
        raise InputError("the input holds no rows")
    shards = {split: [p["shards"][split] for p in parts] for split in config.output.splits}
    written = {split: sum(s["rows"] for s in shards[split]) for split in shards}
    features = _feature_report(config, job_plan.columns, raw_stats, parts, staging)
    _write_metadata(config, job_plan.columns, staging)
    shutil.rmtree(os.path.join(staging, PARTS_DIR))
    os.remove(os.path.join(staging, STATS_FILE))
    report = {
        "name": config.name,
        "rows": {"read": read, "written": written, "quarantined": quarantined},
        "features": features,
        "label": {"column": config.label.column, "name": config.label.column} if config.label else None,
        "shards": shards,
        "compression": config.output.compression,
        "seconds": {"pipeline": round(pipeline_seconds, 3), "total": round(time.time() - started, 3)},
        "versions": _versions(),
        "platform": {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version()},
    }
    with open(os.path.join(staging, "run.json"), "w") as handle:
        json.dump(report, handle, indent=2, sort_keys=True)
    return report


def _feature_report(config: JobConfig, columns, raw_stats: dict, parts: list[dict], staging: str) -> dict:
    import tensorflow_transform as tft

    from skewless.pipelines.preprocessing import vocabulary_filename

    graph = tft.TFTransformOutput(os.path.join(staging, "transform_graph"))
    kinds = {c.name: c.kind for c in columns}
    report = {}
    for name, feature in config.features.items():
        entry = {"transform": feature.transform, "type": kinds[name],
                 "kind": "categorical" if kinds[name] == "bytes" or feature.transform in ("vocabulary", "hash")
                 else "numeric", **raw_stats[name]}
        if feature.transform == "vocabulary":
            entry["vocabulary_size"] = graph.vocabulary_size_by_name(vocabulary_filename(name))
            entry["oov_rows"] = sum(p["oov"][name] for p in parts)
            entry["num_oov_buckets"] = feature.num_oov_buckets
        if feature.default is not None:
            entry["default"] = feature.default
        report[name] = entry
    return report


def _write_metadata(config: JobConfig, columns, staging: str) -> None:
    """The raw metadata next to the graph (so TFTransformOutput.raw_feature_spec works) and the config."""
    import yaml
    from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io

    from skewless.pipelines.columns import raw_schema

    graph_dir = os.path.join(staging, "transform_graph")
    metadata_io.write_metadata(dataset_metadata.DatasetMetadata(raw_schema(columns)), os.path.join(graph_dir, "metadata"))
    resolved = config.model_dump(by_alias=True, exclude={"base_dir"})
    resolved["output"]["dir"] = config.resolve(config.output.dir)
    if resolved.get("schema"):
        resolved["schema"] = config.resolve(resolved["schema"])
    resolved["input"]["paths"] = [config.resolve(p) for p in config.input.paths]
    with open(os.path.join(staging, "config.yaml"), "w") as handle:
        yaml.safe_dump(resolved, handle, sort_keys=False)


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for package in ("skewless", "tensorflow", "tensorflow-transform", "tfx-bsl", "apache-beam", "keras", "pyarrow"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            versions[package] = None
    return versions


def _publish(staging: str, output_dir: str) -> None:
    """Moves the finished staging directory into place.

    An old output is first renamed aside (to a staging name, so a later run removes it if this one is
    killed), then deleted: at every moment the output path holds a whole run or nothing.
    """
    os.makedirs(os.path.dirname(os.path.abspath(output_dir)), exist_ok=True)
    old = None
    if os.path.exists(output_dir):
        old = f"{output_dir.rstrip('/')}{STAGING_MARK}{os.getpid()}-replaced-{uuid.uuid4().hex[:8]}"
        os.rename(output_dir, old)
    os.rename(staging, output_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _remove_stale_staging(output_dir: str) -> None:
    """Deletes staging directories of `output_dir` left by killed runs (whose process is gone).

    A staging directory is named ``<output>.staging-<pid>-<token>``; one whose process still runs
    belongs to a concurrent run and is left alone.
    """
    parent, name = os.path.split(os.path.abspath(output_dir))
    if not os.path.isdir(parent):
        return
    for entry in os.listdir(parent):
        if not entry.startswith(name + STAGING_MARK):
            continue
        pid = entry[len(name + STAGING_MARK) :].split("-", 1)[0]
        if not pid.isdigit() or not _process_alive(int(pid)):
            shutil.rmtree(os.path.join(parent, entry), ignore_errors=True)


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # a staging dir named with our own pid is from an earlier process that had this pid
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
