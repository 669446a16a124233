"""The input formats: one line each, naming the module that reads it. Adding a format is that module plus a line.

This registry holds what the light parts need without reading any data: the config's `input.format` values
and which input keys each format needs or alone takes, the CLI's `--format` choices, the formats a file's
suffix tells, whether values arrive as text (`schemas.infer`), and the docs' formats table
(`python -m skewless.input_formats`). It imports nothing of the project and nothing heavy, so the CLI stays
fast. Everything that reads data is the format's own `FORMAT` object (`skewless.pipelines.reading.format`),
imported by `reader_of` when a job, `schema infer` or `make_raw_dataset` needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module


@dataclass(frozen=True)
class FormatEntry:
    """One input format: its name, the module whose `FORMAT` reads it, and what the config and docs say of it."""

    name: str
    module: str
    summary: str  # one line for the docs' formats table
    needs: tuple[str, ...] = ()  # input keys it requires; "a|b": one of them
    options: tuple[str, ...] = ()  # input keys no other format takes (set on another one, they are an error)
    suffixes: tuple[str, ...] = ()  # file names that say this format (a trailing .gz/.gzip aside)
    text: bool = False  # values arrive as text that `schemas.row_checks.parse_text` types (CSV)
    # a line of a file is a row (CSV, JSON Lines): `input.max_line_bytes` bounds it
    lines: bool = False
    # its string values are text a numeric column parses (JSON Lines: "1.5" for a z_score feature), as CSV's are
    parses_strings: bool = False
    # whether its `FORMAT.fingerprint` changes whenever its rows do, so an analyzer cache (cache_dir) can be keyed
    # on it: files by name, size and modification time; a database or a generator has nothing to tell
    cache_sees_changes: bool = True


INPUT_FORMATS: dict[str, FormatEntry] = {entry.name: entry for entry in (
    FormatEntry("csv", "skewless.pipelines.reading.csv",
                "delimited text, one row a line (or RFC 4180 records with `multiline`); gzip or plain",
                needs=("paths", "header|columns"), options=("multiline",),
                suffixes=(".csv", ".data", ".txt", ".tsv"), text=True, lines=True, parses_strings=True),
    FormatEntry("parquet", "skewless.pipelines.reading.parquet",
                "Apache Parquet files; typed columns, lists as list columns", needs=("paths",),
                suffixes=(".parquet", ".pq")),
    FormatEntry("tfrecord", "skewless.pipelines.reading.tfrecord",
                "TFRecord files of tf.train.Example (or SequenceExample with `record`); gzip or plain",
                needs=("paths",), options=("record",), suffixes=(".tfrecord", ".tfrecords")),
    FormatEntry("jsonl", "skewless.pipelines.reading.jsonl",
                "JSON Lines, one object a line; JSON lists as list columns; gzip or plain", needs=("paths",),
                suffixes=(".jsonl", ".ndjson"), lines=True, parses_strings=True),
    FormatEntry("sql", "skewless.pipelines.reading.sql",
                "the rows of a SQL `query` or `table` at a database `url`: DuckDB (embedded) or PostgreSQL",
                needs=("url", "query|table"), options=("url", "query", "table", "order_by"), cache_sees_changes=False),
    FormatEntry("synthetic", "skewless.pipelines.reading.synthetic",
                "the bundled census-like dataset: `rows` rows from `seed`", needs=("rows",)),
    FormatEntry("python", "skewless.pipelines.reading.generator",
                "rows (dicts) a Python `generator` yields, called once per work unit", needs=("generator",),
                cache_sees_changes=False),
)}
LINE_FORMATS = tuple(name for name, entry in INPUT_FORMATS.items() if entry.lines)
FILE_FORMATS = tuple(name for name, entry in INPUT_FORMATS.items() if "paths" in entry.needs)
# The input keys that say what a raw value means in every format (docs/values.md): new data read with a run's graph
# (`skewless apply`) or its export (`skewless predict`) is read with the run's.
VALUE_OPTIONS = ("nonfinite", "na_values", "list_delimiter")
# The input keys that say how text splits into values (CSV's): kept for new data of the run's format.
SYNTAX_OPTIONS = ("delimiter", "skip_initial_space", "multiline")


def reader_of(name: str):
    """The `InputFormat` object that reads format `name` (imports its module, which may import pyarrow)."""
    return import_module(INPUT_FORMATS[name].module).FORMAT


def formats_table() -> str:
    """The docs' table of input formats (docs/config.md), one row per registry line."""
    rows = ["| format | what it reads | needs | file names |", "|---|---|---|---|"]
    for entry in INPUT_FORMATS.values():
        needs = ", ".join(" or ".join(f"`{key}`" for key in need.split("|")) for need in entry.needs)
        suffixes = ", ".join(f"`{suffix}`" for suffix in entry.suffixes) or "-"
        rows.append(f"| `{entry.name}` | {entry.summary} | {needs} | {suffixes} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(formats_table(), end="")
