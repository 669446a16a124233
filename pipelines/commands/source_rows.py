"""Rows as the source holds them, for `skewless verify`: each with its place (file:line) and the job's verdict.

The job's reader types and judges raw values (CSV text is parsed, NA tokens and NaN become missing, JSON
booleans become numbers); serving, `predict`, `apply` and the native layers each meet the same values in the
form a client holds them. To compare the paths on what the source really holds, the values here are read
independently of the job's reader: a CSV field is its text as Python's csv module splits the line (nothing
trimmed, quotes removed), a JSON line is `json.loads`'d, Parquet, TFRecord and SQL rows are the values their
files or engine hold (`InputFormat.batches`, what `schema validate` reads), a generator's rows are what it
yields. `job_verdicts` then reads the same input with the job's own reader and says, row by row, whether the
job wrote the row (to which split, at which position of the split's shards), quarantined it (why), or left it
out (no label).

`request_row` makes a raw row the request a client sends: the raw spec's type from the value as held (text
of a number parsed as Python's `int`/`float` read it, a boolean as 1/0, a CSV list split at
`input.list_delimiter`); a value no request can carry (text in a numeric feature) is a `RefusedValue`.
"""

from __future__ import annotations

import csv
import datetime
import io
import itertools
import json
import math
import re
from dataclasses import dataclass

import numpy as np
import tensorflow as tf

from skewless.errors import InputError
from skewless.input_formats import reader_of
from skewless.layers import serialize_raw_examples
from skewless.sequence_specs import split_raw_spec
from skewless.pipelines.reading.files import open_input
from skewless.pipelines.reading.generator import GENERATOR_SOURCE
from skewless.pipelines.reading.sources import RowReader
from skewless.pipelines.write.transform import split_of
from skewless.references import import_function

# rows a format's `batches` hands at a time here
_BATCH_ROWS = 4096


@dataclass(frozen=True)
class SourceRow:
    source: str  # as the job's quarantine names it: a file, a SQL source, generator[shard i of n]
    number: int  # its line (CSV, JSON Lines) or record/row number (1-based)
    values: dict  # column -> the value as the source holds it (None: absent); {} for a row that did not split

    @property
    def where(self) -> str:
        return f"{self.source}:{self.number}"


@dataclass(frozen=True)
class Verdict:
    """What the job did with a row: "written" (to `split`, record `position` of its shards), "quarantined"
    (`reason`) or "unlabeled" (left out, label.missing: drop)."""

    outcome: str
    split: str | None = None
    position: int | None = None
    reason: str | None = None


class AlignmentError(Exception):
    """The raw rows and the job reader's rows do not pair up (so they cannot be compared row by row)."""


class RefusedValue(ValueError):
    """A raw value no request of its feature's type can carry (text that is no number in a numeric feature)."""


def source_rows(job_plan, limit: int) -> list[SourceRow]:
    """The first `limit` rows of the run's input, in the job's order (work units in order), as the source holds them."""
    input_config = job_plan.input_config  # resolved: a CSV header's columns filled in
    kind = input_config.format
    if kind == "python":
        return list(itertools.islice(_generator_rows(input_config, job_plan.units), limit))
    paths = reader_of(kind).inputs(input_config)
    if kind == "csv":
        rows = (row for path in paths for row in _csv_rows(input_config, path))
    elif kind == "jsonl":
        rows = (row for path in paths for row in _json_rows(path))
    else:
        rows = _typed_rows(input_config, paths)
    return list(itertools.islice(rows, limit))


def _csv_rows(input_config, path: str):
    """A CSV file's rows: each line's fields as Python's csv module splits them, quotes removed, nothing trimmed."""
    with open_input(path) as handle:
        text = handle.read().decode("utf-8", errors="backslashreplace")
    if text.startswith("\ufeff"):
        text = text[1:]
    columns = list(input_config.columns or [])
    header_seen = not input_config.header
    if input_config.multiline:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=input_config.delimiter)
        start = 1
        for fields in reader:
            number, start = start, reader.line_num + 1
            if not fields or not "".join(fields).strip():
                continue
            if not header_seen:
                header_seen = True
                continue
            yield SourceRow(path, number, _by_column(columns, fields))
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue  # a blank line is no row, for the job too
        if not header_seen:
            header_seen = True
            continue
        try:
            fields = next(csv.reader([line], delimiter=input_config.delimiter, strict=True))
        except csv.Error:
            fields = []
        yield SourceRow(path, number, _by_column(columns, fields))


def _by_column(columns: list[str], fields: list[str]) -> dict:
    return dict(zip(columns, fields)) if len(fields) == len(columns) else {}


def _json_rows(path: str):
    with open_input(path) as handle:
        lines = handle.read().decode("utf-8", errors="backslashreplace").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            values = json.loads(line)
        except ValueError:
            values = {}
        yield SourceRow(path, number, values if isinstance(values, dict) else {})


def _typed_rows(input_config, paths: list[str]):
    """Parquet, TFRecord and SQL rows: the values the file or the engine holds, as `schema validate` reads them."""
    for part in reader_of(input_config.format).batches(input_config, paths, _BATCH_ROWS):
        rows = part.batch.to_pylist()
        held = [SourceRow(part.path, int(number), _plain(values)) for number, values in zip(part.numbers, rows)]
        held += [SourceRow(part.path, row.number, {}) for row in part.rejected]
        yield from sorted(held, key=lambda row: row.number)


def _plain(values: dict) -> dict:
    """A decoded Example's lists of one value as that value, empty ones as absent (`request_row` makes a list
    feature's value a list again)."""
    return {name: _one(value) for name, value in values.items()}


def _one(value):
    if isinstance(value, list) and len(value) <= 1:
        return value[0] if value else None
    return value


def _generator_rows(input_config, units):
    generator = import_function(input_config.generator, "input.generator")
    for unit in units:
        for segment in unit.segments:
            assert segment.path == GENERATOR_SOURCE
            source = f"{input_config.generator}[shard {segment.start} of {segment.stop}]"
            for number, row in enumerate(generator(shard=segment.start, num_shards=segment.stop,
                                                   **input_config.args), start=1):
                yield SourceRow(source, number, dict(row) if isinstance(row, dict) else {})


def job_verdicts(config, job_plan, rows: list[SourceRow]) -> list[Verdict]:
    """What the job's reader makes of each of `rows` (the input's first rows, in order), and where the job wrote
    it: its split and its position among the split's rows (the shards hold each split's rows in input order)."""
    reader = RowReader.for_job(config, job_plan.input_config, job_plan.columns)
    bad, keys, unlabeled, read = {}, [], 0, 0
    for unit in job_plan.units:
        for chunk in reader.read(unit):
            bad.update({(row.source, row.line): row.reason for row in chunk.bad})
            keys.append(np.asarray(chunk.keys, np.uint64))
            unlabeled += chunk.unlabeled
            read += chunk.rows_read
            if read >= len(rows):
                break
        if read >= len(rows):
            break
    keys = np.concatenate(keys) if keys else np.zeros(0, np.uint64)
    splits = list(config.output.splits)
    split_index = split_of(keys, list(config.output.splits.values()))
    label = config.label.column if config.label is not None and unlabeled else None
    tokens = config.input.missing_tokens(label) if label else frozenset()
    verdicts, good, positions = [], 0, dict.fromkeys(splits, 0)
    for row in rows:
        reason = bad.get((row.source, row.number))
        if reason is not None:
            verdicts.append(Verdict("quarantined", reason=reason))
        elif label is not None and _is_missing(row.values.get(label), tokens):
            verdicts.append(Verdict("unlabeled"))
        else:
            if good >= len(keys):
                raise AlignmentError(f"{row.where}: the job's reader gave fewer good rows than the source holds")
            split = splits[split_index[good]]
            verdicts.append(Verdict("written", split, positions[split]))
            positions[split] += 1
            good += 1
    return verdicts


def _is_missing(value, tokens: frozenset) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
    return isinstance(text, str) and (not text.strip() or text.strip().encode() in tokens)


def request_row(row: SourceRow, raw_spec: dict, lists: set, input_config) -> dict:
    """`row` as a client's request: {feature: value or list of values, None where absent}, serialized as a raw
    Example by `serialize_raw_examples` (the export's clients' helper, which parses a number's text).

    Raises `RefusedValue` (naming the feature) for a value no request of its type can carry.
    """
    request = {}
    for name, spec in raw_spec.items():
        value = row.values.get(name)
        if name in lists:
            if isinstance(value, str):  # a CSV list is text: its items are what the delimiter cuts
                value = value.split(input_config.list_delimiter)
            elif value is not None and not isinstance(value, (list, tuple, np.ndarray)):
                value = [value]
        tokens = input_config.missing_tokens(name) if spec.dtype != tf.string else frozenset()
        if isinstance(value, (list, tuple, np.ndarray)):
            items = [_typed(item, spec.dtype, tokens) for item in value]
            request[name] = [item for item in items if item is not None] or None
        else:
            request[name] = _typed(value, spec.dtype, tokens)
    try:
        [serialized] = serialize_raw_examples([request], raw_spec)
    except InputError as error:
        named = re.search(r"raw feature '([^']+)' = (.*)", str(error))
        raise RefusedValue(f"{named.group(1)}: {named.group(2)}" if named else str(error)) from None
    if split_raw_spec(raw_spec)[1]:
        return request  # a SequenceExample's steps: served as they are
    # typed as the Example holds them (numbers parsed from their text), for the paths that take no Example
    features = tf.train.Example.FromString(serialized).features.feature
    typed = {}
    for name in raw_spec:
        held = features[name] if name in features else None
        values = None if held is None else list(held.bytes_list.value or held.float_list.value or held.int64_list.value)
        typed[name] = values if values is None or name in lists else values[0]
    return typed


def _typed(value, dtype: tf.DType, tokens: frozenset):
    """One raw value as a client holds it for a request of `dtype`; None: absent (a client sends no value).

    A number request cannot carry text that is no number: empty text and the column's NA `tokens` are left out
    (missing), as the job reads them; other text is left for `serialize_raw_examples` to parse."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        value = int(value)  # a boolean is 1/0 in every format (docs/values.md)
    if isinstance(value, datetime.datetime):
        value = value.timestamp() if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc).timestamp()
    elif isinstance(value, datetime.date):
        value = value.isoformat()
    if dtype == tf.string:
        return value if isinstance(value, (bytes, str)) else str(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="backslashreplace")
    if isinstance(value, str) and (not value.strip() or value.strip().encode() in tokens):
        return None
    return value
