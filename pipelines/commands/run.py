"""`run(config)`: the batch job, one Beam pipeline, composed of the stages (docs/design.md, "pipelines/ by stage").

    plan (plan/) ──> work units
    work units ──AnalyzeInputs (analyze/): read, raw statistics, tft_beam.AnalyzeDataset, WriteTransformFn──┐ graph
    work units ──TransformAndWrite (write/): read, apply the graph, split, encode, write shards <───────────┤ written
    rows in input order ──CountSplitStatistics (statistics/): each split's raw statistics <────────────────┘
                  └──> _parts/*.json ──assemble_statistics (statistics/), run.json (assemble/)──> publish

The input is read twice, once per pass (pipelines/analyze/analysis.py, pipelines/write/transform.py), rather than
held between the passes: memory stays flat whatever the data size. Everything is written into a
staging directory beside the output, which is renamed into place only when the pipeline succeeded and
the quarantine is within bounds, so a killed job never leaves a directory that looks complete.

Files go through Beam's filesystems (pipelines/output/files.py), so the output can be on any of them; how a
run is claimed and published on a local disk and on an object store: pipelines/output/staging.py; on a store
TensorFlow cannot write (s3://), the run is written locally and uploaded: pipelines/output/object_store.py.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Callable

import apache_beam as beam
import tensorflow_transform.beam as tft_beam

from skewless.config import JobConfig, load_config
from skewless.output_formats import output_format
from skewless.pipelines.assemble.feature_report import feature_report
from skewless.pipelines.assemble.launch import pipeline_options, reads, work_started
from skewless.pipelines.assemble.run_files import export_keras_preprocessor, write_metadata
from skewless.pipelines.assemble.summary import shared_summary_fields, sum_parts, unit_parts
from skewless.pipelines.output import files
from skewless.pipelines.analyze import deferred_schema, eager_tables, key_lookup, saved_model_reuse
from skewless.pipelines.analyze.analysis import AnalysisSpec, AnalyzeInputs
from skewless.pipelines.analyze.canonical_graph import canonicalize
from skewless.pipelines.analyze.distinct_limits import raw_column_limits
from skewless.pipelines.analyze.preprocessing import build_preprocessing_fn
from skewless.pipelines.plan.ahead_of_imports import ParseAhead
from skewless.pipelines.reading.sources import RowReader
from skewless.pipelines.runner import arrow_coder, beam_introspection, runners, state_sampler
from skewless.pipelines.runner.collector import pre_existing_objects_frozen
from skewless.pipelines.runner.one_job_at_a_time import one_job_at_a_time
from skewless.pipelines.plan.plan import JobPlan, plan
from skewless.pipelines.statistics.assembly import assemble_statistics
from skewless.pipelines.statistics.in_input_order import CountSplitStatistics
from skewless.pipelines.output.progress import snapshot
from skewless.pipelines.output.staging import StagedOutput
from skewless.pipelines.write.transform_pass import TransformAndWrite, categorical_features, unit_write_spec
from skewless.progress_snapshot import Snapshot
from skewless.run_directory import RunDirectory
from skewless.run_summary import Analysis, RunSummary

@dataclass
class RunResult:
    """What `run` returns: the row counts, shards and seconds of run.json, and each feature's statistics.

    Examples:
        >>> import os
        >>> from skewless.config import load_config
        >>> from skewless.pipelines.commands.run import run
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
    parse_ahead: ParseAhead | None = None,
) -> RunResult:
    """Runs the job. `config` is a JobConfig, a path to a YAML config, or a dict.

    `progress`, when given, watches the pipeline: it is called with a function that returns the rows
    processed so far (a `Snapshot`, or None before any) and returns the context the pipeline runs in.
    `skewless run` passes the display of `skewless.progress.show_progress`, and renders the run's
    report.html once this returns; the job itself draws and renders nothing.

    `process_started` (a `time.time()` value), when given, is when the process that runs the job started:
    run.json's total seconds then count from there, and `startup` is the time until the job began (for
    `skewless run`, mostly importing TensorFlow, tf.Transform and Beam).

    `parse_ahead`, when given, is `skewless run`'s process parsing `config`'s input in the staging folder it
    claimed before those imports (`ahead_of_imports.started`): the job writes there and takes the units parsed.

    Examples:
        configs/example.yaml on 2,000 of its synthetic rows; each row goes to one split, or to quarantine:

        >>> import os
        >>> from skewless.config import load_config
        >>> from skewless.pipelines.commands.run import run
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
        return _run(config, overwrite, beam_args, progress, process_started, parse_ahead)


def _run(config: JobConfig, overwrite: bool, beam_args: list[str] | None, progress, process_started: float | None,
         ahead: ParseAhead | None) -> RunResult:
    started = time.time()
    output_dir = config.output.dir
    output = StagedOutput(output_dir, overwrite, beam_args or [], "run", *reads(config))
    job_plan = plan(config)
    with output.staging(ahead.claimed if ahead else None) as staging:
        known = not config.cache_dir
        # the parsing process is ended before the staging folder it writes in is published or released
        with progress(lambda: snapshot(staging, total_known=known)) if progress else nullcontext(), \
                _ended(ahead):
            _run_pipeline(config, job_plan, staging, beam_args or [], ahead)
            pipeline_seconds = time.time() - started
            # within the progress: a refusal of what the pass found (too many bad rows, no row) ends it "failed"
            parts = unit_parts(job_plan, staging)
            sums = sum_parts(config, parts)
        summary = _assemble(config, job_plan, staging, parts, sums, started, pipeline_seconds, process_started)
        # rows.unlabeled only where the run counts it (label.missing: drop), as run.json has it
        rows = summary.rows.model_dump(exclude_none=True)
        summary = summary.model_dump()
        result = RunResult(output_dir, rows, summary["shards"], summary["seconds"], summary["features"])
        if config.output.keras_preprocessor:
            result.keras_preprocessor = export_keras_preprocessor(config, job_plan, staging)
    return result


def _run_pipeline(config: JobConfig, job_plan: JobPlan, staging: str, beam_args: list[str], ahead: ParseAhead | None
                  ) -> None:
    run = RunDirectory(staging)
    graph_dir = run.graph_dir
    reader = RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    parsed_dir = run.parsed_dir if config.input.keep_parsed else None
    options = pipeline_options(config, beam_args)
    if ahead is not None and not (ahead.matches(config, job_plan.units, job_plan.columns)
                                  and runners.workers_in_this_process(options)):
        ahead.discard()
        ahead = None
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
        parse_ahead=ahead.handoff if ahead else None,
    )
    unit_writes = unit_write_spec(config, job_plan, reader, graph_dir, staging, parsed_dir)
    in_memory = saved_model_reuse.analysis_graphs_in_memory() if runners.workers_in_this_process(options) \
        else nullcontext()
    with beam_introspection.memoized(), saved_model_reuse.installed(), in_memory, eager_tables.dropped_after(), \
            key_lookup.installed(), deferred_schema.skipped(), arrow_coder.registered(), state_sampler.quick(), \
            runners.pipeline(options, config.runner.start_timeout, work_started(staging)) as pipeline:
        with tft_beam.Context(temp_dir=run.tmp_dir):
            analyzed = pipeline | "AnalyzeInputs" >> AnalyzeInputs(analysis)
        _ = pipeline | "TransformAndWrite" >> TransformAndWrite(
            job_plan.units, unit_writes, graph_ready=beam.pvalue.AsSingleton(analyzed["graph"]))
        _ = pipeline | "CountSplitStatistics" >> CountSplitStatistics(job_plan.units, unit_writes, analyzed)
        arrow_coder.infer_onward(pipeline)
    files.remove_tree(run.tmp_dir)


@contextmanager
def _ended(ahead: ParseAhead | None):
    """Ends `ahead`'s process on the way out, however the body ends."""
    try:
        yield
    finally:
        if ahead is not None:
            ahead.stop()


def _assemble(config: JobConfig, job_plan: JobPlan, staging: str, parts: list, sums: tuple, started: float,
              pipeline_seconds: float, process_started: float | None) -> RunSummary:
    """run.json from the units' summaries (`parts`) and their sums (`sum_parts`), and each split's statistics."""
    run = RunDirectory(staging)
    raw_stats = assemble_statistics(config, job_plan, staging)
    analyzed = len(files.files_under(run.stats_dir))  # none when the cache had everything
    features = feature_report(config, job_plan.columns, raw_stats, parts, staging)
    write_metadata(config, job_plan, staging)
    output_format(config.output.format).finish(staging)
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


