"""Around a staged pipeline, for `skewless run` and `apply` alike: what the job reads (its output may neither be, hold
nor replace it: `output.staging.StagedOutput`), its runner options, and whether its workers started."""

from __future__ import annotations

from apache_beam.options.pipeline_options import PipelineOptions

from skewless.config import JobConfig
from skewless.errors import ConfigError
from skewless.pipelines.output import files
from skewless.pipelines.output.progress import snapshot


def reads(config: JobConfig) -> tuple[list[str], list[str]]:
    """What a job reads and its output may therefore neither be, hold nor replace: (folders: the analyzer cache;
    files and globs: the input, a DuckDB database, the schema)."""
    read = [*config.input.files_read(), config.schema_path]
    return [config.cache_dir] if config.cache_dir else [], [path for path in read if path]


def pipeline_options(config: JobConfig, beam_args: list[str]):
    # `-- --runner=X` wins over runner.name (PipelineOptions lets keyword options override flags)
    flagged = [arg.split("=", 1)[1] for arg in beam_args if arg.startswith("--runner=")]
    options = dict(config.runner.options)
    # Beam's construction-time type checks infer each step's output type from its function's bytecode and check
    # every step's input against it: ~0.35 s of a warm 1,000-row run's 2.4 s (issue 40), for types the job does
    # not use (its steps are tested; the coders that matter are set where they are needed: arrow_coder.carrying).
    # `runner.options.pipeline_type_check: true` turns them on; the outputs are the same bytes either way.
    options.setdefault("pipeline_type_check", False)
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

