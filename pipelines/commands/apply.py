"""`apply(run_dir, ...)`: a finished run's transform graph applied, unchanged, to new raw data.

    new input ──plan (the run's config, its raw column types)──> work units
    work units ──TransformAndWrite (the job's transform pass, with RUN_DIR/transform_graph)──> data/, quarantine/
                 └──> run.json: which graph (its path and digest), rows, shards; statistics/ per split

No analyzer runs: mean, std, vocabularies and OOV ids are the run's, whatever the new data's distribution,
since re-analyzing it would be exactly the skew the graph exists to prevent. Everything else is the job's
(pipelines/commands/run.py): its plan, reader, row checks and quarantine, encoder, shard names, split rule, staging
and publish, so applying a run to its own input writes its data/ byte for byte.

The output holds a copy of the graph it applied (transform_graph/), so make_dataset, TransformLayer and
`skewless apply` read it as they read a run. Input without the run's label column is allowed (scoring
data): the graph's label output needs that column, so tf.Transform leaves it out of what it computes,
and the copy's transformed_metadata leaves it out too, so readers look for no label in the shards.
"""

from __future__ import annotations

import dataclasses
import os
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Callable

import tensorflow_transform as tft
from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io

from skewless.config import JobConfig, load_config
from skewless.errors import ConfigError, InputError
from skewless.input_formats import FILE_FORMATS, INPUT_FORMATS, VALUE_OPTIONS, reader_of
from skewless.output_formats import output_format
from skewless.pipelines.output import files, object_store
from skewless.pipelines.assemble.launch import pipeline_options, reads, work_started
from skewless.pipelines.assemble.summary import shared_summary_fields, sum_parts, unit_parts
from skewless.pipelines.plan.plan import JobPlan, plan
from skewless.pipelines.output.progress import snapshot
from skewless.pipelines.reading.files import format_of, told_format
from skewless.pipelines.reading.sources import RowReader
from skewless.pipelines.runner import runners
from skewless.pipelines.runner.one_job_at_a_time import one_job_at_a_time
from skewless.pipelines.statistics.assembly import assemble_statistics
from skewless.pipelines.statistics.in_input_order import CountSplitStatistics
from skewless.pipelines.write.transform_pass import TransformAndWrite, unit_write_spec
from skewless.pipelines.output.staging import StagedOutput
from skewless.progress_snapshot import Snapshot
from skewless.run_directory import CONFIG_FILE, GRAPH_DIR, RunDirectory
from skewless.run_summary import Applied, AppliedInput, RunSummary
from skewless.schemas.schema_io import schema_types
# --splits all: every row in one split of this name
ALL_SPLIT = "all"


@dataclass
class ApplyResult:
    output_dir: str
    run_dir: str  # the run whose graph was applied
    graph_sha256: str
    rows: dict
    shards: dict
    seconds: dict
    label_left_out: bool  # the input had no label column

    def summary(self) -> str:
        written = ", ".join(f"{split} {n:,}" for split, n in self.rows["written"].items())
        shard_count = sum(len(s) for s in self.shards.values())
        unlabeled = "; no label column in the input: label left out" if self.label_left_out else ""
        return (
            f"{self.output_dir}: applied {self.run_dir}'s graph (sha256 {self.graph_sha256[:12]}) to "
            f"{self.rows['read']:,} rows, wrote {written} in {shard_count} shards, quarantined "
            f"{self.rows['quarantined']:,}{unlabeled}; {self.seconds['total']:.1f} s"
        )


def apply(
    run_dir: str,
    output_dir: str,
    inputs: list[str] | None = None,
    input_format: str | None = None,
    columns: list[str] | None = None,
    header: bool | None = None,
    one_split: bool = False,
    overwrite: bool = False,
    beam_args: list[str] | None = None,
    process_started: float | None = None,
    max_bad_fraction: float | None = None,
    progress: Callable[[Callable[[], Snapshot | None]], AbstractContextManager] | None = None,
) -> ApplyResult:
    """Transforms `inputs` (default: the run's own input) with the graph of the run at `run_dir`.

    The input is read with the run's input settings (`input_format` replaces the format, which is otherwise
    what the names of `inputs` say, else the run's; `header` whether a CSV's first line names its columns, by
    default the run's, or yes where the run read another format; `columns` a headerless CSV's column names)
    and its raw column types; rows are checked, split, encoded, sharded and
    written as the run's were, into `output_dir`, published whole. `one_split` writes every row to one
    split, "all", instead of the run's splits. `max_bad_fraction` replaces the run's
    ``output.max_bad_fraction`` (new data may deserve a limit of its own). Raises InputError when `run_dir` is
    not a finished run. `progress` watches the transform pass as `job.run`'s watches the job (`skewless apply`
    draws it).

    Examples:
        After ``skewless run configs/example.yaml -o out/example``, new rows in a CSV file, one of them bad:

        >>> import json
        >>> import numpy as np
        >>> from skewless.pipelines.commands.apply import apply
        >>> from skewless.pipelines.tfdata.dataset import make_dataset
        >>> _ = open("new.csv", "w").write(
        ...     "age,workclass,education,occupation,hours_per_week,fnlwgt,capital_gain,native_country\\n"
        ...     "25,Private,HS-grad,Sales,40,150000,0,Cuba\\n"
        ...     "61,Astronaut,Masters,,60,90000,,Atlantis\\n"
        ...     "old,Private,HS-grad,Sales,40,150000,0,Cuba\\n")
        >>> result = apply("out/example", "out/new", inputs=["new.csv"], input_format="csv", header=True,
        ...                one_split=True, max_bad_fraction=0.5)
        >>> result.rows
        {'read': 3, 'written': {'all': 2}, 'quarantined': 1}

        The run's graph, so the run's statistics: age is z-scored with its mean and standard deviation:

        >>> age = json.load(open("out/example/run.json"))["features"]["age"]
        >>> features = next(iter(make_dataset("out/new", "all", label=None, shuffle_buffer=0)))
        >>> np.allclose(features["age"], (np.array([25, 61]) - age["mean"]) / age["std"])
        True
    """
    started = time.time()
    if files.is_local(run_dir):
        run_dir = os.path.abspath(run_dir)
    if files.is_local(output_dir):
        output_dir = os.path.abspath(output_dir)
    local_run = object_store.local_run(run_dir)
    config = applied_config(local_run, output_dir, inputs, input_format, columns, header, one_split,
                            max_bad_fraction)
    folders, inputs = reads(config)
    output = StagedOutput(output_dir, overwrite, beam_args or [], "applied", [run_dir, *folders], inputs)
    graph_dir = RunDirectory(local_run).graph_dir
    job_plan = _with_run_types(plan(config), graph_dir)
    run_label = _run_label(local_run)
    label_left_out = config.label is None and run_label is not None
    digest = files.folder_digest(graph_dir)
    with one_job_at_a_time(), output.staging() as staging:
        # no analysis pass, so no count of the rows to come
        with progress(lambda: snapshot(staging, total_known=False)) if progress else nullcontext():
            _run_pipeline(config, job_plan, graph_dir, staging, beam_args or [])
            pipeline_seconds = time.time() - started
            parts = unit_parts(job_plan, staging)
            sums = sum_parts(config, parts)  # within the progress: a refusal (too many bad rows) ends it "failed"
        # the new data's statistics, for `skewless validate OUTPUT --against RUN_DIR` (drift), counted as the job
        # counts a run's: the run's own input applied gives the run's statistics
        assemble_statistics(config, job_plan, staging, analysis_pass=False)
        oov = {name: sum(part.oov[name] for part in parts) for name in parts[0].oov}
        for folder in (RunDirectory(staging).parts_dir, RunDirectory(staging).progress_dir):
            files.remove_tree(folder)
        _copy_graph(local_run, staging, config.output.format, run_label if label_left_out else None)
        summary = RunSummary(
            **shared_summary_fields(config, parts, sums, started, pipeline_seconds, process_started,
                                    RunDirectory(staging).graph_dir),
            applied=Applied(run=run_dir, graph_sha256=digest, label_left_out=label_left_out),
            input=AppliedInput(format=config.input.format, paths=config.input.paths),
            oov_rows=oov,
        )
        files.write_bytes(RunDirectory(staging).summary_file, summary.to_json())
    return ApplyResult(output_dir, run_dir, digest, summary.rows.model_dump(exclude_none=True), summary.shards, summary.seconds, label_left_out)


def applied_config(run_dir: str, output_dir: str, inputs: list[str] | None, input_format: str | None,
                   columns: list[str] | None, header: bool | None, one_split: bool,
                   max_bad_fraction: float | None = None) -> JobConfig:
    """The run's config reading `inputs` and writing `output_dir`; without the label when the input lacks
    its column."""
    run = RunDirectory(run_dir)
    config_path = run.config_file
    if not os.path.exists(config_path) or not os.path.isdir(run.transform_fn_dir):
        raise InputError(f"{run_dir}: not a run directory of `skewless run` (needs {CONFIG_FILE} and "
                         f"{GRAPH_DIR}/transform_fn/)")
    config = load_config(config_path)
    raw = config.model_dump(by_alias=True)
    raw["base_dir"] = config.base_dir
    if inputs:
        # a command-line path is the shell's: relative to the current directory
        raw["input"]["paths"] = [path if "://" in path else os.path.abspath(path) for path in inputs]
        input_format = input_format or _format_of_new_files(inputs, config.input.format)
    if input_format and input_format != config.input.format:
        # the run's settings for another format do not apply: keep only those every format has
        general = (*VALUE_OPTIONS, "keep_parsed")
        raw["input"] = {"format": input_format, "paths": raw["input"]["paths"],
                        **{key: raw["input"][key] for key in general}}
        entry = INPUT_FORMATS.get(input_format)  # an unknown format is refused by load_config below
        if entry and "header|columns" in entry.needs and header is None and not columns:
            header = True  # a CSV's first line names its columns unless told otherwise, as for `skewless predict`
    if header is not None:
        raw["input"]["header"] = header
    if columns:
        raw["input"]["columns"] = list(columns)
    raw["output"]["dir"] = output_dir
    if raw.get("label"):
        # new data keeps its rows without a label as the run's data would be judged by default: quarantined
        raw["label"]["missing"] = "quarantine"
    if one_split:
        raw["output"]["splits"] = {ALL_SPLIT: 1.0}
    if max_bad_fraction is not None:
        raw["output"]["max_bad_fraction"] = max_bad_fraction
    # the transform pass reads the input itself: there is no analysis pass to keep parsed units for it
    raw["input"]["keep_parsed"] = False
    try:
        applied = load_config(raw)
    except ConfigError as error:
        # load_config names a dict "config": name the run's config and the options that changed it
        raise ConfigError(f"{config_path} with the options given (--input, --format, --header, --columns, "
                          "--max-bad-fraction): "
                          f"{str(error).removeprefix('config: ')}") from None
    if applied.label is not None and not _has_column(applied, applied.label.column):
        applied = applied.model_copy(update={"label": None})
    return applied


def _format_of_new_files(inputs: list[str], run_format: str) -> str:
    """The format of new files given without one: what their names say (as for `skewless predict`), the run's
    where they say nothing else and the run read files. Never the run's generator or database, which would read
    the run's own rows again and leave the new files unread."""
    named = {told_format(path) for path in inputs} - {None}
    if named <= {run_format} and run_format in FILE_FORMATS:
        return run_format
    remedy = f"pass --format {'|'.join(FILE_FORMATS)}"
    if not named:
        raise ConfigError(f"--input {inputs[0]}: cannot tell the format from the name, and the run read "
                          f"{run_format} input, not files; {remedy}")
    return format_of(inputs, remedy)


def _has_column(config: JobConfig, name: str) -> bool:
    """Whether the input holds column `name`: a CSV's header or columns, else the types of its first rows."""
    input_format = reader_of(config.input.format)
    paths = input_format.inputs(config.input)  # absolute: the run's config.yaml and --input hold them so
    return name in input_format.column_names(config.input, paths, wanted={name})


def _with_run_types(job_plan: JobPlan, graph_dir: str) -> JobPlan:
    """The plan with each raw column typed as the run typed it (its raw schema beside the graph), not as
    the new input's values suggest: the graph takes the run's types, and a value that does not parse as
    one goes to quarantine, as in the run."""
    kinds = schema_types(tft.TFTransformOutput(graph_dir).raw_metadata.schema)
    columns = [dataclasses.replace(column, kind=kinds[column.name]) for column in job_plan.columns]
    return dataclasses.replace(job_plan, columns=columns)


def _run_label(run_dir: str) -> str | None:
    return RunDirectory(run_dir).read_summary().label_column


def _run_pipeline(config: JobConfig, job_plan: JobPlan, graph_dir: str, staging: str, beam_args: list[str]) -> None:
    reader = RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    unit_writes = unit_write_spec(config, job_plan, reader, graph_dir, staging)
    with runners.pipeline(pipeline_options(config, beam_args), config.runner.start_timeout,
                          work_started(staging)) as pipeline:
        _ = pipeline | "TransformAndWrite" >> TransformAndWrite(job_plan.units, unit_writes)
        _ = pipeline | "CountSplitStatistics" >> CountSplitStatistics(job_plan.units, unit_writes)


def _copy_graph(run_dir: str, staging: str, format_name: str, left_out_label: str | None) -> None:
    """The applied graph beside the shards, and the run files of its output format (the feature-list names of
    SequenceExample shards), so the output reads as a run does; without `left_out_label` in the transformed
    metadata, which describes the shards."""
    run, copy = RunDirectory(run_dir), RunDirectory(staging)
    for path in files.files_under(run.graph_dir):
        files.write_bytes(os.path.join(copy.graph_dir, os.path.relpath(path, run.graph_dir)), files.read_bytes(path))
    for name in output_format(format_name).run_files:
        files.write_bytes(os.path.join(copy.path, name), files.read_bytes(os.path.join(run.path, name)))
    if left_out_label is not None:
        _drop_from_transformed_metadata(copy.graph_dir, left_out_label)


def _drop_from_transformed_metadata(graph_dir: str, name: str) -> None:
    schema = tft.TFTransformOutput(graph_dir).transformed_metadata.schema
    kept = [feature for feature in schema.feature if feature.name != name]
    del schema.feature[:]
    schema.feature.extend(kept)
    folder = os.path.join(graph_dir, tft.TFTransformOutput.TRANSFORMED_METADATA_DIR)
    files.remove_tree(folder)
    metadata_io.write_metadata(dataset_metadata.DatasetMetadata(schema), folder)
