"""Streaming raw input for the schema commands: CSV, Parquet and TFRecord files as Arrow batches.

Files are read a batch of rows at a time, never whole. CSV fields come back as text (Arrow
strings) for `row_checks` to parse, so a bad value is reported rather than failing the read;
Parquet columns keep their types, made plain by `plain_column` (a timestamp becomes epoch seconds,
a decimal a float; the job's reader uses it too); tf.train.Example features come back as lists,
decoded by tfx_bsl.
Rows that cannot even be split into columns (a CSV line with the wrong number of fields or bad
quoting, bytes that are not UTF-8, a record that is not an Example) come back as `RejectedRow`s.

Each CSV line is one row (quoted values may hold the delimiter but not a newline), so every row
has an exact line number. No Apache Beam here; TensorFlow is imported only for TFRecord input.
"""

from __future__ import annotations

import codecs
import csv
import glob
import gzip
import os
import zlib
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from skewless.config import InputConfig
from skewless.errors import ConfigError, InputError
from skewless.schemas.row_checks import RowProblem

BATCH_ROWS = 16_384
_READ_BYTES = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
# Lines holding either go through Python's csv module: pyarrow would read a quote or a lone
# carriage return across line ends, and the line number of every row would be lost.
_NEEDS_CSV_MODULE = (b'"', b"\r")
_WHITE_SPACE = np.frombuffer(b" \t\n\r\x0b\x0c", dtype=np.uint8)  # what bytes.strip() removes
_FORMATS_BY_SUFFIX = {
    ".csv": "csv",
    ".csv.gz": "csv",
    ".data": "csv",
    ".txt": "csv",
    ".tsv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".tfrecord": "tfrecord",
    ".tfrecord.gz": "tfrecord",
    ".tfrecords": "tfrecord",
}


@dataclass(frozen=True)
class RejectedRow:
    """A row that could not be split into columns: its line or record number, raw bytes and why."""

    number: int
    raw: bytes
    problem: RowProblem


@dataclass
class SourceBatch:
    """Rows of one file: `batch.num_rows` rows numbered `numbers`, plus the rows rejected among them."""

    path: str
    unit: str  # "line" (CSV) or "record" (Parquet rows, TFRecord records; 1-based)
    batch: pa.RecordBatch
    numbers: np.ndarray
    rejected: list[RejectedRow] = field(default_factory=list)

    def where(self, number: int) -> str:
        """"file:LINE" for CSV, "file#RECORD" otherwise."""
        return f"{self.path}:{number}" if self.unit == "line" else f"{self.path}#{number}"


@dataclass(frozen=True)
class ParsedLines:
    """CSV lines split into string columns; `numbers` are the line numbers of the batch rows."""

    batch: pa.RecordBatch
    numbers: np.ndarray
    rejected: list[RejectedRow]


def input_config(
    inputs: Sequence[str],
    format: str | None = None,
    header: bool = False,
    columns: str | Sequence[str] | None = None,
    delimiter: str = ",",
    skip_initial_space: bool = True,
) -> InputConfig:
    """An `InputConfig` from command-line options; `format` defaults to what the file names say."""
    if isinstance(columns, str):
        columns = [name.strip() for name in columns.split(",") if name.strip()]
    format = format or detect_format(inputs)
    if format == "csv" and not header and not columns:
        raise ConfigError("CSV input without --header needs --columns NAME,NAME,... (the column names in order)")
    try:
        return InputConfig(
            format=format,
            paths=list(inputs),
            header=header,
            columns=list(columns) if columns else None,
            delimiter=delimiter,
            skip_initial_space=skip_initial_space,
        )
    except ValueError as error:  # pydantic's ValidationError is a ValueError
        messages = [item["msg"].removeprefix("Value error, ") for item in getattr(error, "errors", lambda: [])()]
        raise ConfigError("; ".join(messages) or str(error)) from None


def detect_format(inputs: Sequence[str]) -> str:
    """"csv", "parquet" or "tfrecord" from the file name suffixes; all inputs must agree."""
    found = set()
    for path in inputs:
        name = path.lower()
        matches = [fmt for suffix, fmt in _FORMATS_BY_SUFFIX.items() if name.endswith(suffix)]
        if not matches:
            raise ConfigError(f"{path}: cannot tell the input format from the name; pass --format csv|tfrecord|parquet")
        found.add(matches[0])
    if len(found) != 1:
        raise ConfigError(f"inputs mix formats ({', '.join(sorted(found))}); pass one format with --format")
    return found.pop()


def expand_paths(patterns: Sequence[str]) -> list[str]:
    """Files matching each path or glob, each glob's matches sorted; a pattern that matches nothing is an error."""
    paths: list[str] = []
    for pattern in patterns:
        if "://" in pattern:
            import tensorflow as tf

            matches = sorted(tf.io.gfile.glob(pattern))
        elif glob.has_magic(pattern):
            matches = sorted(path for path in glob.glob(pattern) if os.path.isfile(path))
        else:
            if os.path.isdir(pattern):
                raise InputError(f"{pattern}: is a folder; name the files (a glob works)")
            matches = [pattern] if os.path.exists(pattern) else []
        if not matches:
            raise InputError(f"{pattern}: no input file matches")
        paths.extend(path for path in matches if path not in paths)
    return paths


def read_batches(config: InputConfig, batch_rows: int = BATCH_ROWS) -> Iterator[SourceBatch]:
    """Every row of the inputs `config` names, in file order, as `SourceBatch`es of up to `batch_rows` rows."""
    readers = {"csv": _csv_batches, "parquet": _parquet_batches, "tfrecord": _tfrecord_batches}
    if config.format not in readers:
        raise ConfigError(f"input format {config.format!r} has no files to read; use csv, parquet or tfrecord")
    for path in expand_paths(config.paths):
        yield from readers[config.format](path, config, batch_rows)


def parse_csv_lines(
    lines: Sequence[bytes],
    numbers: Sequence[int],
    columns: Sequence[str],
    delimiter: str = ",",
    skip_initial_space: bool = True,
) -> ParsedLines:
    """Splits CSV lines (without their newlines) into one string column per name.

    Blank lines are skipped: they are no row. A line that is not UTF-8, is malformed (unbalanced
    quotes, a carriage return outside quotes) or has another number of fields than `columns` is
    rejected. Lines without quotes go through pyarrow's CSV parser with quoting off, the rest
    through Python's `csv` module; both split unquoted fields the same way, and
    `skip_initial_space` strips the spaces that start every field.
    """
    columns = list(columns)
    rejected: list[RejectedRow] = []
    plain: list[int] = []
    quoted: list[int] = []
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        (quoted if any(mark in line for mark in _NEEDS_CSV_MODULE) else plain).append(index)
    _drop_undecodable(lines, numbers, plain, rejected)
    _drop_undecodable(lines, numbers, quoted, rejected)

    tables, row_lines = [], []
    if plain:
        table, kept = _parse_plain(lines, numbers, plain, columns, delimiter, rejected)
        tables.append(table)
        row_lines.append(kept)
    if quoted:
        table, kept = _parse_quoted(lines, numbers, quoted, columns, delimiter, skip_initial_space, rejected)
        tables.append(table)
        row_lines.append(kept)
    return _merge(tables, row_lines, columns, skip_initial_space, rejected)


def parse_csv_block(
    block: bytes,
    columns: Sequence[str],
    delimiter: str = ",",
    skip_initial_space: bool = True,
    first_number: int = 1,
) -> ParsedLines:
    """`parse_csv_lines` for a block of whole lines (numbered from `first_number`), fast on clean text.

    The lines `parse_csv_lines` would treat specially (blank, holding a quote or a carriage return
    other than a CRLF ending, not UTF-8) go through it; all others are read by pyarrow in one call,
    as its plain lines are, so both give the same rows and reasons without a Python step per line.
    """
    columns = list(columns)
    starts, ends = line_bounds(block)
    data = np.frombuffer(block, dtype=np.uint8)
    special = np.zeros(len(starts), dtype=bool)
    marks = np.flatnonzero((data == 34) | (data == 13))
    owners = np.searchsorted(starts, marks, side="right") - 1
    special[owners[marks < ends[owners]]] = True  # a CRLF's carriage return lies at or past its line's end
    # A blank line is empty or starts with white space; only those few are checked one by one.
    maybe_blank = (starts == ends) | np.isin(data[np.minimum(starts, max(len(data) - 1, 0))], _WHITE_SPACE)
    for index in np.flatnonzero(maybe_blank & ~special):
        special[index] = not block[starts[index] : ends[index]].strip()
    special |= _undecodable_lines(block, starts)

    tables, row_lines, rejected = [], [], []
    numbers = np.arange(first_number, first_number + len(starts), dtype=np.int64)
    plain = np.flatnonzero(~special)
    if len(plain):
        if len(plain) == len(starts):
            text = block
        else:
            next_starts = np.append(starts[1:], len(data))
            text = data[np.repeat(~special, next_starts - starts)].tobytes()
        table, invalid = _read_plain(text, columns, delimiter)
        kept = np.ones(len(plain), dtype=bool)
        for row, found in invalid:
            kept[row] = False
            index = plain[row]
            problem = _field_count_problem(len(columns), found)
            rejected.append(RejectedRow(int(numbers[index]), block[starts[index] : ends[index]], problem))
        tables.append(table)
        row_lines.append(numbers[plain[kept]])
    careful = np.flatnonzero(special)
    if len(careful):
        lines = [block[starts[i] : ends[i]].rstrip(b"\r") for i in careful]
        parsed = parse_csv_lines(lines, numbers[careful], columns, delimiter, skip_initial_space)
        tables.append(pa.Table.from_batches([parsed.batch]))
        row_lines.append(parsed.numbers)
        rejected.extend(parsed.rejected)
    return _merge(tables, row_lines, columns, skip_initial_space, rejected)


def parse_csv_records(
    lines: Iterable[bytes],
    columns: Sequence[str],
    delimiter: str = ",",
    skip_initial_space: bool = True,
    first_number: int = 1,
    batch_rows: int = BATCH_ROWS,
) -> Iterator[tuple[ParsedLines, list[bytes]]]:
    """RFC 4180 records whose quoted fields may hold line breaks (``input.multiline: true``), in batches.

    `lines` are a file's lines with their line endings, numbered from `first_number`; a row is numbered
    by its first line. Yields (rows, raw text of each row); blank lines, bad UTF-8, malformed records and
    wrong field counts are handled as `parse_csv_lines` handles them. A quote left open swallows the
    rest of the file into one malformed record: RFC 4180 gives no other reading of it.
    """
    columns = list(columns)
    consumed: list[bytes] = []

    def text():
        for line in lines:
            consumed.append(line)
            yield line.decode("utf-8", "surrogateescape")  # bad bytes are found per record, below

    reader = csv.reader(text(), delimiter=delimiter, skipinitialspace=skip_initial_space, strict=True)
    rows, numbers, raws, rejected = [], [], [], []
    number = first_number
    while True:
        consumed.clear()
        try:
            fields = next(reader)
            problem = None
        except StopIteration:
            break
        except csv.Error as error:
            fields, problem = None, RowProblem("malformed_csv", None, f"malformed CSV record: {error}")
        raw, start = b"".join(consumed).rstrip(b"\r\n"), number
        number += len(consumed)
        if fields is not None:
            if not raw.strip():
                continue  # a blank line is no row
            if any(0xDC80 <= ord(char) <= 0xDCFF for field in fields for char in field):
                problem = RowProblem("bad_utf8", None, "the record is not UTF-8 text")
            elif len(fields) != len(columns):
                problem = _field_count_problem(len(columns), len(fields))
        if problem is not None:
            rejected.append(RejectedRow(start, raw, problem))
        else:
            rows.append(fields)
            numbers.append(start)
            raws.append(raw)
        if len(rows) + len(rejected) >= batch_rows:
            yield _records(rows, numbers, columns, rejected), raws
            rows, numbers, raws, rejected = [], [], [], []
    if rows or rejected:
        yield _records(rows, numbers, columns, rejected), raws


def _records(rows, numbers, columns, rejected) -> ParsedLines:
    arrays = [pa.array([row[i] for row in rows], pa.string()) for i in range(len(columns))]
    return ParsedLines(pa.RecordBatch.from_arrays(arrays, columns), np.array(numbers, dtype=np.int64), rejected)


def line_bounds(block: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets of each line of `block`; an end is where its "\\n" (or its CRLF) begins."""
    data = np.frombuffer(block, dtype=np.uint8)
    newlines = np.flatnonzero(data == 10)
    starts = np.concatenate([[0], newlines + 1])
    ends = np.append(newlines, len(data))
    if len(data) == 0 or block.endswith(b"\n"):
        starts, ends = starts[:-1], ends[:-1]
    crlf = (ends > starts) & (data[np.maximum(ends - 1, 0)] == 13) if len(data) else np.zeros(0, dtype=bool)
    return starts, ends - crlf


def _merge(tables, row_lines, columns, skip_initial_space, rejected) -> ParsedLines:
    """Parts of one batch, parsed separately, in line order."""
    if tables:
        table = pa.concat_tables(tables)
        found = np.concatenate(row_lines)
        if len(tables) > 1:
            order = np.argsort(found, kind="stable")
            table, found = table.take(pa.array(order)), found[order]
    else:
        table = pa.table({name: pa.array([], pa.string()) for name in columns})
        found = np.zeros(0, dtype=np.int64)
    arrays = [table.column(name).combine_chunks() for name in columns]
    if skip_initial_space:
        arrays = [pc.utf8_ltrim(array, " ") for array in arrays]
    rejected.sort(key=lambda row: row.number)
    return ParsedLines(pa.RecordBatch.from_arrays(arrays, columns), found.astype(np.int64), rejected)


def _undecodable_lines(block: bytes, starts: np.ndarray) -> np.ndarray:
    """Which lines of `block` are not UTF-8 (lines never split a character, so each is judged alone)."""
    bad = np.zeros(len(starts), dtype=bool)
    view, position = memoryview(block), 0
    while position < len(block):
        try:
            codecs.utf_8_decode(view[position:], "strict", True)
            break
        except UnicodeDecodeError as error:
            line = int(np.searchsorted(starts, position + error.start, side="right")) - 1
            bad[line] = True
            position = int(starts[line + 1]) if line + 1 < len(starts) else len(block)
    return bad


def parse_header(line: bytes, delimiter: str, skip_initial_space: bool, where: str) -> list[str]:
    """The column names of a CSV header line; `where` ("file:line") names it in errors."""
    try:
        text = line.decode("utf-8").removeprefix("\ufeff")  # a byte order mark is no part of the name
        names = next(csv.reader([text], delimiter=delimiter, skipinitialspace=skip_initial_space, strict=True))
    except (UnicodeDecodeError, csv.Error, StopIteration) as error:
        raise InputError(f"{where}: cannot read the CSV header: {error}") from None
    names = [name.strip() for name in names]
    if not all(names):
        raise InputError(f"{where}: the CSV header has an empty column name")
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise InputError(f"{where}: the CSV header names {', '.join(duplicates)} more than once")
    return names


def _drop_undecodable(lines, numbers, indices: list[int], rejected: list[RejectedRow]) -> None:
    """Removes from `indices` (in place) the lines that are not UTF-8, rejecting them."""
    try:
        b"\n".join(lines[i] for i in indices).decode("utf-8")
        return
    except UnicodeDecodeError:
        pass
    keep = []
    for index in indices:
        try:
            lines[index].decode("utf-8")
            keep.append(index)
        except UnicodeDecodeError as error:
            problem = RowProblem("bad_utf8", None, f"byte {error.start + 1} of the line is not UTF-8")
            rejected.append(RejectedRow(int(numbers[index]), bytes(lines[index]), problem))
    indices[:] = keep


def _parse_plain(lines, numbers, indices, columns, delimiter, rejected) -> tuple[pa.Table, np.ndarray]:
    table, invalid = _read_plain(b"\n".join(lines[i] for i in indices) + b"\n", columns, delimiter)
    kept = np.ones(len(indices), dtype=bool)
    for row, found in invalid:
        index = indices[row]
        kept[row] = False
        rejected.append(RejectedRow(int(numbers[index]), bytes(lines[index]), _field_count_problem(len(columns), found)))
    return table, np.asarray(numbers, dtype=np.int64)[np.asarray(indices)[kept]]


def _read_plain(data: bytes, columns: list[str], delimiter: str) -> tuple[pa.Table, list[tuple[int, int]]]:
    """UTF-8 lines without quotes or stray carriage returns -> string columns, and (line index, field count)
    of each line with the wrong number of fields (left out of the table)."""
    invalid = []

    def on_invalid(row) -> str:
        invalid.append((row.number - 1, row.actual_columns))
        return "skip"

    table = pa_csv.read_csv(
        pa.py_buffer(data),
        read_options=pa_csv.ReadOptions(column_names=columns, use_threads=False, block_size=len(data) + 1),
        parse_options=pa_csv.ParseOptions(
            delimiter=delimiter, quote_char=False, ignore_empty_lines=False, invalid_row_handler=on_invalid
        ),
        convert_options=pa_csv.ConvertOptions(
            column_types={name: pa.string() for name in columns}, strings_can_be_null=False
        ),
    )
    return table, invalid


def _parse_quoted(lines, numbers, indices, columns, delimiter, skip_initial_space, rejected):
    rows, kept = [], []
    for index in indices:
        number = int(numbers[index])
        text = lines[index].decode("utf-8")
        try:
            fields = next(csv.reader([text], delimiter=delimiter, skipinitialspace=skip_initial_space, strict=True))
        except csv.Error as error:
            hint = " (a quoted field holding a line break? set input.multiline: true)" if '"' in text else ""
            problem = RowProblem("malformed_csv", None, f"malformed CSV line: {error}{hint}")
            rejected.append(RejectedRow(number, bytes(lines[index]), problem))
            continue
        if len(fields) != len(columns):
            rejected.append(RejectedRow(number, bytes(lines[index]), _field_count_problem(len(columns), len(fields))))
            continue
        rows.append(fields)
        kept.append(number)
    table = pa.table({name: pa.array([row[i] for row in rows], pa.string()) for i, name in enumerate(columns)})
    return table, np.array(kept, dtype=np.int64)


def _field_count_problem(expected: int, found: int) -> RowProblem:
    return RowProblem("wrong_field_count", None, f"expected {expected} fields, found {found}")


def _csv_batches(path: str, config: InputConfig, batch_rows: int) -> Iterator[SourceBatch]:
    with _open_binary(path) as handle:
        numbered = _numbered_lines(handle, path)
        columns = list(config.columns) if config.columns else None
        first = 1  # the number of the first line after the header
        if config.header:
            for number, line in numbered:
                first = number + 1
                if line.strip():
                    names = parse_header(line, config.delimiter, config.skip_initial_space, f"{path}:{number}")
                    columns = columns or names
                    break
        if not columns:
            return
        if config.multiline:
            for parsed, _ in parse_csv_records((line + b"\n" for _, line in numbered), columns, config.delimiter,
                                               config.skip_initial_space, first, batch_rows):
                yield SourceBatch(path, "line", parsed.batch, parsed.numbers, parsed.rejected)
            return
        lines: list[bytes] = []
        numbers: list[int] = []
        for number, line in numbered:
            lines.append(line)
            numbers.append(number)
            if len(lines) == batch_rows:
                yield _csv_batch(path, config, columns, lines, numbers)
                lines, numbers = [], []
        if lines:
            yield _csv_batch(path, config, columns, lines, numbers)


def _csv_batch(path, config, columns, lines, numbers) -> SourceBatch:
    parsed = parse_csv_lines(lines, numbers, columns, config.delimiter, config.skip_initial_space)
    return SourceBatch(path, "line", parsed.batch, parsed.numbers, parsed.rejected)


def _numbered_lines(handle: BinaryIO, path: str) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, line without its "\\n" or "\\r\\n") for each line of a binary file."""
    number = 0
    try:
        for line in handle:
            number += 1
            yield number, line.rstrip(b"\r\n")
    except (OSError, EOFError, zlib.error) as error:  # corrupt or truncated gzip
        raise InputError(f"{path}: cannot read past line {number}: {error}") from None


def _open_binary(path: str, gunzip: bool = True) -> BinaryIO:
    """The file's bytes, gunzipped when `gunzip` and it starts with the gzip magic number."""
    try:
        if "://" in path:
            import tensorflow as tf

            handle = tf.io.gfile.GFile(path, "rb")
        else:
            handle = open(path, "rb")
    except FileNotFoundError:
        raise InputError(f"{path}: input file not found") from None
    except OSError as error:
        raise InputError(f"{path}: cannot open input: {error}") from None
    if gunzip and handle.read(2) == _GZIP_MAGIC:
        handle.seek(0)
        return gzip.GzipFile(fileobj=handle)  # type: ignore[return-value]
    handle.seek(0)
    return handle


def _parquet_batches(path: str, config: InputConfig, batch_rows: int) -> Iterator[SourceBatch]:
    import pyarrow.parquet as pq

    with _open_binary(path, gunzip=False) as handle:  # Parquet compresses inside the file
        try:
            parquet = pq.ParquetFile(handle)
            first = 1
            for batch in parquet.iter_batches(batch_size=batch_rows):
                numbers = np.arange(first, first + batch.num_rows, dtype=np.int64)
                first += batch.num_rows
                yield SourceBatch(path, "record", plain_batch(batch, path), numbers)
        except (pa.ArrowException, OSError) as error:
            raise InputError(f"{path}: cannot read Parquet: {error}") from None


def plain_batch(batch: pa.RecordBatch, path: str) -> pa.RecordBatch:
    """A Parquet batch with every column as `plain_column` makes it; `path` names the file in errors."""
    names = batch.schema.names
    arrays = [plain_column(column, f"{path}: column {name!r}") for name, column in zip(names, batch.columns)]
    return pa.RecordBatch.from_arrays(arrays, names)


def plain_type(arrow_type: pa.DataType, where: str) -> pa.DataType:
    """The type `plain_column` gives a column of `arrow_type` (one conversion, so inference cannot disagree)."""
    return plain_column(pa.array([], arrow_type), where).type


def plain_column(values: pa.Array, where: str) -> pa.Array:
    """Arrow values as int64, float64, bool, string, binary or lists of them, which is what rows hold.

    What plain `pandas.DataFrame.to_parquet()` writes maps to numbers a graph can use: a timestamp to
    int64 seconds since 1970-01-01 UTC (floored: stored instants are UTC whatever the time zone), a
    date to int64 days since 1970-01-01, a time of day to int64 seconds since midnight, a decimal to
    float64, a dictionary (pandas categorical) to its values, large strings and binaries to plain
    ones. Durations, intervals, structs, maps and unions have no such number: an `InputError` naming
    `where` ("file: column 'name'") and the type.
    """
    kind = values.type
    if pa.types.is_dictionary(kind):
        return plain_column(values.dictionary_decode(), where)
    if pa.types.is_fixed_size_list(kind):
        return plain_column(values.cast(pa.list_(kind.value_type)), where)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        inner = plain_column(values.values, where)
        if inner.type == kind.value_type:
            return values
        list_class = pa.ListArray if pa.types.is_list(kind) else pa.LargeListArray
        return list_class.from_arrays(values.offsets, inner, mask=values.is_null())
    if pa.types.is_timestamp(kind):
        # floor_temporal rounds in local time when there is a zone; without one it is UTC, as stored
        utc = values.cast(pa.timestamp(kind.unit))
        return pc.floor_temporal(utc, unit="second").cast(pa.timestamp("s")).cast(pa.int64())
    if pa.types.is_date(kind):
        return values.cast(pa.date32()).cast(pa.int32()).cast(pa.int64())
    if pa.types.is_time(kind):
        # times of day are not negative: dropping the fraction is flooring it
        return values.cast(pa.time32("s"), safe=False).cast(pa.int32()).cast(pa.int64())
    if pa.types.is_decimal(kind):
        return values.cast(pa.float64())
    if pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return values.cast(pa.string())
    if pa.types.is_large_binary(kind) or pa.types.is_binary_view(kind) or pa.types.is_fixed_size_binary(kind):
        return values.cast(pa.binary())
    if (pa.types.is_duration(kind) or pa.types.is_interval(kind) or pa.types.is_struct(kind)
            or pa.types.is_map(kind) or pa.types.is_union(kind)):
        raise InputError(
            f"{where} has Arrow type {kind}, which has no int, float or string form here; "
            "convert it before writing the file (e.g. a duration to seconds)"
        )
    return values


def _tfrecord_batches(path: str, config: InputConfig, batch_rows: int) -> Iterator[SourceBatch]:
    import tensorflow as tf
    from tfx_bsl.coders import example_coder

    with _open_binary(path) as handle:
        compression = "GZIP" if isinstance(handle, gzip.GzipFile) else ""
    decoder = example_coder.ExamplesToRecordBatchDecoder()
    records = iter(tf.data.TFRecordDataset(path, compression_type=compression, buffer_size=_READ_BYTES).batch(batch_rows))
    first = 1
    while True:
        try:
            serialized = next(records).numpy().tolist()
        except StopIteration:
            return
        except tf.errors.OpError as error:
            raise InputError(
                f"{path}: corrupt TFRecord data after record {first - 1}: {error.message.splitlines()[0]}"
            ) from None
        yield from decode_examples(decoder, serialized, path, first)
        first += len(serialized)


def record_decoder(record: str = "example"):
    """(tfx_bsl decoder, message name) for TFRecords of `record` ("example" or "sequence_example").

    A SequenceExample decodes to its context features as list columns and its feature lists as
    list<list> columns of one struct column, ``skewless.sequence_specs.SEQUENCE_COLUMN``.
    """
    if record == "sequence_example":
        from tfx_bsl.coders import sequence_example_coder

        from skewless.sequence_specs import SEQUENCE_COLUMN

        return sequence_example_coder.SequenceExamplesToRecordBatchDecoder(SEQUENCE_COLUMN), "tf.train.SequenceExample"
    from tfx_bsl.coders import example_coder

    return example_coder.ExamplesToRecordBatchDecoder(), "tf.train.Example"


def decode_examples(decoder, serialized: list[bytes], path: str, first: int,
                    message: str = "tf.train.Example") -> Iterator[SourceBatch]:
    """Serialized records (numbered from `first`) -> batches of list columns, and the records that do not decode.

    `decoder` and `message` come from `record_decoder`.
    """
    try:
        batch = decoder.DecodeBatch(serialized)
    except RuntimeError:
        # One record that does not decode, or a feature whose kind differs between records, spoils the
        # whole batch: decode record by record so that only the culprits are singled out.
        yield from _decode_one_by_one(decoder, serialized, path, first, message)
        return
    yield SourceBatch(path, "record", batch, np.arange(first, first + len(serialized), dtype=np.int64))


def _decode_one_by_one(decoder, serialized: list[bytes], path: str, first: int, message: str) -> Iterator[SourceBatch]:
    empty = pa.RecordBatch.from_arrays([], [])
    rejected = []
    for offset, record in enumerate(serialized):
        try:
            batch = decoder.DecodeBatch([record])
        except RuntimeError as error:
            detail = str(error).splitlines()[0] if str(error) else "cannot parse"
            problem = RowProblem("undecodable", None, f"not a {message}: {detail}")
            rejected.append(RejectedRow(first + offset, record, problem))
            continue
        yield SourceBatch(path, "record", batch, np.array([first + offset], dtype=np.int64))
    if rejected:
        yield SourceBatch(path, "record", empty, np.zeros(0, dtype=np.int64), rejected)
