"""Inferring a tf.metadata Schema from data, one batch at a time.

Per column the inferred feature has:
- type: for CSV text, the kind most values parse as (`majority_kind`, by `row_checks.parse_text`'s
  grammar): a number column with a few stray words stays numeric, and the schema then sends those
  rows to quarantine; Parquet and TFRecord values keep the type they are stored with.
- presence: ``min_fraction: 1`` when no row lacks a value (the feature is required), else only
  ``min_count: 1`` (optional).
- shape, as TFDV infers it: ``dim { size: N }`` for a required column with N values in every row (1 for
  a scalar column); else value_count: ``min: 1 max: 1`` for optional scalar columns; for list columns
  (TFRecord features, Parquet lists) the common length when all non-empty lists share one, else ``min:``
  the shortest.
- a string domain, in TFDV's layout (a schema-level ``string_domain`` named after the feature, which the
  feature names in ``domain:``): for BYTES features with at most `max_domain_size` distinct UTF-8 values,
  each seen twice on average, so that a column of ids or free text in a small file is not mistaken
  for a category.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import pyarrow as pa
import pyarrow.compute as pc
from tensorflow_metadata.proto.v0 import schema_pb2

from skewless.config import InputConfig
from skewless.errors import InputError
from skewless.input_formats import INPUT_FORMATS
from skewless.schemas.row_checks import parse_text

MAX_DOMAIN_SIZE = 100
_KIND_ORDER = ("int", "float", "bytes")  # each kind's values can be held by the kinds after it
_FEATURE_TYPES = {"int": schema_pb2.INT, "float": schema_pb2.FLOAT, "bytes": schema_pb2.BYTES}


@dataclass
class InferredSchema:
    schema: schema_pb2.Schema
    rows: int  # rows the schema was inferred from
    rejected: int  # rows that could not be split into columns (wrong field count, bad UTF-8, ...)


@dataclass
class _Column:
    """What the batches seen so far say about one column."""

    kinds: set[str] = field(default_factory=set)
    # Rows with a value, counted as each kind would count them: text "  " is a missing number but
    # present bytes, and the kind is known only at the end.
    present: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_KIND_ORDER, 0))
    is_list: bool = False
    shortest: int | None = None
    longest: int | None = None
    values: set[str] | None = field(default_factory=set)  # None once past the domain size or not UTF-8
    # CSV text: present values, and how many of them parse as an int and as a float
    text: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_KIND_ORDER, 0))

    def add_present(self, count: int) -> None:
        for kind in _KIND_ORDER:
            self.present[kind] += count


def infer_schema(config: InputConfig, batches: Iterable, max_domain_size: int = MAX_DOMAIN_SIZE,
                 kinds: dict[str, str] | None = None) -> InferredSchema:
    """The schema that describes every row of `batches`, the inputs of `config` as the reading layer reads them.

    `batches` are `skewless.pipelines.reading.SourceBatch`es (`read_batches(config)`): schemas judge rows,
    the caller reads them, so this package needs no file system and no Beam. `kinds` (column -> int | float |
    bytes): the types the job infers (`pipelines.plan.raw_types.infer_types`), which the schema then gives, so
    that it says what a job without it reads; a column it lacks takes the kind its values here say.
    """
    columns: dict[str, _Column] = {}
    rows = rejected = 0
    text_input = INPUT_FORMATS[config.format].text
    for source in batches:
        rows += source.batch.num_rows
        rejected += len(source.rejected)
        for name, array in zip(source.batch.schema.names, source.batch.columns):
            stats = columns.setdefault(name, _Column())
            _observe(stats, array, text_input or name in source.text_columns, max_domain_size)
    if rows == 0:
        reason = f" ({rejected} rows do not split into the columns)" if rejected else ""
        raise InputError(f"{', '.join(config.paths)}: no rows to infer a schema from{reason}")
    schema = schema_pb2.Schema()
    for name, stats in columns.items():
        _add_feature(schema, name, stats, rows, max_domain_size, (kinds or {}).get(name))
    return InferredSchema(schema, rows, rejected)


def _observe(stats: _Column, array: pa.Array, text_input: bool, max_domain_size: int) -> None:
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if pa.types.is_list(array.type) or pa.types.is_large_list(array.type):
        stats.is_list = True
        lengths = pc.fill_null(pc.list_value_length(array), 0).to_numpy(zero_copy_only=False)
        filled = lengths[lengths > 0]
        stats.add_present(len(filled))
        if len(filled):
            low, high = int(filled.min()), int(filled.max())
            stats.shortest = low if stats.shortest is None else min(stats.shortest, low)
            stats.longest = high if stats.longest is None else max(stats.longest, high)
        _observe_values(stats, pc.list_flatten(array), max_domain_size)
        return
    if text_input and (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        _observe_text(stats, array, max_domain_size)
        return
    stats.add_present(len(array) - array.null_count)
    _observe_values(stats, array.drop_null(), max_domain_size)


def _observe_text(stats: _Column, text: pa.Array, max_domain_size: int) -> None:
    """CSV fields: how many rows each kind sees a value in, and how many values parse as each kind."""
    as_bytes = parse_text(text, "bytes")
    stats.present["bytes"] += int((~as_bytes.missing).sum())
    for kind, count in text_counts(text).items():
        stats.text[kind] += count
    for kind in ("int", "float"):
        stats.present[kind] += int((~parse_text(text, kind).missing).sum())
    if (~as_bytes.missing).any():
        stats.kinds.add("text")
        _collect_domain(stats, text.filter(pa.array(~as_bytes.missing)), max_domain_size)


def text_counts(text: pa.Array, tokens: frozenset[bytes] = frozenset()) -> dict[str, int]:
    """Of the present values of a text column (NA `tokens` are missing): how many there are ("bytes"), how
    many parse as an int and as a float (a number beyond int64 or float32 counts: it is a number, quarantined
    as too large)."""
    counts = {"bytes": int((~parse_text(text, "bytes", tokens=tokens).missing).sum())}
    for kind in ("int", "float"):
        parsed = parse_text(text, kind, tokens=tokens)
        counts[kind] = int((~parsed.missing & ~parsed.invalid).sum())
    return counts


def majority_kind(counts: dict[str, int]) -> str:
    """The type of a text column from `text_counts`: numeric when more than half its values are numbers
    (int when every one of them is an int), else bytes. One stray word does not decide the column."""
    if counts["float"] * 2 > counts["bytes"]:
        return "int" if counts["int"] == counts["float"] else "float"
    return "bytes"


def _observe_values(stats: _Column, values: pa.Array, max_domain_size: int) -> None:
    """Typed values (Parquet, tf.Example): their Arrow type says the kind."""
    if len(values) == 0 or pa.types.is_null(values.type):
        return
    if pa.types.is_integer(values.type) or pa.types.is_boolean(values.type):
        stats.kinds.add("int")
    elif pa.types.is_floating(values.type):
        stats.kinds.add("float")
    else:
        stats.kinds.add("bytes")
        _collect_domain(stats, values, max_domain_size)


def _collect_domain(stats: _Column, values: pa.Array, max_domain_size: int) -> None:
    if stats.values is None:
        return
    distinct = pc.unique(values)
    if len(distinct) > max_domain_size:
        stats.values = None
        return
    if not (pa.types.is_string(distinct.type) or pa.types.is_large_string(distinct.type)):
        try:
            distinct = distinct.cast(pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # not UTF-8: no string_domain
            stats.values = None
            return
    stats.values.update(value for value in distinct.to_pylist() if value is not None)
    if len(stats.values) > max_domain_size:
        stats.values = None


def _add_feature(schema: schema_pb2.Schema, name: str, stats: _Column, rows: int, max_domain_size: int,
                 kind: str | None) -> None:
    if kind is None and "text" in stats.kinds:
        kind = majority_kind(stats.text)
    elif kind is None:
        # A column that never held a value gives no type to go by: BYTES accepts anything.
        kind = max(stats.kinds, key=_KIND_ORDER.index) if stats.kinds else "bytes"
    feature = schema.feature.add(name=name, type=_FEATURE_TYPES[kind])
    present = stats.present[kind]
    if present:
        feature.presence.min_count = 1
        if present == rows:
            feature.presence.min_fraction = 1.0
    # as TFDV: a `shape` for a feature with the same number of values in every row, else a value_count
    fixed = 1 if not stats.is_list else stats.longest if stats.shortest == stats.longest else None
    if present == rows and fixed is not None:
        feature.shape.dim.add(size=fixed)
    elif not stats.is_list:
        feature.value_count.min = 1
        feature.value_count.max = 1
    elif stats.shortest is not None:
        feature.value_count.min = stats.shortest
        if stats.shortest == stats.longest:
            feature.value_count.max = stats.longest
    values = stats.values
    if kind == "bytes" and values and len(values) <= max_domain_size and present >= 2 * len(values):
        # as TFDV: a top-level string_domain, named after the feature, that the feature names in `domain`
        schema.string_domain.add(name=name, value=sorted(values))
        feature.domain = name

