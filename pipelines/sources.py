"""Raw input: planning the work into units, and reading one unit as typed Arrow tables.

A *work unit* is a list of segments, each a range of one input: bytes of a CSV file, rows of a
Parquet file or of the synthetic dataset, records of a TFRecord file. The units partition the input
in order, and unit `i` writes shard `i` of every split, so the shard count is the unit count and the
output does not depend on which worker reads what (see `shards.py` for the count).

A CSV byte range owns the lines that *start* inside it: a reader seeks to `start - 1`, drops the rest
of that line, then reads lines until one starts at or after `stop`. Lines are rows (quoted values with
newlines are not supported in splittable CSV). Files that cannot be split (gzip CSV) are one segment.

Every reader returns `Chunk`s: the rows that decoded, typed as the raw columns say, each with a split
key, plus the rows that did not (`BadRow`, with file, line or record number and the reason) so that
the job can put them in quarantine instead of dropping them.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skewless.config import InputConfig
from skewless.errors import InputError
from skewless.pipelines.columns import ARROW_TYPES, RawColumn

CSV_BLOCK_BYTES = 8 << 20
ROW_CHUNK = 65_536

_NUMBER_PATTERNS = {
    "int": r"^[+-]?\d+$",
    "float": r"^[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[iI]nf(inity)?|[nN]a[nN])$",
}


@dataclass(frozen=True)
class Segment:
    path: str
    start: int
    stop: int  # -1: to the end


@dataclass(frozen=True)
class WorkUnit:
    index: int
    segments: tuple[Segment, ...]


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

    @property
    def rows_read(self) -> int:
        return self.table.num_rows + len(self.bad)


# --------------------------------------------------------------------------------------------- planning


def expand_paths(input_config: InputConfig, resolve) -> list[str]:
    """The input files, in a stable order: each glob's matches sorted, globs in config order."""
    from apache_beam.io.filesystems import FileSystems

    paths: list[str] = []
    for pattern in input_config.paths:
        resolved = resolve(pattern)
        try:
            matches = FileSystems.match([resolved])[0].metadata_list
        except Exception as error:  # Beam raises BeamIOError subclasses per filesystem
            raise InputError(f"{resolved}: cannot list input: {error}") from None
        files = sorted(m.path for m in matches if not m.path.endswith("/"))
        if not files:
            raise InputError(f"{resolved}: no input file matches")
        paths.extend(p for p in files if p not in paths)
    return paths


def input_sizes(input_config: InputConfig, paths: list[str]) -> list[int]:
    """Per input, the size that work is divided by: bytes (CSV), rows (Parquet, synthetic), records (TFRecord)."""
    from apache_beam.io.filesystems import FileSystems

    if input_config.format == "synthetic":
        return [input_config.rows]
    if input_config.format == "parquet":
        import pyarrow.parquet as pq

        return [pq.ParquetFile(FileSystems.open(p)).metadata.num_rows for p in paths]
    if input_config.format == "tfrecord":
        return [_count_records(p) for p in paths]
    return [FileSystems.match([p])[0].metadata_list[0].size_in_bytes for p in paths]


def plan_units(input_config: InputConfig, paths: list[str], sizes: list[int], num_units: int) -> list[WorkUnit]:
    """Cuts the inputs, in order, into `num_units` contiguous units of about equal size.

    Unit i covers [i*T/n, (i+1)*T/n) of the concatenated inputs (T = total size); a gzip CSV is not
    splittable and goes whole to the unit its first byte falls in, so there can be fewer units.
    """
    if input_config.format == "synthetic":
        paths = ["synthetic"]
    splittable = [not (input_config.format == "csv" and _is_gzip(p)) for p in paths]
    total = sum(sizes)
    if total == 0:
        return [WorkUnit(0, tuple(Segment(p, 0, -1) for p in paths))]
    if not all(splittable):
        num_units = min(num_units, len(paths))
    bounds = [total * i // num_units for i in range(num_units + 1)]
    units: list[list[Segment]] = [[] for _ in range(num_units)]
    offset = 0
    for path, size, can_split in zip(paths, sizes, splittable):
        if not can_split:
            owner = max(i for i in range(num_units) if bounds[i] <= offset)
            units[owner].append(Segment(path, 0, -1))
        else:
            for i in range(num_units):
                lo, hi = max(bounds[i], offset), min(bounds[i + 1], offset + size)
                if lo < hi:
                    units[i].append(Segment(path, lo - offset, hi - offset))
        offset += size
    return [WorkUnit(i, tuple(segments)) for i, segments in enumerate(units)]


def _is_gzip(path: str) -> bool:
    return path.endswith(".gz") or path.endswith(".gzip")


def _count_records(path: str) -> int:
    import tensorflow as tf

    compression = "GZIP" if _is_gzip(path) else ""
    try:
        return int(tf.data.TFRecordDataset(path, compression_type=compression).reduce(0, lambda n, _: n + 1))
    except tf.errors.OpError as error:
        raise InputError(f"{path}: corrupt TFRecord file: {error.message.splitlines()[0]}") from None


# ---------------------------------------------------------------------------------------------- reading


class RowReader:
    """Reads work units of one input config as typed tables of the raw columns.

    Holds only plain data (the config, the columns), so it pickles to Beam workers.
    """

    def __init__(
        self,
        input_config: InputConfig,
        columns: list[RawColumn],
        split_key: str | None = None,
        allowed: dict[str, list[str]] | None = None,
    ):
        self.config = input_config
        self.columns = columns
        self.split_key = split_key
        # column -> the only values it may hold (a label map's keys, a schema's string domain)
        self.allowed = allowed or {}

    def read(self, unit: WorkUnit) -> Iterator[Chunk]:
        for segment in unit.segments:
            reader = {
                "csv": self._read_csv,
                "synthetic": self._read_synthetic,
                "parquet": self._read_parquet,
                "tfrecord": self._read_tfrecord,
            }[self.config.format]
            yield from reader(segment)

    # -- synthetic

    def _read_synthetic(self, segment: Segment) -> Iterator[Chunk]:
        from skewless.pipelines.synthetic import synthetic_rows

        stop = self.config.rows if segment.stop < 0 else segment.stop
        for first, table in synthetic_rows(self.config.seed, segment.start, stop, ROW_CHUNK):
            yield self._finish(table, "synthetic", first + 1, raw_strings=None)

    # -- parquet

    def _read_parquet(self, segment: Segment) -> Iterator[Chunk]:
        import pyarrow.parquet as pq
        from apache_beam.io.filesystems import FileSystems

        with FileSystems.open(segment.path) as handle:
            parquet = pq.ParquetFile(handle)
            missing = [c.name for c in self.columns if c.name not in parquet.schema_arrow.names]
            if missing:
                raise InputError(f"{segment.path}: no column {', '.join(missing)} in the Parquet file")
            stop = parquet.metadata.num_rows if segment.stop < 0 else segment.stop
            row = 0
            for batch in parquet.iter_batches(batch_size=ROW_CHUNK, columns=[c.name for c in self.columns]):
                lo, hi = max(segment.start, row), min(stop, row + batch.num_rows)
                if lo < hi:
                    table = pa.Table.from_batches([batch.slice(lo - row, hi - lo)])
                    yield self._finish_typed(table, segment.path, lo + 1)
                row += batch.num_rows
                if row >= stop:
                    break

    # -- tfrecord of tf.train.Example

    def _read_tfrecord(self, segment: Segment) -> Iterator[Chunk]:
        import tensorflow as tf
        from tfx_bsl.coders import example_coder

        decoder = example_coder.ExamplesToRecordBatchDecoder()
        compression = "GZIP" if _is_gzip(segment.path) else ""
        dataset = tf.data.TFRecordDataset(segment.path, compression_type=compression)
        if segment.stop >= 0:
            dataset = dataset.take(segment.stop)
        dataset = dataset.skip(segment.start).batch(ROW_CHUNK)
        record = segment.start
        iterator = iter(dataset)
        while True:
            try:
                records = next(iterator).numpy().tolist()
            except StopIteration:
                return
            except tf.errors.OpError as error:
                raise InputError(
                    f"{segment.path}: corrupt TFRecord data after record {record}: "
                    f"{error.message.splitlines()[0]}"
                ) from None
            yield self._decode_examples(decoder, records, segment.path, record + 1)
            record += len(records)

    def _decode_examples(self, decoder, records: list[bytes], source: str, first: int) -> Chunk:
        try:
            batch = decoder.DecodeBatch(records)
        except Exception:
            # One undecodable record spoils the batch: find it (and any others) one by one.
            good, bad = [], []
            for i, record in enumerate(records):
                try:
                    decoder.DecodeBatch([record])
                    good.append(record)
                except Exception as error:
                    bad.append(BadRow(source, first + i, f"not a tf.train.Example: {error}", record[:200].hex()))
            chunk = self._decode_examples(decoder, good, source, first) if good else self._empty()
            chunk.bad = bad + chunk.bad
            return chunk
        arrays = {}
        bad: list[BadRow] = []
        keep = np.ones(batch.num_rows, dtype=bool)
        for column in self.columns:
            if column.name not in batch.schema.names:
                arrays[column.name] = pa.nulls(batch.num_rows, ARROW_TYPES[column.kind])
                continue
            values = batch.column(batch.schema.get_field_index(column.name))
            lengths = pc.fill_null(pc.list_value_length(values), 0).to_numpy(zero_copy_only=False)
            for i in np.flatnonzero(lengths > 1):
                keep[i] = False
                bad.append(BadRow(source, first + i, f"{column.name}: {lengths[i]} values, expected one", ""))
            # a row with no value becomes null; rows with several are dropped above
            flat_index = pc.list_parent_indices(values).to_numpy()
            flat = pc.list_flatten(values)
            dense = np.full(batch.num_rows, -1, dtype=np.int64)
            dense[flat_index] = np.arange(len(flat_index))
            taken = flat.take(pa.array(np.where(dense < 0, 0, dense), mask=dense < 0)) if len(flat) else (
                pa.nulls(batch.num_rows, flat.type)
            )
            try:
                arrays[column.name] = taken.cast(ARROW_TYPES[column.kind])
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise InputError(
                    f"{source}: feature {column.name} holds {flat.type} values, the schema says {column.kind}"
                ) from None
        table = pa.table(arrays)
        if not keep.all():
            table = table.filter(pa.array(keep))
        chunk = self._finish_typed(table, source, None)
        chunk.bad = bad + chunk.bad
        return chunk

    # -- csv

    def _read_csv(self, segment: Segment) -> Iterator[Chunk]:
        for block, first_line, line_offsets in _csv_blocks(segment, self.config.header):
            yield self._parse_csv_block(block, segment.path, first_line, line_offsets)

    def _csv_names(self) -> list[str]:
        return list(self.config.columns or [])

    def _parse_csv_block(self, block: bytes, source: str, first_line, line_offsets) -> Chunk:
        import pyarrow.csv as pacsv

        names = self._csv_names()
        invalid: list = []

        def on_invalid(row) -> str:
            invalid.append(row)
            return "skip"

        try:
            table = pacsv.read_csv(
                io.BytesIO(block),
                read_options=pacsv.ReadOptions(column_names=names, use_threads=False, block_size=len(block) + 1),
                parse_options=pacsv.ParseOptions(delimiter=self.config.delimiter, invalid_row_handler=on_invalid),
                convert_options=pacsv.ConvertOptions(
                    column_types={name: pa.binary() for name in names},
                    include_columns=names,
                    strings_can_be_null=False,
                    quoted_strings_can_be_null=False,
                ),
            )
        except pa.ArrowInvalid as error:
            raise InputError(f"{source}: cannot parse CSV near line {first_line()}: {error}") from None
        # Row k of the block (1-based among non-empty lines) -> its line number in the file.
        lines = line_offsets()
        bad = [
            BadRow(source, int(lines[row.number - 1]) if lines is not None else None,
                   f"expected {row.expected_columns} fields, found {row.actual_columns}", row.text)
            for row in invalid
        ]
        good_lines = None
        if lines is not None:
            keep = np.ones(len(lines), dtype=bool)
            keep[[row.number - 1 for row in invalid]] = False
            good_lines = lines[keep]
        chunk = self._finish(table, source, good_lines, raw_strings=table)
        chunk.bad = bad + chunk.bad
        return chunk

    # -- shared: typing, missing values, split keys

    def _empty(self) -> Chunk:
        empty = pa.table({c.name: pa.array([], ARROW_TYPES[c.kind]) for c in self.columns})
        return Chunk(empty, np.zeros(0, dtype=np.uint64))

    def _finish(self, table: pa.Table, source: str, lines, raw_strings: pa.Table | None) -> Chunk:
        """Types string columns (CSV) or passes typed ones through, then checks required values."""
        if raw_strings is None:
            return self._finish_typed(table, source, lines)
        n = table.num_rows
        bad_reason: dict[int, str] = {}
        typed = {}
        for column in self.columns:
            if column.name not in table.column_names:
                raise InputError(f"{source}: no column {column.name!r} in the CSV input")
            values = table.column(column.name).combine_chunks()
            if self.config.skip_initial_space:
                values = pc.utf8_ltrim_whitespace(values.cast(pa.string(), safe=False)).cast(pa.binary())
            values = pc.if_else(pc.equal(pc.binary_length(values), 0), pa.scalar(None, pa.binary()), values)
            typed[column.name], reasons = _convert(values, column)
            for index, reason in reasons.items():
                bad_reason.setdefault(index, reason)
        result = pa.table(typed)
        return self._finish_typed(result, source, lines, bad_reason, raw_strings)

    def _finish_typed(self, table: pa.Table, source: str, lines, bad_reason=None, raw_strings=None) -> Chunk:
        bad_reason = dict(bad_reason or {})
        for column in self.columns:
            if column.optional:
                continue
            missing = table.column(column.name).is_null().to_numpy(zero_copy_only=False)
            for index in np.flatnonzero(missing):
                bad_reason.setdefault(int(index), f"{column.name}: missing required value (no default)")
        for name, values in self.allowed.items():
            column = table.column(name)
            known = pc.is_in(column.cast(pa.binary()), value_set=pa.array([v.encode() for v in values], pa.binary()))
            unknown = pc.and_(pc.invert(known), column.is_valid()).to_numpy(zero_copy_only=False)
            for index in np.flatnonzero(unknown):
                value = column[int(index)].as_py()
                bad_reason.setdefault(int(index), f"{name}: {value!r} is not one of {values}")
        keys = self._split_keys(raw_strings if raw_strings is not None else table)
        if not bad_reason:
            return Chunk(table.select([c.name for c in self.columns]), keys)
        keep = np.ones(table.num_rows, dtype=bool)
        keep[list(bad_reason)] = False
        source_table = raw_strings if raw_strings is not None else table
        bad = [
            BadRow(source, _line_of(lines, index), reason, _render_row(source_table, index, self.config.delimiter))
            for index, reason in sorted(bad_reason.items())
        ]
        good = table.filter(pa.array(keep)).select([c.name for c in self.columns])
        return Chunk(good, keys[keep], bad)

    def _split_keys(self, table: pa.Table) -> np.ndarray:
        import pandas as pd

        names = [self.split_key] if self.split_key else [c.name for c in self.columns]
        missing = [name for name in names if name not in table.column_names]
        if missing:
            raise InputError(f"output.split_key {missing[0]!r} is not a column of the input")
        frame = pd.DataFrame({name: _as_hashable(table.column(name)) for name in names})
        return pd.util.hash_pandas_object(frame, index=False).to_numpy(dtype=np.uint64)


def _as_hashable(column: pa.ChunkedArray) -> np.ndarray:
    values = column.combine_chunks()
    if pa.types.is_binary(values.type) or pa.types.is_string(values.type):
        return values.cast(pa.binary()).to_numpy(zero_copy_only=False)
    return values.to_numpy(zero_copy_only=False)


def _convert(values: pa.Array, column: RawColumn) -> tuple[pa.Array, dict[int, str]]:
    """CSV text -> the column's type; rows that do not convert are reported, not dropped."""
    if column.kind == "bytes":
        return values, {}
    target = ARROW_TYPES[column.kind]
    text = values.cast(pa.string(), safe=False)
    try:
        return pc.cast(text, target), {}
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    valid = pc.fill_null(pc.match_substring_regex(text, _NUMBER_PATTERNS[column.kind]), True)
    if column.kind == "int":
        # digits that overflow int64 match the pattern but do not cast
        digits = pc.fill_null(pc.less_equal(pc.utf8_length(text), 18), True)
        valid = pc.and_(valid, digits)
    valid_np = valid.to_numpy(zero_copy_only=False)
    reasons = {
        int(i): f"{column.name}: {values[int(i)].as_py()!r} is not a {'n integer' if column.kind == 'int' else ' number'}"
        .replace("a n", "an").replace("a  ", "a ")
        for i in np.flatnonzero(~valid_np)
    }
    cleaned = pc.if_else(valid, text, pa.scalar(None, pa.string()))
    return pc.cast(cleaned, target), reasons


def _line_of(lines, index: int) -> int | None:
    if lines is None:
        return None
    if isinstance(lines, (int, np.integer)):
        return int(lines) + index
    return int(lines[index])


def _render_row(table: pa.Table, index: int, delimiter: str) -> str:
    fields = []
    for name in table.column_names:
        value = table.column(name)[index].as_py()
        if isinstance(value, bytes):
            value = value.decode("utf-8", errors="backslashreplace")
        fields.append("" if value is None else str(value))
    return delimiter.join(fields)


def _csv_blocks(segment: Segment, header: bool):
    """Yields (block bytes, first_line(), line_offsets()) for the lines a CSV segment owns.

    The two callables are lazy: line numbers need the newlines before the segment counted, which is
    only worth doing when a block has a bad row.
    """
    from apache_beam.io.filesystems import CompressionTypes, FileSystems

    compressed = _is_gzip(segment.path)
    handle = FileSystems.open(
        segment.path, compression_type=CompressionTypes.GZIP if compressed else CompressionTypes.UNCOMPRESSED
    )
    with handle:
        position = segment.start
        if segment.start > 0:
            handle.seek(segment.start - 1)
            position = segment.start - 1 + len(handle.readline())
        elif header:
            position = len(handle.readline())
        stop = segment.stop if segment.stop >= 0 else None
        carry = b""
        block_start = position  # file offset of the first byte of the next block
        while True:
            want = CSV_BLOCK_BYTES if stop is None else min(CSV_BLOCK_BYTES, max(stop - position, 0))
            data = handle.read(want) if want > 0 else b""
            position += len(data)
            at_end = not data or (stop is not None and position >= stop)
            if at_end:
                block = carry + data
                if block and not block.endswith(b"\n"):
                    # the last owned line runs past `stop`: read it to its end
                    block += handle.readline()
                carry = b""
            else:
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry += data
                    continue
                block, carry = carry + data[: cut + 1], data[cut + 1 :]
            if block:
                offset = block_start
                yield block, _first_line(segment.path, offset), _line_numbers(segment.path, offset, block)
                block_start = offset + len(block)
            if at_end:
                return


def _first_line(path: str, offset: int):
    return lambda: _lines_before(path, offset) + 1


def _line_numbers(path: str, offset: int, block: bytes):
    """A callable giving the 1-based line number of each non-empty line of `block`, starting at `offset`."""

    def compute() -> np.ndarray:
        data = np.frombuffer(block, dtype=np.uint8)
        ends = np.flatnonzero(data == 10)
        starts = np.concatenate([[0], ends + 1])[: len(ends) + (0 if block.endswith(b"\n") else 1)]
        line_ends = np.concatenate([ends, [len(block)]])[: len(starts)]
        lengths = line_ends - starts
        # pyarrow skips empty lines (a lone "\r" of a CRLF file counts as empty); they are not rows
        lone_cr = (lengths == 1) & (data[np.minimum(starts, max(len(data) - 1, 0))] == 13)
        nonblank = (lengths > 0) & ~lone_cr
        return (np.flatnonzero(nonblank) + 1 + _lines_before(path, offset)).astype(np.int64)

    return compute


def _lines_before(path: str, offset: int) -> int:
    from apache_beam.io.filesystems import CompressionTypes, FileSystems

    compression = CompressionTypes.GZIP if _is_gzip(path) else CompressionTypes.UNCOMPRESSED
    count, remaining = 0, offset
    with FileSystems.open(path, compression_type=compression) as handle:
        while remaining > 0:
            data = handle.read(min(remaining, CSV_BLOCK_BYTES))
            if not data:
                break
            count += data.count(b"\n")
            remaining -= len(data)
    return count
