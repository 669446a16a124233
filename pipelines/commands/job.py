"""`run(config)`: the batch job, one Beam pipeline.

    work units ──AnalyzeInputs: read, raw statistics, tft_beam.AnalyzeDataset, WriteTransformFn──┐ graph
    work units ──TransformUnitFn: read, apply the graph, split, encode, write shards <───────────┘ written
                  └──> _parts/*.json (rows, shards, quarantine per unit) ──> run.json

The input is read twice, once per pass (pipelines/analyze/analysis.py, pipelines/write/transform.py), rather than
held between the passes: memory stays flat whatever the data size. Everything is written into a
staging directory beside the output, which is renamed into place only when the pipeline succeeded and
the quarantine is within bounds, so a killed job never leaves a directory that looks complete.

Files go through Beam's filesystems (pipelines/output/files.py), so the output can be on any of them; how a
run is claimed and published on a local disk and on an object store: pipelines/output/staging.py; on a store
TensorFlow cannot write (s3://), the run is written locally and uploaded: pipelines/output/object_store.py.
"""

from __future__ import annotations

import os
import platform
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Callable

import apache_beam as beam
import tensorflow_transform as tft
import tensorflow_transform.beam as tft_beam
import yaml
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions
from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io

from skewless.config import NUMERIC_LABEL_TRANSFORMS, JobConfig, load_config
from skewless.errors import ConfigError, TooManyBadRowsError
from skewless.lazy_imports import lazy_import
from skewless.pipelines.analyze import analysis_graph_reuse, eager_tables, key_lookup
from skewless.pipelines.analyze.analysis import AnalysisSpec, AnalyzeInputs, COLUMN_STATES, STATS_CACHE, cached_stats
from skewless.pipelines.analyze.distinct_limits import raw_column_limits
from skewless.pipelines.analyze.preprocessing import build_preprocessing_fn
from skewless.pipelines.analyze.stats import summarize, top_candidates
from skewless.pipelines.output import files
from skewless.pipelines.analyze.canonical_graph import canonicalize
from skewless.pipelines.reading.columns import raw_schema
from skewless.pipelines.reading.sources import RowReader
from skewless.pipelines.runner import arrow_coder, beam_introspection, runners
from skewless.pipelines.runner.collector import pre_existing_objects_frozen
from skewless.pipelines.runner.one_job_at_a_time import one_job_at_a_time
from skewless.pipelines.plan.plan import JobPlan, no_rows, plan, sample_rows
from skewless.pipelines.output.progress import snapshot
from skewless.pipelines.output.staging import StagedOutput
from skewless.pipelines.write.split_statistics import candidate_counts, write_states
from skewless.pipelines.write.statistics_in_input_order import write_split_states
from skewless.pipelines.write.distinct_values import row_wise_columns
from skewless.pipelines.write.transform import TransformUnitFn, UnitWriteSpec
from skewless.pipelines.write.unit_summary import UnitClock, UnitSummary, read_unit_summary, write_unit_summary
from skewless.progress_snapshot import Snapshot
from skewless.redaction import url_without_credentials
from skewless.run_directory import KERAS_PREPROCESSOR_FILE, RunDirectory
from skewless.run_summary import Analysis, Label, RowCounts, RunSummary
from skewless.safe_names import most_frequent_filename, vocabulary_filename
from skewless.sequence_specs import split_transformed_spec

# on first use: skewless.layers imports Keras 3, which a job needs only to export the Keras preprocessor or to read a
# scaled label's statistics (tf.Transform uses Keras 2; tests/cli/test_cli_startup.py checks a run loads no Keras 3)
layers = lazy_import("skewless.layers")
label_scale = lazy_import("skewless.layers.label_scale")

@dataclass
class RunResult:
    """What `run` returns: the row counts, shards and seconds of run.json, and each feature's statistics.

    Examples:
        >>> import os
        >>> from skewless.config import load_config
        >>> from skewless.pipelines.commands.job import run
        >>> result = run(load_config("configs/example.yaml", overrides=["input.rows=1000", "output.shards=2"],
        ...                          output_dir=os.path.abspath("out/tiny")))
        >>> {split: len(shards) for split, shards in result.shards.items()}
        {'train': 2, 'eval': 2}
        >>> round(result.rows["written"]["train"] / result.rows["read"], 1)   # output.splits: train 0.8
        0.8
        >>> os.path.relpath(result.graph_dir)
        'out/tiny/transform_graph'
        >>> result.summary()
        '/.../out/tiny: read 1,000 rows, wrote ... in 4 shards, quarantined 0; ... s'
    """

    output_dir: str
    rows: dict
    shards: dict
    seconds: dict
    features: dict = field(default_factory=dict)
    keras_preprocessor: dict | None = None  # the check of output.keras_preprocessor, when asked for

    @property
    def graph_dir(self) -> str:
        return RunDirectory(self.output_dir).graph_dir

    def summary(self) -> str:
        written = ", ".join(f"{split} {n:,}" for split, n in self.rows["written"].items())
        shard_count = sum(len(s) for s in self.shards.values())
        return (
            f"{self.output_dir}: read {self.rows['read']:,} rows, wrote {written} "
            f"in {shard_count} shards, quarantined {self.rows['quarantined']:,}"
            + (f", left out {self.rows['unlabeled']:,} without a label" if self.rows.get("unlabeled") is not None
               else "")
            + f"; {self.seconds['total']:.1f} s"
            + self._preprocessor_summary()
        )

    def _preprocessor_summary(self) -> str:
        if self.keras_preprocessor is None:
            return ""
        left_out = {f["name"]: f["reason"] for f in self.keras_preprocessor["features"] if f["status"] != "exact"}
        kept = len(self.keras_preprocessor["features"]) - len(left_out)
        text = f"; keras_preprocessor.keras: {kept} features exact"
        if left_out:
            text += "; left out (no exact Keras equivalent): " + "; ".join(f"{n}: {r}" for n, r in left_out.items())
        return text


def run(
    config,
    overwrite: bool = False,
    beam_args: list[str] | None = None,
    progress: Callable[[Callable[[], Snapshot | None]], AbstractContextManager] | None = None,
    process_started: float | None = None,
) -> RunResult:
    """Runs the job. `config` is a JobConfig, a path to a YAML config, or a dict.

    `progress`, when given, watches the pipeline: it is called with a function that returns the rows
    processed so far (a `Snapshot`, or None before any) and returns the context the pipeline runs in.
    `skewless run` passes the display of `skewless.progress.show_progress`, and renders the run's
    report.html once this returns; the job itself draws and renders nothing.

    `process_started` (a `time.time()` value), when given, is when the process that runs the job started:
    run.json's total seconds then count from there, and `startup` is the time until the job began (for
    `skewless run`, mostly importing TensorFlow, tf.Transform and Beam).

    Examples:
        configs/example.yaml on 2,000 of its synthetic rows; each row goes to one split, or to quarantine:

        >>> import os
        >>> from skewless.config import load_config
        >>> from skewless.pipelines.commands.job import run
        >>> result = run(load_config("configs/example.yaml", overrides=["input.rows=2000"],
        ...                          output_dir=os.path.abspath("out/small")))
        >>> result.rows["read"], sum(result.rows["written"].values()) + result.rows["quarantined"]
        (2000, 2000)
        >>> sorted(os.listdir("out/small"))
        ['config.yaml', 'data', 'run.json', 'statistics', 'transform_graph']
    """
    if not isinstance(config, JobConfig):
        config = load_config(config)
    with one_job_at_a_time(), pre_existing_objects_frozen():
        return _run(config, overwrite, beam_args, progress, process_started)


def _run(config: JobConfig, overwrite: bool, beam_args: list[str] | None, progress, process_started: float | None
         ) -> RunResult:
    started = time.time()
    output_dir = config.output.dir
    output = StagedOutput(output_dir, overwrite, beam_args or [], "run", *reads(config))
    job_plan = plan(config)
    with output.staging() as staging:
        known = not config.cache_dir
        with progress(lambda: snapshot(staging, total_known=known)) if progress else nullcontext():
            _run_pipeline(config, job_plan, staging, beam_args or [])
        pipeline_seconds = time.time() - started
        summary = _assemble(config, job_plan, staging, started, pipeline_seconds, process_started)
        # rows.unlabeled only where the run counts it (label.missing: drop), as run.json has it
        rows = summary.rows.model_dump(exclude_none=True)
        summary = summary.model_dump()
        result = RunResult(output_dir, rows, summary["shards"], summary["seconds"], summary["features"])
        if config.output.keras_preprocessor:
            result.keras_preprocessor = _export_keras_preprocessor(config, job_plan, staging)
    return result


def reads(config: JobConfig) -> tuple[list[str], list[str]]:
    """What a job reads and its output may therefore neither be, hold nor replace: (folders: the analyzer cache;
    files and globs: the input, a DuckDB database, the schema)."""
    read = [*config.input.files_read(), config.schema_path]
    return [config.cache_dir] if config.cache_dir else [], [path for path in read if path]


def _export_keras_preprocessor(config: JobConfig, job_plan: JobPlan, run_dir: str) -> dict:
    """Writes the native Keras preprocessor with the features that match the graph exactly on sampled rows.

    A feature without an exact Keras equivalent is left out, never emitted different; which and why is
    in RUN_DIR/keras_preprocessor.json (and the summary line).
    """
    check = layers.export_keras_preprocessor(run_dir, rows=sample_rows(config, job_plan, 1000).to_pylist())
    summary = check.to_dict()
    summary["path"] = KERAS_PREPROCESSOR_FILE  # relative: the file moves with the run directory
    files.write_json(summary, RunDirectory(run_dir).keras_preprocessor_check_file)
    return summary


def pipeline_options(config: JobConfig, beam_args: list[str]):
    # `-- --runner=X` wins over runner.name (PipelineOptions lets keyword options override flags)
    flagged = [arg.split("=", 1)[1] for arg in beam_args if arg.startswith("--runner=")]
    options = dict(config.runner.options)
    if not flagged:
        options["runner"] = config.runner.name
    try:
        return PipelineOptions(flags=beam_args, **options)
    except Exception as error:
        raise ConfigError(f"runner options: {error}") from None


def work_started(staging: str):
    """Whether a worker has counted rows yet, or None where workers write no progress (object stores)."""
    if not files.is_local(staging):
        return None

    def started() -> bool:
        current = snapshot(staging)
        return current is not None and current.rows > 0

    return started


def _run_pipeline(config: JobConfig, job_plan: JobPlan, staging: str, beam_args: list[str]) -> None:
    run = RunDirectory(staging)
    graph_dir = run.graph_dir
    reader = RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    parsed_dir = run.parsed_dir if config.input.keep_parsed else None
    analysis = AnalysisSpec(
        datasets=job_plan.datasets,
        reader=reader,
        preprocessing_fn=build_preprocessing_fn(config, job_plan.columns),
        graph_dir=graph_dir,
        stats_dir=run.stats_dir,
        staging_dir=staging,
        cache_dir=config.cache_dir,
        parsed_dir=parsed_dir,
        overlap_stages=config.runner.overlap_stages,
        categorical=categorical_features(config),
        dates={n: f.transform_kind.dates_in(f) for n, f in config.features.items()
               if f.transform_kind.dates_in(f) is not None},
        distinct_limits=tuple(raw_column_limits(config)),
    )
    unit_writes = unit_write_spec(config, job_plan, reader, graph_dir, staging, parsed_dir)
    options = pipeline_options(config, beam_args)
    with beam_introspection.memoized(), analysis_graph_reuse.installed(), eager_tables.dropped_after(), \
            key_lookup.installed(), arrow_coder.registered(), \
            runners.pipeline(options, config.runner.start_timeout, work_started(staging)) as pipeline:
        with tft_beam.Context(temp_dir=run.tmp_dir):
            analyzed = pipeline | "AnalyzeInputs" >> AnalyzeInputs(analysis)
        # the string columns past EXACT_DISTINCT values: the transform pass counts their candidate top values
        counted = [c.name for c in job_plan.columns
                   if (c.kind == "bytes" or c.name in analysis.categorical) and not c.image]
        candidates = (analyzed["statistics"] | "GatherStatistics" >> beam.combiners.ToList()
                      | "TopCandidates" >> beam.Map(top_candidates, counted))
        transform_and_write(pipeline, job_plan.units, unit_writes,
                            graph_ready=beam.pvalue.AsSingleton(analyzed["graph"]))
        # the analysis's column statistics of every row, for a split that receives them all (counted once)
        whole_input = ({"input_columns": beam.pvalue.AsSingleton(analyzed[COLUMN_STATES])}
                       if COLUMN_STATES in analyzed else {})
        split_statistics(pipeline, job_plan.units, unit_writes, graph_ready=beam.pvalue.AsSingleton(analyzed["graph"]),
                         top_candidates=beam.pvalue.AsSingleton(candidates), **whole_input)
    files.remove_tree(run.tmp_dir)


def unit_write_spec(config: JobConfig, job_plan: JobPlan, reader, graph_dir: str, staging: str,
                    parsed_dir: str | None = None):
    """How the transform pass writes every unit of `job_plan` into `staging`, with the graph at `graph_dir`."""
    return UnitWriteSpec(
        reader=reader,
        graph_dir=graph_dir,
        staging_dir=staging,
        splits=config.output.splits,
        compression=config.output.compression,
        unit_count=len(job_plan.units),
        vocabulary_features=[n for n, f in config.features.items() if f.transform_kind.counts_oov],
        unseen_ids={n: f.transform_kind.unseen_id(f) for n, f in config.features.items()
                    if f.transform_kind.counts_oov and f.transform_kind.unseen_id(f) is not None},
        categorical_features=categorical_features(config),
        output_format=config.output.format,
        row_wise=row_wise_columns(config, reader.columns),
        parsed_dir=parsed_dir,
        overlap_stages=config.runner.overlap_stages,
    )


def categorical_features(config: JobConfig) -> frozenset[str]:
    """The raw columns of features whose values are categories whatever their type (run.json's kind
    categorical): their statistics count an int column's values as text."""
    return frozenset(f.raw_column(n) for n, f in config.features.items() if f.transform_kind.categories)


def transform_and_write(pipeline, units: list, unit_writes, **side_inputs) -> None:
    """The transform pass: each work unit transformed with `unit_writes.graph_dir`, split and written
    (`TransformUnitFn`), its summary to _parts/. `skewless apply` runs it alone, with a finished run's graph."""
    staging = unit_writes.staging_dir
    _ = (
        pipeline
        | "PlanTransform" >> beam.Create(units, reshuffle=True)
        | "TransformAndWrite" >> beam.ParDo(TransformUnitFn(unit_writes), **side_inputs)
        | "WriteParts" >> beam.Map(
            lambda part, d=staging: write_unit_summary(part, RunDirectory(d).unit_summary_file(part.unit)))
    )


def split_statistics(pipeline, units: list, unit_writes, **side_inputs) -> None:
    """Each split's raw statistics, from the rows in input order (`statistics_in_input_order`): the same for every
    format and every cut into units, so `skewless apply` of a run's own input gives the run's statistics exactly.
    `side_inputs`: `graph_ready` (the job: after the analysis, which keeps the units' streams),
    `top_candidates` and `input_columns` (the analysis's column statistics of every row)."""
    path = RunDirectory(unit_writes.staging_dir).split_statistics_file
    _ = (pipeline | "PlanSplitStatistics" >> beam.Create([None])
         | "SplitStatistics" >> beam.Map(write_split_states, units, unit_writes, path, **side_inputs))


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


def _assemble(config: JobConfig, job_plan: JobPlan, staging: str, started: float, pipeline_seconds: float,
              process_started: float | None) -> RunSummary:
    """Sums the units' summaries into run.json and each split's statistics, and refuses output past max_bad_fraction."""
    run = RunDirectory(staging)
    parts = unit_parts(job_plan, staging)
    split_states = files.read_json(run.split_statistics_file)
    raw_stats = _raw_statistics(config, job_plan, staging, list(split_states.values()))
    analyzed = len(files.files_under(run.stats_dir))  # none when the cache had everything
    sums = sum_parts(config, parts)
    features = _feature_report(config, job_plan.columns, raw_stats, parts, staging)
    write_states(staging, {split: [split_states[split]] for split in config.output.splits}, job_plan.columns)
    _write_metadata(config, job_plan, staging)
    if config.output.format == "sequence_example":
        _write_sequence_spec(staging)
    canonicalize(run.transform_fn_dir)
    for folder in (run.parts_dir, run.stats_dir, run.progress_dir):
        files.remove_tree(folder)
    summary = RunSummary(
        **shared_summary_fields(config, parts, sums, started, pipeline_seconds, process_started, run.graph_dir),
        features=features,
        analysis=Analysis(datasets=len(job_plan.datasets), analyzed=analyzed, cache_dir=config.cache_dir),
    )
    files.write_bytes(run.summary_file, summary.to_json())
    return summary


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
        # here only: skewless.layers loads Keras 3, which a job without a transformed label never needs
        # (tests/cli/test_cli_startup.py), and TensorFlow, which `run` imports once its progress has started
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


def _raw_statistics(config: JobConfig, job_plan, staging: str, split_states: list[dict]) -> dict:
    """Merges the partial statistics this run computed with the cached ones of datasets it did not read, with
    the top values the splits' statistics counted exactly (`split_states`: `SplitStatistics.state()`s).

    With a cache, this run's partials are then stored there, under their dataset's name.
    """
    stats_dir = RunDirectory(staging).stats_dir
    partials = {}
    for name in job_plan.datasets:
        path = os.path.join(stats_dir, f"{name}.json")
        if FileSystems.exists(path):
            partials[name] = files.read_json(path)
    if config.cache_dir:
        for name in job_plan.datasets:
            if name in partials:
                files.write_json(partials[name], os.path.join(config.cache_dir, STATS_CACHE, f"{name}.json"))
            else:
                partials[name] = cached_stats(config.cache_dir, name)
    counted = candidate_counts(split_states)
    return summarize(list(partials.values()), {name: counts for name, (counts, _) in counted.items()})


def _feature_report(config: JobConfig, columns, raw_stats: dict, parts: list[UnitSummary], staging: str) -> dict:
    graph = tft.TFTransformOutput(RunDirectory(staging).graph_dir)
    kinds = {c.name: c.kind for c in columns}
    optional = {c.name for c in columns if c.optional}
    report = {}
    for name, feature in config.features.items():
        transform = feature.transform_kind
        if transform.new_output:  # no raw column of its own
            report[name] = {"transform": feature.transform, "type": "int", "kind": "categorical",
                            **transform.run_fields(name, feature, graph)}
            continue
        column = feature.raw_column(name)  # the statistics are its raw column's
        entry = {"transform": feature.transform, "type": kinds[column],
                 "kind": "categorical" if kinds[column] == "bytes" or transform.categories
                 else "numeric", **({"column": column} if column != name else {}), **raw_stats[column]}
        if transform.image:
            entry.pop("top_values", None)  # encoded image bytes, not values to show
        entry.update(transform.run_fields(name, feature, graph))
        if transform.counts_oov:
            entry["oov_rows"] = sum(p.oov[name] for p in parts)
        if feature.default is not None:
            entry["default"] = feature.default
        if feature.fill is not None:
            entry["fill"] = feature.fill
        if feature.fill == "most_frequent" and column in optional:  # a required column has nothing to fill
            entry["most_frequent_file"] = most_frequent_filename(column)
        report[name] = entry
    return report


def _write_metadata(config: JobConfig, job_plan: JobPlan, staging: str) -> None:
    """The raw metadata next to the graph (so TFTransformOutput.raw_feature_spec works) and the config."""
    run = RunDirectory(staging)
    metadata_io.write_metadata(dataset_metadata.DatasetMetadata(raw_schema(job_plan.columns)), run.raw_metadata_dir)
    # the config's paths are absolute since it was loaded: every later reader sees the paths this run read. A
    # database URL is kept without its password: `verify` and `apply` then find it where libpq looks (PGPASSWORD,
    # ~/.pgpass, a service file), as configs should give it (docs/recipes/sql.md)
    kept = config.model_dump(by_alias=True)
    # a CSV's `skip_initial_space: auto` as the plan read this input: new data read by the run's rules (verify,
    # apply, predict) is read as this input was, whatever its own first lines look like
    if "skip_initial_space" in type(job_plan.input_config).model_fields:
        kept["input"]["skip_initial_space"] = job_plan.input_config.skip_initial_space
    if kept["input"].get("url"):
        kept["input"]["url"] = url_without_credentials(kept["input"]["url"])
    files.write_bytes(run.config_file, yaml.safe_dump(kept, sort_keys=False).encode())


def _write_sequence_spec(staging: str) -> None:
    """RUN_DIR/sequence_example.json: which transformed features the SequenceExample shards hold as context
    features and which as feature lists (`skewless.sequence_specs.split_transformed_spec` decides)."""
    run = RunDirectory(staging)
    spec = tft.TFTransformOutput(run.graph_dir).transformed_feature_spec()
    context, lists = split_transformed_spec(spec)
    files.write_json({"context": sorted(context), "feature_lists": sorted(lists)}, run.sequence_file)


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
