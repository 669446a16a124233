"""Rows as the source holds them, for `skewless verify`: what each format's `held_rows` and `copy_head` do.

The job's reader types and judges raw values; `skewless verify` compares every path on what the source really holds,
read independently of that reader: a CSV field is its text as Python's csv module splits the line (quotes removed,
nothing trimmed but the spaces `skip_initial_space` makes part of the delimiter, docs/values.md's rule), a JSON line
is `json.loads`'d, Parquet, TFRecord and SQL rows are the values their files or engine hold (`InputFormat.batches`,
what `schema validate` reads), a generator's rows are what it yields. Each row keeps its place as the job's
quarantine names it (file and line or record number).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from dataclasses import dataclass
from typing import Iterator

from skewless.pipelines.reading.files import open_input

# rows a format's `batches` hands at a time here
_BATCH_ROWS = 4096


@dataclass(frozen=True)
class HeldRow:
    source: str  # as the job's quarantine names it: a file, a SQL source, generator[shard i of n]
    number: int  # its line (CSV, JSON Lines) or record/row number (1-based)
    values: dict  # column -> the value as the source holds it (None: absent); {} for a row that did not split

    @property
    def where(self) -> str:
        return f"{self.source}:{self.number}"


def csv_rows(config, path: str) -> Iterator[HeldRow]:
    """A CSV file's rows: each line's fields as Python's csv module splits them, quotes removed, nothing trimmed
    (but the spaces after a delimiter under `skip_initial_space`: CSV syntax, not the value)."""
    with open_input(path) as handle:
        text = handle.read().decode("utf-8", errors="backslashreplace")
    text = text.removeprefix("\ufeff")
    columns = list(config.columns or [])
    header_seen = not config.header
    if config.multiline:
        records = csv.reader(io.StringIO(text, newline=""), delimiter=config.delimiter,
                             skipinitialspace=config.skip_initial_space)
        start = 1
        for fields in records:
            number, start = start, records.line_num + 1
            if not "".join(fields).strip():
                continue
            if not header_seen:
                header_seen = True
                continue
            yield HeldRow(path, number, _by_column(columns, fields))
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue  # a blank line is no row, for the job too
        if not header_seen:
            header_seen = True
            continue
        try:
            fields = next(csv.reader([line], delimiter=config.delimiter, skipinitialspace=config.skip_initial_space,
                                     strict=True))
        except csv.Error:
            fields = []
        yield HeldRow(path, number, _by_column(columns, fields))


def _by_column(columns: list[str], fields: list[str]) -> dict:
    return dict(zip(columns, fields)) if len(fields) == len(columns) else {}


def json_rows(path: str) -> Iterator[HeldRow]:
    with open_input(path) as handle:
        lines = handle.read().decode("utf-8", errors="backslashreplace").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            values = json.loads(line)
        except ValueError:
            values = {}
        yield HeldRow(path, number, values if isinstance(values, dict) else {})


def typed_rows(input_format, config, paths: list[str]) -> Iterator[HeldRow]:
    """Parquet, TFRecord and SQL rows: the values the file or the engine holds, as `schema validate` reads them;
    an Example's list of one value is that value, an empty one absent."""
    for part in input_format.batches(config, paths, _BATCH_ROWS):
        held = [HeldRow(part.path, int(number), {name: _one(value) for name, value in values.items()})
                for number, values in zip(part.numbers, part.batch.to_pylist())]
        held += [HeldRow(part.path, row.number, {}) for row in part.rejected]
        yield from sorted(held, key=lambda row: row.number)


def _one(value):
    if isinstance(value, list) and len(value) <= 1:
        return value[0] if value else None
    return value


def copy_lines(path: str, target: str, last: int) -> None:
    """Lines 1..`last` of a text file, byte for byte (a gzip file is read through)."""
    with open_input(path) as handle, open(target, "wb") as out:
        for line in itertools.islice(handle, last):
            out.write(line)
