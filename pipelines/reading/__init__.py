"""The one reading layer of raw input: every reader of a job's input files goes through it.

`files` expands paths and globs, opens files through Beam's filesystems and tells gzip by its magic bytes;
each format's module (`skewless.input_formats` names them) reads one format, as Arrow batches plus the rows
that do not split into columns, through its `FORMAT` (`format.InputFormat`). The job (`sources`: planning
work units, reading one), `skewless schema infer/validate` (through `read_batches`), `make_raw_dataset` and
`skewless verify` all read with them, so they cannot disagree on a file.

Beside the formats: the raw columns (`columns`), `RowReader` and the work units (`sources`), the read-ahead of
the next chunk (`read_ahead`), the parsed units kept between the passes (`parsed_units`), SequenceExample input
(`sequence_input`) and the bundled synthetic rows (`synthetic_rows`).
"""

from __future__ import annotations

from typing import Iterator, Sequence

from skewless.config import InputConfig, parse_input
from skewless.errors import ConfigError
from skewless.input_formats import FILE_FORMATS, INPUT_FORMATS, reader_of
from skewless.pipelines.reading.batches import BATCH_ROWS, SourceBatch
from skewless.pipelines.reading.files import format_of

# config keys -> the command-line options that set them, for errors
_OPTIONS = {"input.format": "--format", "input.header": "--header", "input.columns": "--columns NAME,NAME,..."}


def read_batches(config: InputConfig, batch_rows: int = BATCH_ROWS) -> Iterator[SourceBatch]:
    """Every row of the files `config` names, in file order, as `SourceBatch`es of up to `batch_rows` rows."""
    input_format = reader_of(config.format)
    paths = input_format.inputs(config)
    yield from input_format.batches(input_format.resolved(config, paths), paths, batch_rows)


def input_config(
    inputs: Sequence[str],
    format: str | None = None,
    header: bool = False,
    columns: str | Sequence[str] | None = None,
    delimiter: str = ",",
    skip_initial_space: bool | str = "auto",
) -> InputConfig:
    """An `InputConfig` from command-line options; `format` defaults to what the file names say. The options of
    CSV (the others) apply to CSV input: another format's model takes none of them."""
    if isinstance(columns, str):
        columns = [name.strip() for name in columns.split(",") if name.strip()]
    format = format or format_of(inputs, f"pass --format {'|'.join(FILE_FORMATS)}")
    options = {"header": header, "columns": list(columns) if columns else None, "delimiter": delimiter,
               "skip_initial_space": skip_initial_space}
    taken = INPUT_FORMATS[format].options.model_fields if format in INPUT_FORMATS else options
    try:
        return parse_input(format=format, paths=list(inputs), **{key: value for key, value in options.items()
                                                                 if key in taken})
    except ValueError as error:  # pydantic's ValidationError is a ValueError
        messages = [item["msg"].removeprefix("Value error, ") for item in getattr(error, "errors", lambda: [])()]
        message = "; ".join(messages) or str(error)
        for key, option in _OPTIONS.items():  # the user typed options, not config keys
            message = message.replace(key, option)
        raise ConfigError(message) from None
