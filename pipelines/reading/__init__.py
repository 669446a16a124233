"""The one reading layer of raw input: every reader of a job's input files goes through it.

`files` expands paths and globs, opens files through Beam's filesystems and tells gzip by its magic bytes;
`csv`, `parquet` and `tfrecord` read one format each, as Arrow batches plus the rows that do not split into
columns. The job (`sources`: planning work units, reading one), `skewless schema infer/validate` (through
`read_batches`), `make_raw_dataset` and `skewless verify` all read with them, so they cannot disagree on a file.
"""

from __future__ import annotations

from typing import Iterator, Sequence

from skewless.config import InputConfig
from skewless.errors import ConfigError
from skewless.pipelines.reading.batches import BATCH_ROWS, SourceBatch
from skewless.pipelines.reading.csv import columns_of, csv_batches
from skewless.pipelines.reading.files import expand_paths, format_of
from skewless.pipelines.reading.parquet import parquet_batches
from skewless.pipelines.reading.tfrecord import tfrecord_batches


def read_batches(config: InputConfig, batch_rows: int = BATCH_ROWS) -> Iterator[SourceBatch]:
    """Every row of the files `config` names, in file order, as `SourceBatch`es of up to `batch_rows` rows."""
    if config.format not in ("csv", "parquet", "tfrecord"):
        raise ConfigError(f"input format {config.format!r} has no files to read; use csv, parquet or tfrecord")
    paths = expand_paths(config.paths)
    columns = columns_of(paths, config) if config.format == "csv" else None
    for path in paths:
        if config.format == "csv":
            yield from csv_batches(path, config, columns, batch_rows)
        elif config.format == "parquet":
            yield from parquet_batches(path, batch_rows)
        else:
            yield from tfrecord_batches(path, batch_rows, config.record)


def input_config(
    inputs: Sequence[str],
    format: str | None = None,
    header: bool = False,
    columns: str | Sequence[str] | None = None,
    delimiter: str = ",",
    skip_initial_space: bool = True,
) -> InputConfig:
    """An `InputConfig` from command-line options; `format` defaults to what the file names say."""
    if isinstance(columns, str):
        columns = [name.strip() for name in columns.split(",") if name.strip()]
    format = format or format_of(inputs, "pass --format csv|tfrecord|parquet")
    if format == "csv" and not header and not columns:
        raise ConfigError("CSV input without --header needs --columns NAME,NAME,... (the column names in order)")
    try:
        return InputConfig(
            format=format,
            paths=list(inputs),
            header=header,
            columns=list(columns) if columns else None,
            delimiter=delimiter,
            skip_initial_space=skip_initial_space,
        )
    except ValueError as error:  # pydantic's ValidationError is a ValueError
        messages = [item["msg"].removeprefix("Value error, ") for item in getattr(error, "errors", lambda: [])()]
        raise ConfigError("; ".join(messages) or str(error)) from None
