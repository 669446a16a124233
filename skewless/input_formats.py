"""The input formats: one line each, naming the module that reads it and the options it takes. Adding a format
is that module plus a line (and its options model here); adding an option is one field of its format's model.

This registry holds what the light parts need without reading any data: the config's `input` (a union of the
formats' option models on `format`, `skewless.config.InputConfig`) and which keys each format needs, the CLI's
`--format` choices, the formats a file's suffix tells, whether values arrive as text (`schemas.infer`), and the
docs' formats table (`python -m skewless.input_formats`). It imports only pydantic and the options' base
(`skewless.input_options`), so the CLI stays fast. Everything that reads data is the format's own `FORMAT`
object (`skewless.pipelines.reading.format`), imported by `reader_of` when a job, `schema infer` or
`make_raw_dataset` needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any, Literal

from pydantic import Field, model_validator

from skewless.input_options import InputOptions, LineOptions, absolute_path, option_default

_DUCKDB_URL = "duckdb://"


class CsvOptions(LineOptions):
    format: Literal["csv"]
    header: bool = Field(default=False, description="the first line of each file names the columns")
    columns: list[str] | None = Field(default=None, description="without a header: the column names in order")
    delimiter: str = Field(default=",", description="one character between fields")
    skip_initial_space: bool | Literal["auto"] = Field(default="auto", description=(
        "spaces after a delimiter are part of it (the UCI census's `, `); never inside quotes; auto: where every "
        "field after a delimiter in the file's first lines (its header too) starts with one (values.md)"))
    multiline: bool = Field(default=False, description=(
        "quoted fields may hold line breaks (RFC 4180): each file is read whole by one worker"))

    @model_validator(mode="after")
    def _check_syntax(self) -> "CsvOptions":
        if len(self.delimiter) != 1:
            raise ValueError(f"input.delimiter must be one character, got {self.delimiter!r}")
        if self.columns is not None:
            duplicates = sorted({name for name in self.columns if self.columns.count(name) > 1})
            if duplicates:
                raise ValueError(f"input.columns names {', '.join(duplicates)} more than once")
            if not all(name.strip() for name in self.columns):
                raise ValueError("input.columns has an empty column name")
        return self


class ParquetOptions(InputOptions):
    format: Literal["parquet"]


class TfrecordOptions(InputOptions):
    format: Literal["tfrecord"]
    record: Literal["example", "sequence_example"] = Field(default="example", description=(
        "what each record is: a tf.train.Example, or a tf.train.SequenceExample whose feature lists are the "
        "features with `sequence: true`"))

    @property
    def sequence_examples(self) -> bool:
        return self.record == "sequence_example"


class JsonlOptions(LineOptions):
    format: Literal["jsonl"]


class SqlOptions(InputOptions):
    format: Literal["sql"]
    url: str | None = Field(default=None, description=(
        "the database: `duckdb://PATH` (a file, relative to the config), `duckdb://` (SQL over files), "
        "`postgresql://user@host:5432/db` (recipes/sql.md)"))
    query: str | None = Field(default=None, description="the rows of this SELECT")
    table: str | None = Field(default=None, description="or the rows of this table")
    order_by: list[str] | None = Field(default=None, description=(
        "columns ordering the rows totally, to cut them into work units by LIMIT/OFFSET (none: one unit)"))

    @model_validator(mode="after")
    def _one_source(self) -> "SqlOptions":
        if self.query and self.table:
            raise ValueError("input.query and input.table: give one (a table is read as SELECT * FROM it)")
        return self

    def resolve_paths(self, base_dir: str) -> None:
        super().resolve_paths(base_dir)
        if self.duckdb_file() is not None:
            # a DuckDB file is a path like input.paths: relative to the config's folder
            self.url = _DUCKDB_URL + absolute_path(self.duckdb_file(), base_dir)

    def files_read(self) -> list[str]:
        return [*super().files_read(), *filter(None, [self.duckdb_file()])]

    def duckdb_file(self) -> str | None:
        """The DuckDB database file `url` names; None for another database or DuckDB in memory (`:memory:`)."""
        database = self.url.removeprefix(_DUCKDB_URL) if self.url and self.url.startswith(_DUCKDB_URL) else ""
        return database if database and not database.startswith(":") else None


class SyntheticOptions(InputOptions):
    format: Literal["synthetic"]
    rows: int | None = Field(default=None, gt=0, description="how many rows")
    seed: int = Field(default=0, description="the random generator's seed: one seed, the same rows")


class PythonOptions(InputOptions):
    format: Literal["python"]
    generator: str | None = Field(default=None, description=(
        "`module.path:function`, called as function(shard, num_shards, **args) once per work unit; it yields "
        "rows (dicts of column -> value) lazily, so the data never has to fit in memory"))
    args: dict[str, Any] = Field(default_factory=dict, description="more keyword arguments of the generator")

    @model_validator(mode="after")
    def _names_a_function(self) -> "PythonOptions":
        if self.generator is not None and ":" not in self.generator:
            raise ValueError("input.generator: expected 'module.path:function'")
        return self


@dataclass(frozen=True)
class FormatEntry:
    """One input format: its name, the module whose `FORMAT` reads it, its options and what the docs say of it."""

    name: str
    module: str
    options: type[InputOptions]  # the `input` keys it takes: the common ones and its own (its model's fields)
    summary: str  # one line for the docs' formats table
    needs: tuple[str, ...] = ()  # input keys it requires; "a|b": one of them
    suffixes: tuple[str, ...] = ()  # file names that say this format (a trailing .gz/.gzip aside)
    text: bool = False  # values arrive as text that `schemas.row_checks.parse_text` types (CSV)
    # its string values are text a numeric column parses (JSON Lines: "1.5" for a z_score feature), as CSV's are
    parses_strings: bool = False
    # whether its `FORMAT.fingerprint` changes whenever its rows do, so an analyzer cache (cache_dir) can be keyed
    # on it: files by name, size and modification time; a database or a generator has nothing to tell
    cache_sees_changes: bool = True
    # whether `skewless run` parses it in a process of its own while it imports TensorFlow (parse_ahead.py): files
    # its reader reads with pyarrow alone; not a database or a generator, which that process would query or call
    # a second time
    parsed_ahead: bool = False


INPUT_FORMATS: dict[str, FormatEntry] = {entry.name: entry for entry in (
    FormatEntry("csv", "skewless.pipelines.reading.csv", CsvOptions,
                "delimited text, one row a line (or RFC 4180 records with `multiline`); gzip or plain",
                needs=("paths", "header|columns"), suffixes=(".csv", ".data", ".txt", ".tsv"), text=True,
                parses_strings=True, parsed_ahead=True),
    FormatEntry("parquet", "skewless.pipelines.reading.parquet", ParquetOptions,
                "Apache Parquet files; typed columns, lists as list columns", needs=("paths",),
                suffixes=(".parquet", ".pq"), parsed_ahead=True),
    FormatEntry("tfrecord", "skewless.pipelines.reading.tfrecord", TfrecordOptions,
                "TFRecord files of tf.train.Example (or SequenceExample with `record`); gzip or plain",
                needs=("paths",), suffixes=(".tfrecord", ".tfrecords")),
    FormatEntry("jsonl", "skewless.pipelines.reading.jsonl", JsonlOptions,
                "JSON Lines, one object a line; JSON lists as list columns; gzip or plain", needs=("paths",),
                suffixes=(".jsonl", ".ndjson"), parses_strings=True, parsed_ahead=True),
    FormatEntry("sql", "skewless.pipelines.reading.sql", SqlOptions,
                "the rows of a SQL `query` or `table` at a database `url`: DuckDB (embedded) or PostgreSQL",
                needs=("url", "query|table"), cache_sees_changes=False),
    FormatEntry("synthetic", "skewless.pipelines.reading.synthetic", SyntheticOptions,
                "the bundled census-like dataset: `rows` rows from `seed`", needs=("rows",)),
    FormatEntry("python", "skewless.pipelines.reading.generator", PythonOptions,
                "rows (dicts) a Python `generator` yields, called once per work unit", needs=("generator",),
                cache_sees_changes=False),
)}
FILE_FORMATS = tuple(name for name, entry in INPUT_FORMATS.items() if "paths" in entry.needs)
# The input keys that say what a raw value means in every format (docs/values.md): new data read with a run's graph
# (`skewless apply`) or its export (`skewless predict`) is read with the run's.
VALUE_OPTIONS = ("nonfinite", "na_values", "list_delimiter")
# The input keys that say how text splits into values (CSV's): kept for new data of the run's format.
SYNTAX_OPTIONS = ("delimiter", "skip_initial_space", "multiline")


def formats_taking(key: str) -> tuple[str, ...]:
    """The formats whose options include `key`, in registry order (every one for a common key)."""
    return tuple(name for name, entry in INPUT_FORMATS.items() if key in entry.options.model_fields)


def option_defaults() -> dict[str, Any]:
    """Every key some format alone (or a few) takes -> its default, in registry order (a format's in its order)."""
    return {key: option_default(entry.options, key) for entry in INPUT_FORMATS.values()
            for key in entry.options.own_options()}


def reader_of(name: str):
    """The `InputFormat` object that reads format `name` (imports its module, which may import pyarrow)."""
    return import_module(INPUT_FORMATS[name].module).FORMAT


def formats_table() -> str:
    """The docs' table of input formats (docs/config.md), one row per registry line, with the options its model
    declares (what every format takes, `InputOptions`, the config reference's example shows)."""
    rows = ["| format | what it reads | needs | its options (default) | file names |", "|---|---|---|---|---|"]
    for entry in INPUT_FORMATS.values():
        needs = ", ".join(" or ".join(f"`{key}`" for key in need.split("|")) for need in entry.needs)
        options = "<br>".join(f"`{key}` ({_shown(option_default(entry.options, key))}): "
                              f"{entry.options.model_fields[key].description}" for key in entry.options.own_options())
        suffixes = ", ".join(f"`{suffix}`" for suffix in entry.suffixes) or "-"
        cells = (f"`{entry.name}`", entry.summary, needs, options or "-", suffixes)
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"


def _shown(default) -> str:
    """A default as a config writes it."""
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, str) and not default.isalnum():
        return f'"{default}"'
    return "none" if default is None else f"{default:,}" if isinstance(default, int) else str(default)


if __name__ == "__main__":
    print(formats_table(), end="")
