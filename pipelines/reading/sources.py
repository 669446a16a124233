"""Raw input: reading one work unit as typed Arrow tables (the units are planned before: pipelines/plan/plan.py).

Each input format plans and reads through its own `FORMAT` object (`pipelines/reading/format.py`, named by
`skewless/input_formats.py`); what is the same for every format is here: judging rows, typing them, their split
keys (`split_rule.row_keys`).

A CSV byte range owns the lines that *start* inside it: a reader seeks to `start - 1`, drops the rest
of that line, then reads lines until one starts at or after `stop`. Lines are rows (quoted values with
newlines are not supported in splittable CSV). Files that cannot be split (gzip CSV) are one segment.

The files are read by the reading layer (`pipelines/reading`), as `skewless schema validate` reads them.
Every reader returns `Chunk`s: the rows that decoded, typed as the raw columns say, each with a split
key, plus the rows that did not (`BadRow`, with file, line or record number and the reason) so that
the job can put them in quarantine instead of dropping them. What makes a row bad is decided where
`skewless schema validate` decides it: text is parsed by `schemas.row_checks.parse_text` and every row is
judged by `check_batch` against the job's schema (`job_schema`). Damaged files (a TFRecord CRC, a cut gzip
stream) are an `InputError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from tensorflow_metadata.proto.v0 import schema_pb2

from skewless.boolean_values import as_int
from skewless.config import NUMERIC_LABEL_TRANSFORMS, InputConfig, JobConfig
from skewless.pipelines.reading.sequence_input import values_per_row
from skewless.schemas import load_schema
from skewless.schemas.row_checks import RowProblem, check_batch, missing_as_null, parse_text, string_domain_values
from skewless.schemas.schema_io import value_features
from skewless.transforms import TRANSFORMS
from skewless.errors import InputError
from skewless.input_formats import reader_of
from skewless.pipelines.reading.columns import ARROW_TYPES, RawColumn, to_list_array
from skewless.pipelines.reading.format import ROW_CHUNK, WorkUnit
from skewless.pipelines.reading.nested_shape import nesting_problems
from skewless.pipelines.reading.split_rule import row_keys


@dataclass(frozen=True)
class BadRow:
    source: str
    line: int | None  # 1-based line (CSV) or record/row number (other formats)
    reason: str
    raw: str

    def to_json(self) -> dict:
        return {"source": self.source, "line": self.line, "reason": self.reason, "raw": self.raw}


@dataclass
class Chunk:
    table: pa.Table  # the raw columns of the rows that decoded; nulls where a value is missing
    keys: np.ndarray  # uint64 split key per good row
    bad: list[BadRow] = field(default_factory=list)
    unlabeled: int = 0  # rows left out for having no label (label.missing: drop)

    @property
    def rows_read(self) -> int:
        return self.table.num_rows + len(self.bad) + self.unlabeled


# ------------------------------------------------------------------------------------------ what is bad


def job_schema(columns: list[RawColumn], schema=None, allowed: dict[str, list[str]] | None = None):
    """The tf.metadata Schema rows are judged by: the job's raw columns with their types, one value each.

    Every column requires its value (`check_batch` is told which have a `default` and may lack one).
    From `schema` (the config's) come the domains: string domains, int and float min/max, image domains
    (which every image column gets). `allowed` (column -> values, e.g. a label map's keys) narrows a
    string column's domain further.
    """
    types = {"int": schema_pb2.INT, "float": schema_pb2.FLOAT, "bytes": schema_pb2.BYTES}
    declared = {feature.name: feature for feature in value_features(schema)} if schema is not None else {}
    result = schema_pb2.Schema()
    for column in columns:
        feature = result.feature.add(name=column.name, type=types[column.kind])
        feature.presence.min_fraction = 1.0
        if column.shape is not None:  # exactly as many values as the shape holds (row_checks counts them)
            for size in column.shape:
                feature.shape.dim.add(size=size)
        elif not (column.is_list or column.sequence):  # a list holds any number of values, a feature list's steps too
            feature.value_count.min, feature.value_count.max = 1, 1
        values = None
        source = declared.get(column.name)
        if source is not None:
            if column.kind == "bytes":
                values = string_domain_values(source, schema)
            elif column.kind == "int" and source.HasField("int_domain"):
                feature.int_domain.CopyFrom(source.int_domain)
            elif column.kind == "float" and source.HasField("float_domain"):
                feature.float_domain.CopyFrom(source.float_domain)
        if column.kind == "bytes" and (column.image or (source is not None and source.HasField("image_domain"))):
            feature.image_domain.SetInParent()
        if column.kind == "bytes" and column.name in (allowed or {}):
            narrower = allowed[column.name]
            values = narrower if values is None else [value for value in narrower if value in values]
        if values is not None:
            feature.string_domain.value.extend(values)
    return result


def judged_schema(config: JobConfig, columns: list[RawColumn], allowed: dict[str, list[str]] | None = None):
    """`job_schema` of the config's schema file, each column's domain narrowed to its transform's `raw_above`:
    what `skewless run` judges rows by, and what the graph refuses at serving (`value_domains`)."""
    schema = None
    if config.schema_path:
        schema = load_schema(config.schema_path)
    judged = job_schema(columns, schema, allowed)
    bounds = {}
    for name, options in config.features.items():  # a column several features read: the highest bound of theirs
        bound, column = options.transform_kind.raw_above(options), options.raw_column(name)
        if bound is not None:
            bounds[column] = bound if bounds.get(column) is None else max(bounds[column], bound)
    if config.label is not None and config.label.transform in NUMERIC_LABEL_TRANSFORMS:
        # a label's transform refuses what a feature's does (log: -1 and below), the label having no clip
        bounds[config.label.column] = TRANSFORMS[config.label.transform].raw_above(config.label)
    for feature in judged.feature:
        if bounds.get(feature.name) is not None:
            _above(feature, bounds[feature.name])
    return judged


def value_domains(schema) -> dict[str, dict]:
    """{column: {"low", "high", "allowed"}} of the columns of a judged schema (`judged_schema`) whose values are
    bounded (int or float min/max) or listed (a string domain); a bound or list it lacks is None. Plain data:
    the graph's preprocessing_fn closes over it (`skewless.value_rules.refuse_outside_domain`)."""
    domains = {}
    for feature in schema.feature:
        numbers = feature.int_domain if feature.HasField("int_domain") else (
            feature.float_domain if feature.HasField("float_domain") else None)
        low = numbers.min if numbers is not None and numbers.HasField("min") else None
        high = numbers.max if numbers is not None and numbers.HasField("max") else None
        allowed = tuple(feature.string_domain.value) if feature.HasField("string_domain") else None
        if low is not None or high is not None or allowed is not None:
            domains[feature.name] = {"low": low, "high": high, "allowed": allowed}
    return domains


def _above(feature, bound: float) -> None:
    """Narrows a column's domain to values above `bound` (its transform's `raw_above`; log: -1, where log1p
    is finite), as float32 values, as the graph computes them: the float32 next to `bound` rounds there."""
    if feature.type == schema_pb2.INT:
        lowest_int = math.floor(bound) + 1
        feature.int_domain.min = (max(feature.int_domain.min, lowest_int) if feature.int_domain.HasField("min")
                                  else lowest_int)
    else:
        lowest = float(np.nextafter(np.float32(bound), np.float32(np.inf)))
        domain = feature.float_domain
        domain.min = max(domain.min, lowest) if domain.HasField("min") else lowest


# ---------------------------------------------------------------------------------------------- reading


def transform_checks(features: dict, columns: list[RawColumn]) -> dict:
    """{column: its transform's check of raw values} (`Transform.raw_check`: what no schema domain can say, a
    datetime's parse) for the `columns` read, from `features` (FeatureConfig by name): the job's reader and
    `skewless predict`'s quarantine the same rows."""
    read = {column.name for column in columns}
    checks = {options.raw_column(name): options.transform_kind.raw_check(options) for name, options in features.items()
              if options.raw_column(name) in read}
    return {name: check for name, check in checks.items() if check is not None}


class RowReader:
    """Reads work units of one input config as typed tables of the raw columns.

    Holds only plain data (the config, the columns, a schema proto), so it pickles to Beam workers.
    """

    def __init__(
        self,
        input_config: InputConfig,
        columns: list[RawColumn],
        split_key: str | None = None,
        allowed: dict[str, list[str]] | None = None,
        schema=None,
        drop_unlabeled: str | None = None,
    ):
        self.config = input_config
        self.columns = columns
        self.split_key = split_key
        # column -> the only values it may hold (a label map's keys)
        self.allowed = allowed or {}
        self.schema = job_schema(columns, schema, self.allowed)
        self._optional = [c.name for c in columns if c.optional]
        # the label column when rows without a label are left out (label.missing: drop), not quarantined
        self._drop_unlabeled = drop_unlabeled
        # column -> its NA tokens (input.na_values), for the columns that have any
        self.tokens = {c.name: tokens for c in columns if (tokens := input_config.missing_tokens(c.name))}
        # column -> a transform's check of its raw values (`Transform.raw_check`); the job's reader sets them
        self.value_checks: dict = {}
        # whether rows need their split keys: not where one split takes every row, whatever its key (the
        # job's reader says so); hashing every value is ~0.4 CPU s per 1M census rows on the read thread
        self.keyed = True

    @classmethod
    def for_job(cls, config: JobConfig, input_config: InputConfig, columns: list[RawColumn]) -> "RowReader":
        """The reader of `skewless run`: the config's split key, its schema's domains, its label map's keys."""
        allowed = {}
        if config.label is not None and config.label.map is not None:
            allowed[config.label.column] = list(config.label.map)
        drop = config.label.column if config.label is not None and config.label.missing == "drop" else None
        reader = cls(input_config, columns, config.output.split_key, allowed, drop_unlabeled=drop)
        reader.schema = judged_schema(config, columns, allowed)
        reader.value_checks = transform_checks(config.features, columns)
        reader.keyed = len(config.output.splits) > 1
        return reader

    def read(self, unit: WorkUnit) -> Iterator[Chunk]:
        """The unit's rows in chunks of `ROW_CHUNK` good rows (the last one fewer), whatever the format.

        Readers cut their input where the format does (CSV blocks of bytes, Parquet row groups, the records
        around one that does not decode); tf.Transform's analyzers and the statistics' sketches sum their
        batches in float32, so the same rows grouped otherwise would give other last bits. Regrouped, the
        same rows give the same bytes from every format.
        """
        input_format = reader_of(self.config.format)
        chunks = (chunk for segment in unit.segments for chunk in input_format.read(self, segment))
        yield from regrouped(chunks, ROW_CHUNK)

    # -- shared: judging rows, typing, split keys

    def chunk(
        self,
        batch: pa.RecordBatch,
        numbers: np.ndarray,
        rejected: list,
        source: str,
        raw: Callable[[int], str],
        line: Callable[[int], int] = int,
        text: bool = False,
        raw_rejected: Callable[[bytes], str] | None = None,
        problems: dict | None = None,
    ) -> Chunk:
        """Judges the rows of `batch` with `check_batch`; the good ones become the typed table, the rest BadRows.

        `numbers[i]` numbers row i and `line(number)` makes it the line or record number a BadRow names;
        `raw(i)` is row i as quarantine keeps it. `text`: the columns are CSV text to parse. `rejected`
        are the rows the reader could not split into columns (`pipelines.reading.batches.RejectedRow`); `problems`
        (row -> `RowProblem`s) those the reader found wrong already (a feature list in the wrong place).
        """
        names = [c.name for c in self.columns]
        nonfinite = self.config.nonfinite
        tokens = self.tokens
        parsed = {}
        shaped = [c.name for c in self.columns if c.shape is not None and c.name in batch.schema.names]
        if shaped and not text:
            # a fixed shape may come nested ([[1, 2], [3, 4]]: JSON, Parquet lists of lists): nested as the shape
            # is (the values' total alone would take [[1, 2, 3], [4]] for [2, 2]), then its values row-major
            shapes = {c.name: c.shape for c in self.columns}
            problems = dict(problems or {})
            for name in shaped:
                for row, detail in nesting_problems(batch.column(name), shapes[name]).items():
                    problems[row] = [*problems.get(row, []), RowProblem("value_count", name, detail)]
            batch = pa.RecordBatch.from_arrays(
                [flat_values(column) if name in shaped else column
                 for name, column in zip(batch.schema.names, batch.columns)], batch.schema.names)
        declared_text = {name for name, kind in self.config.declared_kinds().items() if kind == "bytes"}
        if not text and declared_text & set(batch.schema.names):
            # a column `input.types` says is text takes a typed number as its text (a JSON 501 is "501")
            batch = pa.RecordBatch.from_arrays(
                [numbers_as_text(column) if name in declared_text else column
                 for name, column in zip(batch.schema.names, batch.columns)], batch.schema.names)
        if not text:
            # NaN, empty text and NA tokens are no values: what is judged and what is kept must both see them missing
            batch = pa.RecordBatch.from_arrays(
                [missing_as_null(column, nonfinite, tokens.get(name, frozenset()))
                 for name, column in zip(batch.schema.names, batch.columns)], batch.schema.names)
        judged = batch
        if text:
            parsed = {c.name: parse_text(batch.column(c.name), c.kind, nonfinite, tokens.get(c.name, frozenset()))
                      for c in self.columns if not c.is_list}
            if not any(p.invalid.any() or p.unrepresentable.any() for p in parsed.values()):
                # Parsed values get the same verdicts as their text, which would be parsed again;
                # only text that does not parse needs check_batch to see it and say why.
                judged = pa.RecordBatch.from_arrays(
                    [parsed[name].values if name in parsed else batch.column(name) for name in names], names
                )
        sequences = [c.name for c in self.columns if c.sequence and c.name in judged.schema.names]
        if sequences:
            # types and domains are judged on each row's values, whatever step holds them
            judged = pa.RecordBatch.from_arrays(
                [values_per_row(judged.column(name)) if name in sequences else judged.column(name)
                 for name in judged.schema.names], judged.schema.names)
        found = check_batch(judged, self.schema, self._optional, nonfinite, tokens)
        kinds = {c.name: c.kind for c in self.columns}
        for name, check in self.value_checks.items():  # what a transform's own parser refuses (raw_check)
            # parsed text where the column is text: a missing value is null there, whatever its batch-mates hold
            # (`judged` is the raw text when any row of the batch does not parse)
            values = parsed[name].values if name in parsed else _column(judged, name)
            typed = _as_kind(_one_value(values), kinds[name])  # null where check_batch objects
            for row, detail in check(typed).items():
                found.setdefault(row, []).append(RowProblem("out_of_domain", name, detail))
        for row, row_problems in (problems or {}).items():
            found.setdefault(row, [])[:0] = row_problems
        problems = found
        unlabeled = self._unlabeled_rows(batch, parsed)
        for row in unlabeled:
            problems[row] = []  # left out, not bad: whatever else the row holds, it is never written
        bad = [
            BadRow(source, line(numbers[row]), "; ".join(str(p) for p in row_problems), raw(row))
            for row, row_problems in problems.items() if row_problems
        ]
        render = raw_rejected or (lambda data: data.decode("utf-8", errors="backslashreplace"))
        bad += [BadRow(source, line(row.number), str(row.problem), render(row.raw)) for row in rejected]
        bad.sort(key=lambda row: row.line)
        keep = None
        if problems:
            keep = np.ones(batch.num_rows, dtype=bool)
            keep[list(problems)] = False
            batch = batch.filter(pa.array(keep))
        values = []
        for c in self.columns:
            if c.sequence:
                values.append(as_sequence_kind(_column(batch, c.name), c.kind))
            elif c.is_list:
                values.append(as_list_kind(_column(batch, c.name), c.kind))
            elif text:
                value = parsed[c.name].values
                values.append((value if keep is None else value.filter(pa.array(keep))).cast(ARROW_TYPES[c.kind]))
            else:
                values.append(_as_kind(_one_value(_column(batch, c.name)), c.kind))
        table = pa.Table.from_arrays(values, names)
        return Chunk(table, self._split_keys(table, batch), bad, len(unlabeled))

    def _unlabeled_rows(self, batch: pa.RecordBatch, parsed: dict) -> list[int]:
        """The rows whose label is missing, when such rows are left out (label.missing: drop); else none."""
        label = self._drop_unlabeled
        if label is None:
            return []
        if label in parsed:  # CSV text, parsed with the NA tokens
            missing = parsed[label].missing
        else:  # typed values, missing ones already null (missing_as_null)
            missing = _one_value(_column(batch, label)).is_null().to_numpy(zero_copy_only=False)
        return np.flatnonzero(missing).tolist()

    def _split_keys(self, table: pa.Table, batch: pa.RecordBatch) -> np.ndarray:
        """A 64-bit key per row (`split_rule.row_keys`), from its typed values in the split key column or in all raw
        columns; zeros where the reader needs no keys (one split)."""
        names = [self.split_key] if self.split_key else [c.name for c in self.columns]
        columns = []
        for name in names:
            if name in table.column_names:
                columns.append(table.column(name).combine_chunks())
            elif name in batch.schema.names:
                columns.append(_one_value(batch.column(name)))
            else:
                raise InputError(f"output.split_key {name!r} is not a column of the input")
        if not self.keyed:
            return np.zeros(table.num_rows, dtype=np.uint64)
        return row_keys(columns, table.num_rows)


def regrouped(chunks: Iterator[Chunk], rows: int) -> Iterator[Chunk]:
    """`chunks` as chunks of exactly `rows` good rows each, in order (the last one fewer); a chunk's bad and
    unlabeled rows go with the chunk its good rows start in."""
    tables, keys, bad, unlabeled, held = [], [], [], 0, 0
    for chunk in chunks:
        tables.append(chunk.table)
        keys.append(np.asarray(chunk.keys, np.uint64))
        bad += chunk.bad
        unlabeled += chunk.unlabeled
        held += chunk.table.num_rows
        while held >= rows:
            table, key = pa.concat_tables(tables), np.concatenate(keys)
            yield Chunk(table.slice(0, rows), key[:rows], bad, unlabeled)
            tables, keys, bad, unlabeled, held = [table.slice(rows)], [key[rows:]], [], 0, held - rows
    if tables and (held or bad or unlabeled):
        yield Chunk(pa.concat_tables(tables), np.concatenate(keys), bad, unlabeled)


def _column(batch: pa.RecordBatch, name: str) -> pa.Array:
    """A column of `batch`, or all nulls where the input lacks it (TFRecord features absent from every record)."""
    if name in batch.schema.names:
        column = batch.column(name)
        return column.dictionary_decode() if pa.types.is_dictionary(column.type) else column
    return pa.nulls(batch.num_rows)


def _one_value(column: pa.Array) -> pa.Array:
    """A list column whose rows hold at most one value -> a flat column, null where a row holds none."""
    if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
        return column
    present = pc.fill_null(pc.list_value_length(column), 0).to_numpy(zero_copy_only=False) > 0
    first = column.offsets.to_numpy()[:-1]
    return column.values.take(pa.array(np.where(present, first, 0), mask=~present))


def numbers_as_text(column: pa.Array) -> pa.Array:
    """A column of numbers or booleans (or lists of them) as text, each as Python writes it, a boolean as 1 or 0
    (docs/values.md), as a JSON Lines block mixing numbers and text holds them; any other column as it is."""
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        values = numbers_as_text(column.values)
        return column if values is column.values else type(column).from_arrays(column.offsets, values,
                                                                                 mask=column.is_null())
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
            or pa.types.is_boolean(column.type)):
        return column
    return pa.array([None if value is None else repr(as_int(value)) for value in column.to_pylist()], pa.string())


def _as_kind(values: pa.Array, kind: str) -> pa.Array:
    """Values check_batch accepted -> the Arrow type of the column's kind (text is parsed as it parsed it)."""
    target = ARROW_TYPES[kind]
    if pa.types.is_null(values.type):
        return pa.nulls(len(values), target)
    textual = pa.types.is_string(values.type) or pa.types.is_large_string(values.type)
    if textual or pa.types.is_binary(values.type) or pa.types.is_large_binary(values.type):
        if kind == "bytes":
            return values.cast(pa.binary())
        return parse_text(values.cast(pa.string()), kind).values.cast(target)
    return values.cast(target)


def as_list_kind(column: pa.Array, kind: str) -> pa.Array:
    """A list column (single values and absent columns too) -> list<kind>, empty where a row has no value."""
    if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
        column = to_list_array(column)
    lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy(zero_copy_only=False)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), _as_kind(pc.list_flatten(column), kind))


def flat_values(column: pa.Array) -> pa.Array:
    """A column of a fixed shape -> list<T>: each row's values in row-major order, however nested (a column of
    single values: a list of one, or none for a null, so that row_checks counts them against the shape)."""
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
        return to_list_array(column)
    while pa.types.is_list(column.type.value_type) or pa.types.is_large_list(column.type.value_type):
        column = values_per_row(column)
    return column


def as_sequence_kind(column: pa.Array, kind: str) -> pa.Array:
    """A feature-list column (or an absent one: nulls) -> list<list<kind>>; absent lists and steps are empty."""
    if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
        column = pa.array([[]] * len(column), pa.list_(pa.list_(pa.null())))
    lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy(zero_copy_only=False)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), as_list_kind(pc.list_flatten(column), kind))
