"""Parquet files: rows a batch at a time, every column made plain (`plain_column`), read through Beam's filesystems.

Parquet compresses inside the file, so it is never gunzipped. A file Arrow cannot read is an `InputError`.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from skewless.config import InputConfig
from skewless.errors import InputError
from skewless.pipelines.reading.columns import arrow_kind
from skewless.pipelines.reading.batches import SourceBatch, row_as_json
from skewless.pipelines.reading.files import open_input
from skewless.pipelines.reading.format import ROW_CHUNK, InputFormat, Segment


@contextmanager
def parquet_file(path: str):
    """The file as a `pyarrow.parquet.ParquetFile`; Arrow's errors while reading it are `InputError`s."""
    with open_input(path, gunzip=False) as handle:
        try:
            yield pq.ParquetFile(handle)
        except (pa.ArrowException, OSError) as error:
            raise InputError(f"{path}: cannot read Parquet: {error}") from None


def parquet_batches(path: str, batch_rows: int, columns: Sequence[str] | None = None, optional: Sequence[str] = (),
                    start: int = 0, stop: int = -1) -> Iterator[SourceBatch]:
    """Rows `start` to `stop - 1` (0-based; -1: to the end) of a file, up to `batch_rows` a batch, made plain.

    `columns` (all when None) must be in the file; `optional` ones are read too where they are.
    """
    with parquet_file(path) as parquet:
        names = parquet.schema_arrow.names
        if columns is not None:
            missing = [name for name in columns if name not in names]
            if missing:
                raise InputError(f"{path}: no column {', '.join(missing)} in the Parquet file")
            columns = [*columns, *(name for name in optional if name not in columns and name in names)]
        stop = parquet.metadata.num_rows if stop < 0 else stop
        row = 0
        for batch in parquet.iter_batches(batch_size=batch_rows, columns=columns):
            lo, hi = max(start, row), min(stop, row + batch.num_rows)
            if lo < hi:
                numbers = np.arange(lo + 1, hi + 1, dtype=np.int64)
                yield SourceBatch(path, "record", plain_batch(batch.slice(lo - row, hi - lo), path), numbers)
            row += batch.num_rows
            if row >= stop:
                break


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


class ParquetFormat(InputFormat):
    """Parquet files, cut by rows; typed columns made plain (`plain_column`)."""

    def sizes(self, config: InputConfig, paths: list[str]) -> list[int]:
        sizes = []
        for path in paths:
            with parquet_file(path) as parquet:
                sizes.append(parquet.metadata.num_rows)
        return sizes

    def read(self, reader, segment: Segment):
        names = [c.name for c in reader.columns]
        optional = [reader.split_key] if reader.split_key else []
        for part in parquet_batches(segment.path, ROW_CHUNK, names, optional, segment.start, segment.stop):
            yield reader.chunk(part.batch, part.numbers, [], segment.path, row_as_json(part.batch))

    def batches(self, config: InputConfig, paths: list[str], batch_rows: int) -> Iterator[SourceBatch]:
        for path in paths:
            yield from parquet_batches(path, batch_rows)

    def infer_types(self, config: InputConfig, paths: list[str], lists=(), wanted=None) -> dict[str, str]:
        """A column of a type `plain_type` refuses is an error only when `wanted` (names) holds it: columns the
        job does not read may have any type."""
        with parquet_file(paths[0]) as parquet:
            arrow = parquet.schema_arrow
        kinds = {}
        for field in arrow:
            try:
                kinds[field.name] = arrow_kind(plain_type(field.type, f"{paths[0]}: column {field.name!r}"))
            except InputError:
                if wanted is None or field.name in wanted:
                    raise
        return kinds

    def copy_head(self, path: str, target: str, rows: int) -> bool:
        with parquet_file(path) as parquet:
            pq.write_table(parquet.read().slice(0, rows), target)
        return True

    def list_columns(self, config: InputConfig, paths: list[str]) -> dict[str, str]:
        with parquet_file(paths[0]) as parquet:
            arrow = parquet.schema_arrow
        return {field.name: str(field.type) for field in arrow
                if pa.types.is_list(field.type) or pa.types.is_large_list(field.type)
                or pa.types.is_fixed_size_list(field.type)}

    def check_columns(self, config: InputConfig, paths: list[str], names: list[str]) -> None:
        for path in paths:
            with parquet_file(path) as parquet:
                arrow = parquet.schema_arrow
            for field in arrow:
                if field.name in names:
                    plain_type(field.type, f"{path}: column {field.name!r}")


FORMAT = ParquetFormat()
