"""CSV files: the header, the lines a byte range owns, and lines split into string columns.

Fields come back as text (Arrow strings) for `row_checks` to parse, so a bad value is reported rather
than failing the read. Rows that cannot even be split into columns (a line with the wrong number of
fields or bad quoting, bytes that are not UTF-8) come back as `RejectedRow`s.

Each line is one row (quoted values may hold the delimiter but not a newline), so a file can be cut at
byte offsets and every row has an exact line number; with ``input.multiline: true`` a quoted field may
hold line breaks (RFC 4180) and the file is read whole, a record at a time.

With ``input.header: true`` the first line that is not blank is the header, in every file; a byte order
mark before it is no part of the first name. Without ``input.columns`` the header names the columns, and
every file must name the same ones in the same order.
"""

from __future__ import annotations

import codecs
import csv
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from skewless.config import InputConfig
from skewless.errors import InputError
from skewless.pipelines.reading import held_rows
from skewless.pipelines.reading.batches import BATCH_ROWS, RejectedRow, SourceBatch
from skewless.pipelines.reading.files import file_sizes, is_gzip, open_input
from skewless.pipelines.reading.lines import line_blocks, rejected_long_lines, sample_lines, skip_header
from skewless.pipelines.reading.format import ROW_CHUNK, InputFormat, Segment
from skewless.schemas.infer import majority_kind, text_counts
from skewless.schemas.row_checks import RowProblem, parse_text

# Bytes of CSV read and parsed at a time. Parsing a block makes transient copies of it (byte masks, pyarrow's
# parse, utf8_ltrim, the typed casts), and the units are parsed on every core at once: at 1M census rows 8 MB
# blocks peaked 135 MiB above 2 MB ones (1,066 against 929 MiB, 2 cores, 4 runs each, 2026-11-29) and ran
# 0.15-0.35 s faster (the job's parsing stage 1.0 against 1.4 s: `RowReader.chunk` judges each block, at a cost
# per call; docs/performance.md, session 14). The rows' chunks do not depend on it (`RowReader.read` regroups
# them).
CSV_BLOCK_BYTES = 2 << 20
# Lines holding either go through Python's csv module: pyarrow would read a quote or a lone
# carriage return across line ends, and the line number of every row would be lost.
_NEEDS_CSV_MODULE = (b'"', b"\r")
_WHITE_SPACE = np.frombuffer(b" \t\n\r\x0b\x0c", dtype=np.uint8)  # what bytes.strip() removes
_BOM_FIRST_BYTE = codecs.BOM_UTF8[0]


@dataclass(frozen=True)
class ParsedLines:
    """CSV lines split into string columns; `numbers` are the line numbers of the batch rows."""

    batch: pa.RecordBatch
    numbers: np.ndarray
    rejected: list[RejectedRow]


@dataclass
class CsvBlock:
    """Whole lines of a CSV file, split: `parsed` numbers each row by its line's index in `data` (0-based)."""

    path: str
    data: bytes
    parsed: ParsedLines
    first_line: Callable[[], int]  # the 1-based number of data's first line; may read the file up to it

    def line(self, index: int) -> int:
        return self.first_line() + int(index)

    def raw(self, index: int) -> bytes:
        starts, ends = self._bounds
        return self.data[starts[index] : ends[index]]

    @cached_property
    def _bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return line_bounds(self.data)  # only bad rows need them


def columns_of(paths: Sequence[str], config: InputConfig) -> list[str]:
    """The CSV columns: the config's, else the header every file shares ([] when no file has a line)."""
    if config.columns or not config.header:
        return list(config.columns or [])
    columns, named_by = None, None
    for path in paths:
        names = read_header(path, config)
        if names is None:
            continue  # a file of blank lines holds no rows
        if columns is None:
            columns, named_by = names, path
        elif names != columns:
            raise InputError(f"{path}: the CSV header names {', '.join(names)}, but {named_by}'s names "
                             f"{', '.join(columns)}; CSV inputs must share one header (or set input.columns)")
    return columns or []


def read_header(path: str, config: InputConfig) -> list[str] | None:
    """The column names of a file's header line; None when the file has none (no line but blanks)."""
    with open_input(path) as handle:
        _, lines, header = skip_header(handle)
    if header is None:
        return None
    return parse_header(header.rstrip(b"\r\n"), config.delimiter, config.skip_initial_space, f"{path}:{lines}")


def csv_blocks(path: str, config: InputConfig, columns: Sequence[str], start: int = 0,
               stop: int = -1) -> Iterator[CsvBlock]:
    """The lines that start in bytes [`start`, `stop`) of a file (-1: to its end), split, in blocks of whole lines."""
    for block in line_blocks(path, start, stop, config.header, CSV_BLOCK_BYTES, config.max_line_bytes):
        parsed = parse_csv_block(block.data, columns, config.delimiter, config.skip_initial_space, first_number=0)
        if block.long_lines:  # each left out of the block as an empty line
            parsed.rejected.extend(rejected_long_lines(block, config.max_line_bytes))
            parsed.rejected.sort(key=lambda row: row.number)
        yield CsvBlock(path, block.data, parsed, block.first_line)


def csv_batches(path: str, config: InputConfig, columns: Sequence[str], batch_rows: int) -> Iterator[SourceBatch]:
    """Every row of a file, numbered by its line, up to `batch_rows` a batch."""
    if config.multiline:
        yield from csv_record_batches(path, config, columns, batch_rows)
        return
    for block in csv_blocks(path, config, columns):
        first = block.first_line()
        numbers = block.parsed.numbers + first
        rejected = [RejectedRow(row.number + first, row.raw, row.problem) for row in block.parsed.rejected]
        # a rejected row goes with the batch whose lines it lies among
        owners = np.searchsorted(numbers[batch_rows::batch_rows], [row.number for row in rejected], side="right")
        for part, lo in enumerate(range(0, max(len(numbers), 1), batch_rows)):
            mine = [row for row, owner in zip(rejected, owners) if owner == part]
            if lo < len(numbers) or mine:
                batch = block.parsed.batch.slice(lo, batch_rows)
                yield SourceBatch(path, "line", batch, numbers[lo : lo + batch_rows], mine)


def csv_record_batches(path: str, config: InputConfig, columns: Sequence[str],
                       batch_rows: int) -> Iterator[SourceBatch]:
    """Every RFC 4180 record of a whole file (``input.multiline``), up to `batch_rows` a batch, with its raw text."""
    with open_input(path) as handle:
        lines = 0
        if config.header:
            _, lines, _ = skip_header(handle)
        # line ends as text mode reads them: a CRLF inside a quoted field is one "\n", as everywhere else
        unix_lines = (line.rstrip(b"\r\n") + b"\n" for line in handle)
        records = parse_csv_records(unix_lines, columns, config.delimiter, config.skip_initial_space,
                                    first_number=lines + 1, batch_rows=batch_rows)
        for parsed, raws in records:
            yield SourceBatch(path, "line", parsed.batch, parsed.numbers, parsed.rejected, raw=raws.__getitem__)


SNIFFED_BYTES = 65_536  # skip_initial_space: auto reads the whole lines in the first 64 KiB of the first file


def spaces_follow_delimiters(paths: Sequence[str], config: InputConfig) -> bool:
    """`skip_initial_space: auto`: whether the first file's first lines (its header too) are the ", " dialect,
    every field after a delimiter starting with a space (`39, State-gov, 77516`). A file where only some do
    (pandas writes " NJ" unquoted) holds those spaces as values: they are kept, as serving keeps them."""
    for path in paths:
        with open_input(path) as handle:
            head = handle.read(SNIFFED_BYTES)
        if len(head) == SNIFFED_BYTES and b"\n" in head:
            head = head[: head.rfind(b"\n") + 1]  # whole lines only
        lines = [line for line in head.decode("utf-8", errors="replace").splitlines(keepends=True) if line.strip()]
        if not lines:
            continue  # a file of blank lines: the next file says
        followers = [field for fields in csv.reader(lines, delimiter=config.delimiter) for field in fields[1:]]
        return bool(followers) and all(field.startswith(" ") for field in followers)
    return False


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
    through Python's `csv` module; both read a field the same way: with `skip_initial_space` the spaces
    that start a field (before its text or its opening quote) are no part of it, and a quoted value is
    exactly what its quotes hold (`"  NJ"` is "  NJ"), as with ``input.multiline: true``.
    """
    columns = list(columns)
    rejected: list[RejectedRow] = []
    plain: list[int] = []
    quoted: list[int] = []
    for index, line in enumerate(lines):
        if _is_blank(line):
            continue
        (quoted if any(mark in line for mark in _NEEDS_CSV_MODULE) else plain).append(index)
    _drop_undecodable(lines, numbers, plain, rejected)
    _drop_undecodable(lines, numbers, quoted, rejected)

    tables, row_lines = [], []
    if plain:
        table, kept = _parse_plain(lines, numbers, plain, columns, delimiter, skip_initial_space, rejected)
        tables.append(table)
        row_lines.append(kept)
    if quoted:
        table, kept = _parse_quoted(lines, numbers, quoted, columns, delimiter, skip_initial_space, rejected)
        tables.append(table)
        row_lines.append(kept)
    return _merge(tables, row_lines, columns, rejected)


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
    # A blank line is empty or starts with white space or a byte order mark; only those few are checked one by one.
    first_bytes = data[np.minimum(starts, max(len(data) - 1, 0))]
    maybe_blank = (starts == ends) | np.isin(first_bytes, _WHITE_SPACE) | (first_bytes == _BOM_FIRST_BYTE)
    for index in np.flatnonzero(maybe_blank & ~special):
        special[index] = _is_blank(block[starts[index] : ends[index]])
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
        table, invalid = _read_plain(text, columns, delimiter, skip_initial_space)
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
    return _merge(tables, row_lines, columns, rejected)


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


def _merge(tables, row_lines, columns, rejected) -> ParsedLines:
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


def _parse_plain(lines, numbers, indices, columns, delimiter, skip_initial_space, rejected
                 ) -> tuple[pa.Table, np.ndarray]:
    table, invalid = _read_plain(b"\n".join(lines[i] for i in indices) + b"\n", columns, delimiter, skip_initial_space)
    kept = np.ones(len(indices), dtype=bool)
    for row, found in invalid:
        index = indices[row]
        kept[row] = False
        rejected.append(RejectedRow(int(numbers[index]), bytes(lines[index]), _field_count_problem(len(columns), found)))
    return table, np.asarray(numbers, dtype=np.int64)[np.asarray(indices)[kept]]


def _is_blank(line: bytes) -> bool:
    """Nothing but white space, after a byte order mark (which pyarrow drops from the start of its input, so a
    line holding only one would leave it nothing to read)."""
    return not line.removeprefix(codecs.BOM_UTF8).strip()


def _read_plain(data: bytes, columns: list[str], delimiter: str, skip_initial_space: bool
                ) -> tuple[pa.Table, list[tuple[int, int]]]:
    """UTF-8 lines without quotes or stray carriage returns -> string columns, and (line index, field count)
    of each line with the wrong number of fields (left out of the table). With `skip_initial_space` the
    spaces that start a field are dropped, as Python's csv module drops them from the lines it reads
    (lines with quotes): there only before an unquoted text or an opening quote, never inside quotes."""
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
    if skip_initial_space:
        table = pa.table({name: pc.utf8_ltrim(table.column(name), " ") for name in columns})
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


# ------------------------------------------------------------------------------------------ the format


# what a header of one column may be delimited by instead, the hint of `CsvFormat.column_hint`
_OTHER_DELIMITERS = (";", "\t", "|", ",")


class CsvFormat(InputFormat):
    """CSV files, cut at byte offsets (a line is a row) unless gzip or multiline; every value is text."""

    sized_in_bytes = True
    cheap_to_split = True

    def resolved(self, config: InputConfig, paths: list[str]) -> InputConfig:
        if config.skip_initial_space == "auto":
            config = config.model_copy(update={"skip_initial_space": spaces_follow_delimiters(paths, config)})
        if config.header and not config.columns:
            return config.model_copy(update={"columns": columns_of(paths, config)})
        return config

    def sizes(self, config: InputConfig, paths: list[str]) -> list[int]:
        return file_sizes(paths)

    def splittable(self, config: InputConfig, path: str) -> bool:
        # a gzip CSV (by its bytes, whatever its name) cannot be cut at byte offsets, nor can one whose quoted
        # fields may hold line breaks
        return not (config.multiline or is_gzip(path))

    def read(self, reader, segment: Segment):
        config = reader.config
        names = list(config.columns or [])
        missing = [c.name for c in reader.columns if c.name not in names]
        if missing:
            raise InputError(f"{segment.path}: no column {missing[0]!r} in the CSV input")
        if config.multiline:  # plan_units never cuts such a file
            for part in csv_record_batches(segment.path, config, names, ROW_CHUNK):
                batch = split_lists(part.batch, reader.columns, config, reader.tokens)
                raw = (lambda row, raw=part.raw: raw(row).decode("utf-8", errors="backslashreplace"))
                yield reader.chunk(batch, part.numbers, part.rejected, segment.path, raw, text=True)
            return
        for block in csv_blocks(segment.path, config, names, segment.start, segment.stop):
            parsed = block.parsed

            def raw(row: int, numbers=parsed.numbers, block=block) -> str:
                return block.raw(numbers[row]).decode("utf-8", errors="backslashreplace")

            batch = split_lists(parsed.batch, reader.columns, config, reader.tokens)
            yield reader.chunk(batch, parsed.numbers, parsed.rejected, segment.path, raw, line=block.line, text=True)

    def batches(self, config: InputConfig, paths: list[str], batch_rows: int) -> Iterator[SourceBatch]:
        columns = columns_of(paths, config)
        for path in paths:
            yield from csv_batches(path, config, columns, batch_rows)

    def infer_types(self, config: InputConfig, paths: list[str], lists=(), wanted=None) -> dict[str, str]:
        """Kinds of the columns of a sample of lines spread over the files (`lines.sample_lines`), split and typed
        as the job reads them: lines that are not UTF-8 or not well-formed are left out, and a column takes the
        kind most of its values parse as."""
        sample = sample_lines(paths, self.sizes(config, paths), config.header, config.max_line_bytes,
                              partial(self.splittable, config))
        names = list(config.columns or [])
        table = parse_csv_block(sample, names, config.delimiter, config.skip_initial_space).batch
        types = {}
        for name in names:
            values = table.column(name)
            if name in lists:
                values = pc.utf8_trim_whitespace(pc.list_flatten(pc.split_pattern(values, config.list_delimiter)))
            types[name] = majority_kind(text_counts(values, config.missing_tokens(name)))
        return types

    def column_names(self, config: InputConfig, paths: list[str], wanted: set[str]) -> list[str]:
        return columns_of(paths, config)

    def held_rows(self, config: InputConfig, units: list) -> Iterator:
        return (row for path in self.inputs(config) for row in held_rows.csv_rows(config, path))

    def copy_head(self, path: str, target: str, rows: int) -> bool:
        held_rows.copy_lines(path, target, rows)
        return True

    def column_hint(self, config: InputConfig, names: list[str], missing: str) -> str:
        """A header read as one column that another common delimiter splits into the missing one."""
        if len(names) != 1:
            return ""
        for delimiter in _OTHER_DELIMITERS:
            parts = [part.strip() for part in names[0].split(delimiter)]
            if delimiter != config.delimiter and missing in parts:
                return (f"; the header is one column at delimiter {config.delimiter!r}, and {delimiter!r} splits it "
                        f"into {', '.join(parts)}: set input.delimiter: {delimiter!r}")
        return ""


def split_lists(batch: pa.RecordBatch, columns, config: InputConfig, tokens: dict) -> pa.RecordBatch:
    """CSV text of list columns -> lists of their values, split at `config.list_delimiter`, each item as written
    (a serving client sends the items, so an item's spaces are its own; numbers ignore them when parsed).

    A missing value inside a list is left out of it, as an empty field is: an empty item, an NA token
    (`tokens`: column -> its tokens), a float NaN, and with `input.nonfinite: missing` ±inf and numbers
    beyond the type (`parse_text` says which are missing).
    """
    kinds = {c.name: c.kind for c in columns if c.is_list}
    if not kinds:
        return batch
    arrays = []
    for name in batch.schema.names:
        column = batch.column(name)
        if name in kinds:
            split = pc.split_pattern(column.cast(pa.string()), config.list_delimiter)
            values = pc.list_flatten(split)
            keep = ~parse_text(values, kinds[name], config.nonfinite, tokens.get(name, frozenset())).missing
            parents = pc.list_parent_indices(split).to_numpy(zero_copy_only=False)
            lengths = np.bincount(parents[keep], minlength=len(column))
            offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
            column = pa.ListArray.from_arrays(pa.array(offsets), values.filter(pa.array(keep)))
        arrays.append(column)
    return pa.RecordBatch.from_arrays(arrays, batch.schema.names)


FORMAT = CsvFormat()
