"""The output formats: one line each, naming the module that writes and reads it. Adding a format is that module
plus a line.

A run's shards hold one record per transformed row, in TFRecord files named by `skewless.run_directory`; what the
record is (a tf.train.Example, a SequenceExample, ...) is the run's `output.format`. This registry holds what the
light parts need: the config's `output.format` values and the docs' formats table (`python -m
skewless.output_formats`). It imports nothing of the project and nothing heavy, so the CLI stays fast. Everything
that encodes or parses records is the format's own `FORMAT` object (`skewless.pipelines.write.format`), imported by
`output_format` when the job, `make_dataset` or `verify` needs it.

`skewless predict`'s files are another notion: files of scored rows (key columns and model outputs) for other tools,
which nothing of skewless reads back through a graph; `PREDICTION_FORMATS` lists them (their encoders:
`skewless.pipelines.write.prediction_files`).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module


@dataclass(frozen=True)
class OutputFormatEntry:
    """One output format: its name, the module whose `FORMAT` encodes and parses its records, and the docs' line."""

    name: str
    module: str
    summary: str  # one line for the docs' formats table


OUTPUT_FORMATS: dict[str, OutputFormatEntry] = {entry.name: entry for entry in (
    OutputFormatEntry("example", "skewless.pipelines.write.example",
                      "`tf.train.Example`, one per row; a feature list as its two lists of the transformed spec"),
    OutputFormatEntry("sequence_example", "skewless.pipelines.write.sequence_example",
                      "`tf.train.SequenceExample`: feature lists as `feature_lists`, every other output as context; "
                      "`sequence_example.json` names which"),
)}
DEFAULT_FORMAT = "example"

# `skewless predict --format`: format -> the file extension of its prediction files
PREDICTION_FORMATS: dict[str, str] = {"csv": "csv", "parquet": "parquet", "jsonl": "jsonl"}


def output_format(name: str):
    """The `OutputFormat` object that encodes and parses format `name`'s records (imports its module)."""
    return import_module(OUTPUT_FORMATS[name].module).FORMAT


def formats_table() -> str:
    """The docs' table of output formats (docs/config.md), one row per registry line."""
    rows = ["| format | what a shard's record is |", "|---|---|"]
    rows += [f"| `{entry.name}` | {entry.summary} |" for entry in OUTPUT_FORMATS.values()]
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(formats_table(), end="")
