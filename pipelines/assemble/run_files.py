"""The files a job writes beside its graph once the pipeline is done: the raw metadata and the config, the
SequenceExample shards' feature lists, and the native Keras preprocessor with its check."""

from __future__ import annotations

import yaml
from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io

from skewless.config import JobConfig
from skewless.lazy_imports import lazy_import
from skewless.pipelines.output import files
from skewless.pipelines.plan.plan import JobPlan, sample_rows
from skewless.pipelines.reading.columns import raw_schema
from skewless.redaction import options_without_credentials, url_without_credentials
from skewless.run_directory import KERAS_PREPROCESSOR_FILE, RunDirectory

# on first use: skewless.layers imports Keras 3, which a job needs only to export the Keras preprocessor
# (tests/cli/test_cli_startup.py checks that a run without one never loads it)
layers = lazy_import("skewless.layers")


def write_metadata(config: JobConfig, job_plan: JobPlan, staging: str) -> None:
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
    # so are runner options that hold a credential (S3's keys): later commands get them as Beam does, from the
    # environment or their own `--` arguments
    kept["runner"]["options"] = options_without_credentials(kept["runner"]["options"])
    files.write_bytes(run.config_file, yaml.safe_dump(kept, sort_keys=False).encode())


def export_keras_preprocessor(config: JobConfig, job_plan: JobPlan, run_dir: str) -> dict:
    """Writes the native Keras preprocessor with the features that match the graph exactly on sampled rows.

    A feature without an exact Keras equivalent is left out, never emitted different; which and why is
    in RUN_DIR/keras_preprocessor.json (and the summary line).
    """
    check = layers.export_keras_preprocessor(run_dir, rows=sample_rows(config, job_plan, 1000).to_pylist())
    summary = check.to_dict()
    summary["path"] = KERAS_PREPROCESSOR_FILE  # relative: the file moves with the run directory
    files.write_json(summary, RunDirectory(run_dir).keras_preprocessor_check_file)
    return summary

