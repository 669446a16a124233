"""Which rows of a batch break a tf.metadata Schema, and why: the one place that decides a row is bad.

`skewless schema validate` counts these problems; `skewless run` sends the rows that have any to
quarantine with `str(problem)` as the reason, so both agree on what a bad row is.

Columns may arrive as text (CSV fields: Arrow string, parsed here), as typed scalars (Parquet) or as
lists (tf.train.Example features decoded by tfx_bsl, Parquet list columns). Text follows one
grammar everywhere (`parse_text`): surrounding whitespace is ignored around numbers, an empty
field is a missing value, an int is ``[+-]digits`` within int64, a float is anything Python's
`float()` reads except ``_`` separators, and in both ``true``/``false`` (any case) are 1/0, as a
typed boolean is (`skewless.boolean_values`).

Floats follow one rule in every format (and in the graph, for serving): NaN is a missing value;
±inf and values beyond float32 (ints beyond int64) are "unrepresentable": a problem of their own
(``nonfinite="quarantine"``, the default) or missing values too (``nonfinite="missing"``).

Text follows one rule in every format (CSV fields, Parquet strings, tf.train.Example bytes, generator
strings, and in the graph, `skewless/value_rules.py`): an empty value is missing, and so is a value that is
one of the column's NA tokens (``input.na_values``) once surrounding ASCII whitespace is stripped; inside a
list such an item is left out. docs/values.md states these rules for users.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Collection, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from tensorflow_metadata.proto.v0 import schema_pb2

from skewless.boolean_values import PATTERN as BOOLEAN_WORDS
from skewless.boolean_values import WORDS
from skewless.errors import SchemaError
from skewless.schemas.schema_io import TYPE_NAMES

# Problem kinds and how a report names them.
PROBLEM_KINDS = {
    "wrong_field_count": "wrong number of CSV fields",
    "bad_utf8": "line is not UTF-8 text",
    "malformed_csv": "malformed CSV line",
    "malformed_json": "malformed JSON line",
    "undecodable": "record is not a tf.train.Example",
    "missing_value": "required value missing",
    "unrepresentable": "value not finite or beyond its type",
    "wrong_type": "value of the wrong type",
    "out_of_domain": "value outside the domain",
    "value_count": "wrong number of values",
    "misplaced": "context feature and feature list swapped",
}

_INT_TEXT = rf"^\s*([+-]?[0-9]+|{BOOLEAN_WORDS})\s*$"
_FLOAT_TEXT = rf"^\s*([+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)(e[+-]?[0-9]+)?|inf|infinity|nan)|{BOOLEAN_WORDS})\s*$"
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_A_KIND = {"int": "an int", "float": "a float", "bytes": "bytes"}
# Long values are cut in messages so a reason stays one readable line.
_SHOWN_CHARS = 40
# How much longer than the longest NA token a value may be and still be one (whitespace around it)
_TOKEN_PADDING = 64


@dataclass(frozen=True)
class RowProblem:
    """Why one row cannot be used. `feature` is None for problems of the whole row (CSV fields, UTF-8)."""

    kind: str
    feature: str | None
    detail: str

    def __str__(self) -> str:
        return f"{self.feature}: {self.detail}" if self.feature else self.detail


@dataclass(frozen=True)
class ParsedText:
    """Text values parsed as one feature type: `values` is null where `missing`, `invalid` or `unrepresentable`
    (±inf, beyond float32 or int64)."""

    values: pa.Array
    missing: np.ndarray
    invalid: np.ndarray
    unrepresentable: np.ndarray


def parse_text(text: pa.Array, kind: str, nonfinite: str = "quarantine", tokens: frozenset[bytes] = frozenset()
               ) -> ParsedText:
    """Parses a string array as "int" (int64), "float" (float64) or "bytes" (binary, unchanged).

    A null or empty value (only whitespace, for numbers), one of the NA `tokens` (`missing_text`) and a
    float NaN are missing; a value the grammar rejects is invalid; ±inf and numbers beyond float32 / int64
    are unrepresentable, or missing when `nonfinite` is "missing". All come back null in `values`.
    """
    text = _as_string(text)
    if kind == "bytes":
        missing = missing_text(text, tokens)
        values = pc.if_else(pa.array(missing), pa.scalar(None, pa.binary()), text.cast(pa.binary()))
        nothing = np.zeros(len(text), dtype=bool)
        return ParsedText(values, missing, nothing, nothing)
    trimmed = pc.utf8_trim_whitespace(text)
    missing = _to_numpy(pc.or_kleene(pc.is_null(trimmed), pc.equal(trimmed, ""))) | missing_text(text, tokens)
    # plain digits are numbers of either kind: only the other values go through the grammar's regex (most
    # numeric columns hold none; the regex over every value was ~40% of parsing a column)
    matches = _to_numpy(pc.fill_null(pc.ascii_is_decimal(trimmed), False)) & ~missing
    others = np.flatnonzero(~matches & ~missing)
    if len(others):
        pattern = _INT_TEXT if kind == "int" else _FLOAT_TEXT
        matches[others] = _to_numpy(pc.fill_null(pc.match_substring_regex(trimmed.take(pa.array(others)), pattern,
                                                                          ignore_case=True), False))
    target = pa.int64() if kind == "int" else pa.float64()
    good = trimmed.filter(pa.array(matches))
    if pc.any(pc.utf8_is_alpha(good)).as_py():  # a word is all letters: most columns hold none, and skip the regexes
        for word, number in WORDS.items():
            good = pc.replace_substring_regex(good, f"(?i)^{word}$", str(number))
    if kind == "int":
        # Arrow's integer cast rejects a leading '+' but reads '0x..' hex; the grammar settles both.
        good = pc.utf8_ltrim(good, "+")
    beyond = np.zeros(len(text), dtype=bool)
    try:
        parsed = good.cast(target).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        # Only ints beyond int64 get here (Arrow refuses them); find them one by one.
        numbers = [int(value) for value in good.to_pylist()]
        fits = np.array([_INT64_MIN <= number <= _INT64_MAX for number in numbers], dtype=bool)
        positions = np.flatnonzero(matches)
        beyond[positions[~fits]] = True
        matches[positions[~fits]] = False
        parsed = np.array([number for number, ok in zip(numbers, fits) if ok], dtype=np.int64)
    values = np.zeros(len(text), dtype=parsed.dtype if len(parsed) else target.to_pandas_dtype())
    values[matches] = parsed
    if kind == "float":
        nan = matches & np.isnan(values)
        beyond = matches & ~nan & ~_fits_float32(values)
        missing |= nan
        matches &= ~nan & ~beyond
    if nonfinite == "missing":
        missing |= beyond
        beyond = np.zeros(len(text), dtype=bool)
    invalid = ~matches & ~missing & ~beyond
    return ParsedText(pa.array(values, type=target, mask=~matches), missing, invalid, beyond)


def _fits_float32(numbers: np.ndarray) -> np.ndarray:
    """Finite numbers a float32 holds (NaN counts as fitting: it is a missing value, judged apart)."""
    with np.errstate(invalid="ignore"):
        return ~(np.abs(numbers) > _FLOAT32_MAX)


def missing_text(values: pa.Array, tokens: frozenset[bytes] = frozenset()) -> np.ndarray:
    """Which values of a string or binary array are missing: null, empty, or one of the NA `tokens` once
    surrounding ASCII whitespace is stripped (as `tf.strings.strip` strips it in the graph)."""
    values = values.cast(pa.binary())
    lengths = _to_numpy(pc.fill_null(pc.binary_length(values), 0))
    missing = _to_numpy(values.is_null()) | (lengths == 0)
    if not tokens:
        return missing
    # only values a few bytes longer than the longest token can be one: long text and image bytes are not
    # looked at, and the distinct short values are compared once each
    short = np.flatnonzero(~missing & (lengths <= max(map(len, tokens)) + _TOKEN_PADDING))
    if len(short):
        encoded = pc.dictionary_encode(values.take(pa.array(short)))
        is_token = np.array([value.strip() in tokens for value in encoded.dictionary.to_pylist()], dtype=bool)
        missing[short] = is_token[_to_numpy(encoded.indices)]
    return missing


def missing_as_null(column: pa.Array, nonfinite: str = "quarantine", tokens: frozenset[bytes] = frozenset()
                    ) -> pa.Array:
    """A typed column with its missing values taken out: null in a column of single values, left out of
    the list in a list column (and of each step of a feature list).

    Missing: a float NaN (with `nonfinite` "missing" also ±inf and values beyond float32), and text that
    `missing_text` calls missing (empty, or an NA token). Other values come back unchanged.
    """
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        if column.offset:
            column = pa.concat_arrays([column])  # offsets from 0, so `values` lines up with them
        values = column.values
        kept = missing_as_null(values, nonfinite, tokens)
        nested = pa.types.is_list(values.type) or pa.types.is_large_list(values.type)
        if kept is values and (nested or values.null_count == 0):
            return column
        if nested:
            return type(column).from_arrays(column.offsets, kept, mask=column.is_null())
        # a null item is missing too (docs/values.md): left out like NaN, so a fixed shape counts it absent
        drop = _to_numpy(kept.is_null())
        offsets = column.offsets.to_numpy()
        kept_before = np.concatenate([[0], np.cumsum(~drop)])
        new_offsets = pa.array(kept_before[offsets].astype(offsets.dtype))
        return type(column).from_arrays(new_offsets, values.filter(pa.array(~drop)), mask=column.is_null())
    if pa.types.is_floating(column.type):
        numbers = _to_numpy(column.cast(pa.float64()))
        drop = np.isnan(numbers) & _to_numpy(column.is_valid())
        if nonfinite == "missing":
            drop |= ~_fits_float32(numbers)
    elif _is_text(column.type) or pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
        drop = missing_text(column, tokens) & _to_numpy(column.is_valid())
    else:
        return column
    if not drop.any():
        return column
    return pc.if_else(pa.array(drop), pa.scalar(None, column.type), column)


def check_batch(
    batch: pa.RecordBatch,
    schema: schema_pb2.Schema,
    optional: Collection[str] = (),
    nonfinite: str = "quarantine",
    tokens: Mapping[str, frozenset[bytes]] | None = None,
) -> dict[int, list[RowProblem]]:
    """The problems of each bad row of `batch`, keyed by row index (rows without problems are absent).

    Args:
      batch: raw rows; a column per feature, named like it. Columns the schema does not declare are
        ignored here (`unexpected_columns` reports them). A declared feature without a column is
        missing in every row.
      schema: the tf.metadata Schema the rows must follow.
      optional: features that may be missing although the schema requires them (those the job
        config gives a `default`). Features whose `presence.min_fraction` is below 1 are optional anyway.
      nonfinite: "quarantine" (±inf and values beyond their type are problems) or "missing" (they are
        missing values, as NaN always is).
      tokens: column -> its NA tokens (`missing_text`), text read as missing values besides the empty one.

    A row is bad when a required feature is missing, a value has the wrong type, lies outside the
    feature's domain (string_domain, int_domain / float_domain min and max, image_domain: the bytes
    start like an image format tf.io.decode_image reads), or a list has a number
    of values outside `value_count` (or its `shape`).
    """
    problems: dict[int, list[RowProblem]] = {}
    names = set(batch.schema.names)
    for feature in schema.feature:
        required = feature.name not in optional and feature.presence.min_fraction >= 1.0
        if feature.name not in names:
            if required:
                problem = RowProblem("missing_value", feature.name, "required value is missing (no such column)")
                for row in range(batch.num_rows):
                    problems.setdefault(row, []).append(problem)
            continue
        column_tokens = (tokens or {}).get(feature.name, frozenset())
        column = missing_as_null(batch.column(feature.name), nonfinite, column_tokens)
        for row, problem in _check_column(column, feature, schema, required, nonfinite, column_tokens):
            problems.setdefault(row, []).append(problem)
    return problems


def unexpected_columns(batch: pa.RecordBatch, schema: schema_pb2.Schema) -> dict[str, np.ndarray]:
    """Columns of `batch` the schema does not declare -> the indices of the rows that hold a value there."""
    declared = {feature.name for feature in schema.feature}
    found = {}
    for name in batch.schema.names:
        if name not in declared:
            column = batch.column(name)
            rows = np.flatnonzero(_to_numpy(column.is_valid()))
            if len(rows):
                found[name] = rows
    return found


def string_domain_values(feature: schema_pb2.Feature, schema: schema_pb2.Schema) -> list[str] | None:
    """The values a BYTES feature may take (its own string_domain or the schema-level one it names), or None."""
    if feature.HasField("string_domain"):
        return list(feature.string_domain.value)
    if feature.HasField("domain"):
        for domain in schema.string_domain:
            if domain.name == feature.domain:
                return list(domain.value)
        raise SchemaError(f"feature {feature.name!r} names domain {feature.domain!r}, which the schema does not define")
    return None


def _check_column(column: pa.Array, feature, schema, required: bool, nonfinite: str, tokens: frozenset[bytes]):
    """Yields (row, problem) for one feature's column (missing values already null, `missing_as_null`; text of
    a numeric feature is parsed here, where its NA `tokens` are missing too)."""
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        lengths = _to_numpy(pc.fill_null(pc.list_value_length(column), 0))
        yield from _missing(lengths == 0, feature, required)
        yield from _check_counts(lengths, feature)
        rows = _to_numpy(pc.list_parent_indices(column))
        yield from _check_values(pc.list_flatten(column), rows, feature, schema)
    elif _is_text(column.type):
        parsed = parse_text(column, TYPE_NAMES[feature.type], nonfinite, tokens)
        yield from _missing(parsed.missing, feature, required)
        for row in np.flatnonzero(parsed.unrepresentable):
            yield int(row), _unrepresentable(column[int(row)].as_py(), TYPE_NAMES[feature.type], feature.name)
        yield from _report(column, parsed.values, parsed.invalid, np.arange(len(column)), feature, schema)
    else:
        absent = _to_numpy(column.is_null())
        yield from _missing(absent, feature, required)
        yield from _check_values(column.filter(pa.array(~absent)), np.flatnonzero(~absent), feature, schema)


def _missing(absent: np.ndarray, feature, required: bool):
    if required:
        for row in np.flatnonzero(absent):
            yield int(row), RowProblem("missing_value", feature.name, "required value is missing")


def _check_counts(lengths: np.ndarray, feature):
    if feature.HasField("shape"):  # a fixed shape: exactly as many values as its dimensions hold
        dims = [dim.size for dim in feature.shape.dim]
        size = int(np.prod(dims))
        # missing values (NaN, null, empty, NA tokens) were left out of the row's list: they count as absent
        for row in np.flatnonzero((lengths > 0) & (lengths != size)):
            yield int(row), RowProblem("value_count", feature.name, f"has {lengths[row]} values, expected "
                                       f"{size}..{size} (shape {dims}; a missing value is not counted)")
        return
    if feature.HasField("value_count"):
        low, high = feature.value_count.min, feature.value_count.max
    else:
        return
    wrong = (lengths > 0) & ((lengths < low) | ((high > 0) & (lengths > high)))
    expected = f"{low}..{high}" if high > 0 else f"at least {low}"
    for row in np.flatnonzero(wrong):
        yield int(row), RowProblem("value_count", feature.name, f"has {lengths[row]} values, expected {expected}")


def _check_values(values: pa.Array, rows: np.ndarray, feature, schema):
    """Yields (row, problem) for present values; `rows[i]` is the row of `values[i]`."""
    if len(values) == 0:
        return
    kind = TYPE_NAMES[feature.type]
    typed, wrong, beyond = _typed(values, kind)
    reported: set[int] = set()
    for index in np.flatnonzero(beyond):
        if rows[index] not in reported:
            reported.add(int(rows[index]))
            yield int(rows[index]), _unrepresentable(values[int(index)].as_py(), kind, feature.name)
    yield from _report(values, typed, wrong, rows, feature, schema, reported)


def _unrepresentable(value, kind: str, feature: str) -> RowProblem:
    """The problem of a number its feature's type cannot hold: ±inf or too large."""
    if kind == "int":
        return RowProblem("unrepresentable", feature, f"{_show(value)} is beyond int64")
    infinite = "inf" in value.lower() if isinstance(value, str) else not math.isfinite(value)
    detail = "is not finite" if infinite else "is beyond float32"
    return RowProblem("unrepresentable", feature, f"{_show(value)} {detail}")


def _report(values: pa.Array, typed: pa.Array, wrong: np.ndarray, rows: np.ndarray, feature, schema,
            reported: set[int] | None = None):
    """Yields the wrong-type and out-of-domain problems, at most one per row (the first value's); rows in
    `reported` have their problem already."""
    kind = TYPE_NAMES[feature.type]
    reported = set() if reported is None else reported
    if wrong.any():
        shown = values.filter(pa.array(wrong)).to_pylist()
        for row, value in zip(rows[wrong], shown):
            if row not in reported:
                reported.add(row)
                yield int(row), RowProblem("wrong_type", feature.name, f"{_show(value)} is not {_A_KIND[kind]}")
    outside = _outside_domain(typed, feature, schema) & ~wrong
    if outside.any():
        shown = typed.filter(pa.array(outside)).to_pylist()
        for row, value in zip(rows[outside], shown):
            if row not in reported:
                reported.add(row)
                yield int(row), RowProblem("out_of_domain", feature.name, _outside_detail(value, feature, schema))


def _typed(values: pa.Array, kind: str) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """Values as int64 / float64 / binary, which of them cannot be that type, and which are numbers the
    type cannot hold (±inf, beyond float32 or int64: text that parses as one, e.g. a CSV list's items, or
    a typed float; NaN was taken out before, `missing_as_null`)."""
    arrow_type = values.type
    nothing = np.zeros(len(values), dtype=bool)
    if _is_text(arrow_type):
        parsed = parse_text(values, kind)
        return parsed.values, parsed.invalid, parsed.unrepresentable
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        if kind == "bytes":
            return values.cast(pa.binary()), nothing, nothing
        text, undecodable = _decode(values)
        parsed = parse_text(text, kind)
        return parsed.values, parsed.invalid | undecodable, nothing
    if pa.types.is_integer(arrow_type) or pa.types.is_boolean(arrow_type):
        if kind == "bytes":
            return pa.nulls(len(values), pa.binary()), ~nothing, nothing
        if kind == "int" and pa.types.is_uint64(arrow_type):  # a database's UBIGINT: past int64 is unrepresentable
            beyond = _to_numpy(pc.fill_null(pc.greater(values, pa.scalar(_INT64_MAX, pa.uint64())), False))
            return pc.if_else(pa.array(beyond), None, values).cast(pa.int64()), nothing, beyond
        return values.cast(pa.int64() if kind == "int" else pa.float64()), nothing, nothing
    if pa.types.is_floating(arrow_type):
        if kind == "bytes":
            return pa.nulls(len(values), pa.binary()), ~nothing, nothing
        floats = values.cast(pa.float64())
        numbers = _to_numpy(floats)
        if kind == "float":
            beyond = _to_numpy(floats.is_valid()) & ~(np.isfinite(numbers) & _fits_float32(numbers))
            return floats, nothing, beyond
        whole = np.isfinite(numbers) & (numbers == np.round(numbers)) & (np.abs(numbers) < 2.0**63)
        return pa.array(np.where(whole, numbers, 0).astype(np.int64), mask=~whole), ~whole, nothing
    # Nested structs, dates and the like have no tf.Example form.
    return pa.nulls(len(values), pa.binary()), ~nothing, nothing


# How the formats tf.io.decode_image reads begin: JPEG, PNG, GIF, BMP, JPEG XL (codestream, container).
_IMAGE_SIGNATURES = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"BM", b"\xff\x0a",
                     b"\x00\x00\x00\x0cJXL \r\n\x87\n")


def _not_images(values: pa.Array) -> np.ndarray:
    """Values no image format's signature starts (tf.io.decode_image refuses them); WebP is RIFF....WEBP."""

    def starts(signature: bytes, offset: int = 0) -> np.ndarray:
        head = pc.binary_slice(values, offset, offset + len(signature))
        return _to_numpy(pc.fill_null(pc.equal(head, pa.scalar(signature, pa.binary())), False))

    known = starts(b"RIFF") & starts(b"WEBP", 8)
    for signature in _IMAGE_SIGNATURES:
        known |= starts(signature)
    return ~known


def _outside_domain(typed: pa.Array, feature, schema) -> np.ndarray:
    outside = np.zeros(len(typed), dtype=bool)
    if feature.type == schema_pb2.BYTES and feature.HasField("image_domain"):
        outside = _not_images(typed)
    elif feature.type == schema_pb2.BYTES:
        allowed = string_domain_values(feature, schema)
        if allowed is not None:
            inside = pc.is_in(typed, value_set=pa.array([value.encode() for value in allowed], pa.binary()))
            outside = ~_to_numpy(inside)
    else:
        domain = feature.int_domain if feature.type == schema_pb2.INT else feature.float_domain
        numbers = typed.to_numpy(zero_copy_only=False)
        with np.errstate(invalid="ignore"):
            if domain.HasField("min"):
                outside |= numbers < domain.min
            if domain.HasField("max"):
                outside |= numbers > domain.max
    return outside & _to_numpy(typed.is_valid())


def _outside_detail(value, feature, schema) -> str:
    if feature.HasField("image_domain"):
        return f"{_show(value)} is not an encoded image (JPEG, PNG, GIF, BMP, WebP, JPEG XL)"
    if feature.type == schema_pb2.BYTES:
        allowed = string_domain_values(feature, schema)
        listed = ", ".join(allowed[:5]) + (", ..." if len(allowed) > 5 else "")
        return f"{_show(value)} is not in the domain ({listed})"
    domain = feature.int_domain if feature.type == schema_pb2.INT else feature.float_domain
    if domain.HasField("min") and value < domain.min:
        return f"{value} is below the domain minimum {domain.min}"
    return f"{value} is above the domain maximum {domain.max}"


def _decode(values: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """Binary -> string; values that are not UTF-8 become null and are flagged."""
    try:
        return values.cast(pa.string()), np.zeros(len(values), dtype=bool)
    except pa.ArrowInvalid:
        texts, bad = [], []
        for value in values.to_pylist():
            try:
                texts.append(None if value is None else value.decode("utf-8"))
                bad.append(False)
            except UnicodeDecodeError:
                texts.append(None)
                bad.append(True)
        return pa.array(texts, pa.string()), np.array(bad, dtype=bool)


def _is_text(arrow_type: pa.DataType) -> bool:
    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)


def _as_string(text: pa.Array) -> pa.Array:
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    return text if pa.types.is_string(text.type) else text.cast(pa.string())


def _to_numpy(array) -> np.ndarray:
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return np.asarray(array.to_numpy(zero_copy_only=False))


def _show(value) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    text = repr(value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."
