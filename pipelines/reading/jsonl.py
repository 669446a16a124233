"""JSON Lines (`input.format: jsonl`): one JSON object a line, gzip or plain; JSON lists are list columns.

Values keep their JSON types: a number is a number, a string is text (parsed where its column is numeric, as
a Parquet string is), `true`/`false` are 1/0, and null or an absent key is a missing value (docs/values.md).
A line that is not a JSON object, or that holds an object where a value belongs, goes to quarantine as
`file:LINE`, like a CSV line that does not split.

Plain files are cut at byte offsets as CSV files are (`lines.line_blocks`: a line is a row); a gzip file is
one work unit. A block of lines is read by pyarrow's JSON reader in one call. That reader stops at the first
bad line and numbers it among the rows it kept (blank lines are none), so a block it refuses is read again
line by line with Python's `json`, which names each bad line exactly and keeps the good ones.

Before either reads a block, lines nested deeper than `MAX_NESTING` are quarantined (pyarrow's reader recurses
and can crash the process on them, Python's fails the block), and a block holding bytes that are not UTF-8, an
escaped UTF-16 surrogate or an integer that may be past int64 is read line by line: pyarrow takes invalid UTF-8
into its strings and reads an integer past int64 as a float, so only Python's reader can quarantine such a value
("byte N of the line is not UTF-8", "... holds a lone UTF-16 surrogate", "... is beyond int64"). Lines longer
than `input.max_line_bytes` never reach either (`lines.line_blocks`).
"""

from __future__ import annotations

import json
import re
from functools import partial
from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.json as pa_json

from skewless.config import InputConfig
from skewless.pipelines.reading import held_rows
from skewless.pipelines.reading.columns import arrow_kind
from skewless.pipelines.reading.batches import RejectedRow, SourceBatch
from skewless.pipelines.reading.csv import line_bounds
from skewless.pipelines.reading.files import file_sizes, is_gzip
from skewless.pipelines.reading.format import InputFormat, Segment
from skewless.pipelines.reading.lines import line_blocks, rejected_long_lines, sample_lines
from skewless.pipelines.reading.nested_shape import value_nesting_problem
from skewless.schemas.infer import majority_kind, text_counts
from skewless.schemas.row_checks import RowProblem

JSONL_BLOCK_BYTES = 8 << 20
MAX_NESTING = 64  # lists and objects in a line nest at most this deep (as a config's YAML does)
# what pyarrow's reader takes without a word where Python's names the line: an escaped surrogate (a lone one is
# no character), an integer maybe past int64 (20 digits or more, or 19 from 92...: int64 ends at 9223372036854775807,
# and ids of 18-19 digits below it keep the fast path); bytes that are not UTF-8 are found apart
_NEEDS_PYTHON = re.compile(rb"\\u[dD][89a-fA-F]|\d{20}|9[2-9]\d{17}")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')  # a JSON string, its escapes included
_OPENERS = np.frombuffer(b"[{", dtype=np.uint8)


class JsonBlock:
    """Whole lines of a JSON Lines file, read: `batch` holds a row per good line (`numbers`: their indices in
    the block, 0-based), `rejected` the bad lines, `textual` the columns whose values mixed numbers and text."""

    def __init__(self, data: bytes, columns: Sequence[str] | None, rejected: Sequence[RejectedRow] = ()):
        """`rejected`: rows of the block already rejected (lines too long, left empty in `data`)."""
        self.data = data
        starts, ends = line_bounds(data)
        self._bounds = starts, ends
        lines = [data[start:end] for start, end in zip(starts, ends)]
        self.rejected: list[RejectedRow] = list(rejected)
        deep = _too_deep(data, starts, ends)
        for index in deep:
            self.rejected.append(RejectedRow(index, lines[index], RowProblem(
                "too_deep", None, f"a value nested more than {MAX_NESTING} levels deep")))
        kept = [index for index, line in enumerate(lines) if line.strip() and index not in deep]  # blank: no row
        self.textual: set[str] = set()
        # column -> {batch row: its nested JSON value} where `_read_slowly` read rows nested unlike one another
        # flat: the nesting a fixed shape's check needs (nested_shape.value_nesting_problem)
        self.nested: dict[str, dict[int, list]] = {}
        batch = None if _needs_python(data) else _read_fast([lines[i] for i in kept], columns)
        if batch is None:
            batch, kept = self._read_slowly(lines, kept, columns)
        self.rejected.sort(key=lambda row: row.number)
        self.batch = batch
        self.numbers = np.asarray(kept, dtype=np.int64)

    def raw(self, index: int) -> bytes:
        starts, ends = self._bounds
        return self.data[starts[index] : ends[index]]

    def _read_slowly(self, lines: list[bytes], indices: list[int], columns):
        """Each line with Python's json: the bad ones rejected (numbered), the rest as one batch."""
        rows, kept = [], []
        for index in indices:
            row, problem = _parse_line(lines[index], columns)
            if problem is not None:
                self.rejected.append(RejectedRow(index, lines[index], problem))
            else:
                rows.append(row)
                kept.append(index)
        names = list(columns) if columns is not None else list(dict.fromkeys(k for row in rows for k in row))
        arrays = []
        for name in names:
            values = [row.get(name) for row in rows]
            if len({_depth(value) for value in values if value is not None}) > 1:
                # lists nested unlike one another, or beside single values (pyarrow takes neither): one list of
                # values per row, row-major (a fixed shape's rows); a single value is a list of one
                self.nested[name] = {row: value for row, value in enumerate(values)
                                     if value is not None and _depth(value) > 1}
                values = [None if value is None else _flat_items(value) for value in values]
            try:
                arrays.append(pa.array(values))
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
                # numbers and text in one column (or a number beyond int64): text, parsed as the column's kind
                arrays.append(pa.array([_as_text(value) for value in values]))
                self.textual.add(name)
        return pa.RecordBatch.from_arrays(arrays, names), kept


def _too_deep(data: bytes, starts: np.ndarray, ends: np.ndarray) -> set[int]:
    """The lines whose lists and objects nest deeper than `MAX_NESTING`: only a line holding more brackets than
    that can, and only such lines are measured (strings taken out, which may hold brackets)."""
    opens = np.concatenate([[0], np.cumsum(np.isin(np.frombuffer(data, dtype=np.uint8), _OPENERS))])
    deep = set()
    for index in np.flatnonzero(opens[ends] - opens[starts] > MAX_NESTING):
        text = np.frombuffer(_STRING.sub(b'""', data[starts[index] : ends[index]]), dtype=np.uint8)
        steps = np.isin(text, _OPENERS).astype(np.int64) - np.isin(text, np.frombuffer(b"]}", dtype=np.uint8))
        if np.cumsum(steps).max(initial=0) > MAX_NESTING:
            deep.add(int(index))
    return deep


def _needs_python(data: bytes) -> bool:
    """Whether the block holds what only Python's reader quarantines (see the module's doc)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return _NEEDS_PYTHON.search(data) is not None


def _read_fast(lines: list[bytes], columns) -> pa.RecordBatch | None:
    """The lines as one batch through pyarrow's JSON reader; None when it refuses one (or a read column holds
    objects), for `_read_slowly` to find which."""
    if not lines:
        return pa.RecordBatch.from_arrays([], []) if columns is None else _empty(columns)
    data = b"\n".join(lines) + b"\n"
    try:
        table = _arrow_json(data)
        # pyarrow reads text that looks like a date as a timestamp: JSON text is text, so read those as strings
        dated = {field.name: _as_strings(field.type) for field in table.schema if _is_dated(field.type)}
        if dated:
            table = _arrow_json(data, pa.schema(list(dated.items())))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows != len(lines):
        return None  # a line pyarrow took for no row (white space inside): only line by line can tell
    names = table.column_names if columns is None else [name for name in columns if name in table.column_names]
    if any(_holds_objects(table.schema.field(name).type) for name in names):
        return None
    arrays = [table.column(name).combine_chunks() for name in names]
    return pa.RecordBatch.from_arrays(arrays, names) if arrays else _empty(columns or [], table.num_rows)


def _arrow_json(data: bytes, fixed: pa.Schema | None = None) -> pa.Table:
    """`data` (JSON lines) through pyarrow's reader; `fixed`: the types of some columns, the rest inferred."""
    return pa_json.read_json(
        pa.py_buffer(data),
        read_options=pa_json.ReadOptions(use_threads=False, block_size=len(data) + 1),
        parse_options=pa_json.ParseOptions(explicit_schema=fixed, newlines_in_values=False,
                                           unexpected_field_behavior="infer"),
    )


def _is_dated(arrow_type: pa.DataType) -> bool:
    while pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        arrow_type = arrow_type.value_type
    return pa.types.is_temporal(arrow_type)


def _as_strings(arrow_type: pa.DataType) -> pa.DataType:
    """`arrow_type` with strings where its values are (a list's values stay in the list)."""
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return pa.list_(_as_strings(arrow_type.value_type))
    return pa.string()


def _empty(columns: Sequence[str], rows: int = 0) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.nulls(rows) for _ in columns], list(columns))


def _holds_objects(arrow_type: pa.DataType) -> bool:
    while pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        arrow_type = arrow_type.value_type
    return pa.types.is_struct(arrow_type)


def _parse_line(line: bytes, columns) -> tuple[dict | None, RowProblem | None]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, RowProblem("bad_utf8", None, f"byte {error.start + 1} of the line is not UTF-8")
    try:
        row = json.loads(text)
    except json.JSONDecodeError as error:
        return None, RowProblem("malformed_json", None, f"malformed JSON line: {error.msg} (column {error.colno})")
    if not isinstance(row, dict):
        return None, RowProblem("malformed_json", None, f"a JSON line holds an object, not {_json_kind(row)}")
    for name in (columns if columns is not None else list(row)):
        value = row.get(name)
        # lists of lists are values (a fixed shape's rows, as pyarrow's reader takes them too); objects are not
        if _holds_object(value):
            return None, RowProblem("wrong_type", name, f"holds a JSON {_json_kind(value)} of objects"
                                    if isinstance(value, list) else "holds a JSON object, not a value")
        surrogate = _lone_surrogate(value)
        if surrogate is not None:
            return None, RowProblem("bad_utf8", name, f"holds a lone UTF-16 surrogate (\\u{ord(surrogate):04x}), "
                                                      "which is no character")
    return {name: _plain(row.get(name)) for name in (columns if columns is not None else row)}, None


def _nesting_problems(block: JsonBlock, columns) -> dict[int, list[RowProblem]]:
    """Row -> its fixed-shape column read flat from a nesting unlike the shape's (`block.nested`)."""
    problems: dict[int, list[RowProblem]] = {}
    for column in columns:
        if column.shape is None:
            continue
        for row, value in block.nested.get(column.name, {}).items():
            detail = value_nesting_problem(value, column.shape)
            if detail is not None:
                problems.setdefault(row, []).append(RowProblem("value_count", column.name, detail))
    return problems


def _lone_surrogate(value) -> str | None:
    """The first lone UTF-16 surrogate in a JSON value's text (json reads "\\ud800" as one), or None."""
    if isinstance(value, list):
        return next((found for item in value if (found := _lone_surrogate(item)) is not None), None)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            return value[error.start]
    return None


def _depth(value) -> int:
    """How deep lists nest in a JSON value: 0 for a single value, 1 for a list of them, ..."""
    return 1 + max((_depth(item) for item in value), default=0) if isinstance(value, list) else 0


def _flat_items(value) -> list:
    """A JSON value's items in row-major order, however nested (a single value: a list of it)."""
    if not isinstance(value, list):
        return [value]
    return [leaf for item in value for leaf in _flat_items(item)]


def _holds_object(value) -> bool:
    """Whether a JSON value is an object or a list holding one at any depth."""
    if isinstance(value, list):
        return any(_holds_object(item) for item in value)
    return isinstance(value, dict)


def _plain(value):
    """A JSON value as pyarrow's JSON reader types it: true/false as 1/0 (booleans are ints here)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _as_text(value):
    """A value of a column mixing numbers and text, as text: a number as Python writes it ("inf", as CSV does)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        return [_as_text(item) for item in value]
    return repr(value)


def _json_kind(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else "a number")


def json_blocks(path: str, columns: Sequence[str] | None, max_line_bytes: int, start: int = 0, stop: int = -1,
                block_bytes: int = JSONL_BLOCK_BYTES) -> Iterator[tuple]:
    """(JsonBlock, its first line's number as a callable) for the lines that start in bytes [`start`, `stop`);
    a line longer than `max_line_bytes` is rejected unread."""
    for block in line_blocks(path, start, stop, False, block_bytes, max_line_bytes):
        yield JsonBlock(block.data, columns, rejected_long_lines(block, max_line_bytes)), block.first_line


class JsonlFormat(InputFormat):
    """JSON Lines files, cut at byte offsets unless gzip; typed values as JSON types them."""

    sized_in_bytes = True
    cheap_to_split = True

    def sizes(self, config: InputConfig, paths: list[str]) -> list[int]:
        return file_sizes(paths)

    def splittable(self, config: InputConfig, path: str) -> bool:
        return not is_gzip(path)  # a gzip stream cannot be entered at a byte offset

    def read(self, reader, segment: Segment):
        names = [c.name for c in reader.columns]
        if reader.split_key and reader.split_key not in names:
            names.append(reader.split_key)
        for block, first_line in json_blocks(segment.path, names, reader.config.max_line_bytes, segment.start,
                                             segment.stop):

            def raw(row: int, numbers=block.numbers, block=block) -> str:
                return block.raw(numbers[row]).decode("utf-8", errors="backslashreplace")

            line = (lambda index, first_line=first_line: first_line() + int(index))
            yield reader.chunk(block.batch, block.numbers, block.rejected, segment.path, raw, line=line,
                               problems=_nesting_problems(block, reader.columns))

    def batches(self, config: InputConfig, paths: list[str], batch_rows: int) -> Iterator[SourceBatch]:
        for path in paths:
            for block, first_line in json_blocks(path, None, config.max_line_bytes):
                first = first_line()
                rejected = [RejectedRow(row.number + first, row.raw, row.problem) for row in block.rejected]
                for lo in range(0, max(block.batch.num_rows, 1), batch_rows):
                    mine = rejected if lo == 0 else []
                    if lo < block.batch.num_rows or mine:
                        yield SourceBatch(path, "line", block.batch.slice(lo, batch_rows),
                                          block.numbers[lo : lo + batch_rows] + first, mine,
                                          text_columns=frozenset(block.textual))

    def infer_types(self, config: InputConfig, paths: list[str], lists=(), wanted=None) -> dict[str, str]:
        """Kinds of the keys of a sample of lines spread over the files (`lines.sample_lines`; lines too long to
        read left out): a column's JSON type (numbers int or float, text bytes); a column mixing numbers and text
        takes the kind most of its values parse as, as a CSV column does. A `wanted` key the sample lacks is
        looked for in the rest of the files, in the lines that name it: a key of few rows (an optional feature)
        may first appear anywhere."""
        sample = sample_lines(paths, self.sizes(config, paths), False, config.max_line_bytes,
                              partial(self.splittable, config))
        kinds = _kinds(JsonBlock(sample, None), config)
        for name, kind in _kinds_of_late_keys(config, paths, set(wanted or ()) - set(kinds)).items():
            kinds.setdefault(name, kind)
        return kinds

    def held_rows(self, config: InputConfig, units: list) -> Iterator:
        return (row for path in self.inputs(config) for row in held_rows.json_rows(path))

    def copy_head(self, path: str, target: str, rows: int) -> bool:
        held_rows.copy_lines(path, target, rows)
        return True


def _kinds(block: JsonBlock, config: InputConfig, names=None) -> dict[str, str]:
    """The kind of each column of a block's rows (of `names` only, when given)."""
    kinds = {}
    for name, column in zip(block.batch.schema.names, block.batch.columns):
        if names is not None and name not in names:
            continue
        if name in block.textual:
            values = pa.array([None if v is None else str(v) for v in _flat(column.to_pylist())], pa.string())
            kinds[name] = majority_kind(text_counts(values, config.missing_tokens(name)))
        elif pa.types.is_null(column.type):
            kinds[name] = "bytes"
        else:
            kinds[name] = arrow_kind(column.type)
    return kinds


def _kinds_of_late_keys(config: InputConfig, paths: list[str], names: set[str]) -> dict[str, str]:
    """Kinds of keys (`names`) first met past the sample: the blocks of every file whose text names one of them
    (as a JSON string) are read for those keys, until each has held a value; a key only ever null is text, as in
    the sample."""
    found, only_null = {}, {}
    quoted = {name: json.dumps(name, ensure_ascii=False).encode() for name in names}
    for path in paths:
        for block in line_blocks(path, 0, -1, False, JSONL_BLOCK_BYTES, config.max_line_bytes):
            named = [name for name in names - set(found) if quoted[name] in block.data]
            if not named:
                continue
            read = JsonBlock(block.data, named)
            for name, kind in _kinds(read, config).items():
                if pa.types.is_null(read.batch.column(name).type):
                    only_null[name] = kind
                else:
                    found[name] = kind
            if set(found) == names:
                return found
    return {**only_null, **found}


def _flat(values: list) -> list:
    return [item for value in values for item in (value if isinstance(value, list) else [value])]


FORMAT = JsonlFormat()
