"""TFRecord files of tf.train.Example or SequenceExample: records read strictly, decoded to Arrow by tfx_bsl.

tf.data's `TFRecordDataset` ends without an error on some damage (a file cut inside a record's data,
a gzip stream that stops early), which would drop the rest of a file silently. Here any damage is an
`InputError` naming the file, the record number (1-based) and its byte offset (in the uncompressed stream for
gzip files); a gzip stream cut short or failing its own CRC is one too (`files.open_input`).

A record is: uint64 length, uint32 masked CRC32C of those 8 bytes, the data, uint32 masked CRC32C
of the data (little endian), as `tf.io.TFRecordWriter` and `shards.ShardWriter` write them. A record
that frames well but is not an Example is a `RejectedRow`, not an error: the job quarantines it.
"""

from __future__ import annotations

import collections
import struct
from typing import BinaryIO, Iterator

import numpy as np
import pyarrow as pa

from skewless.config import InputConfig
from skewless.errors import InputError
from skewless.lazy_imports import lazy_import
from skewless.pipelines.reading.columns import arrow_kind, values_type
from skewless.pipelines.reading.batches import RejectedRow, SourceBatch
from skewless.pipelines.reading.files import GunzippedFile, open_input
from skewless.pipelines.reading.format import ROW_CHUNK, InputFormat, Segment
from skewless.pipelines.reading.sequence_input import lift_feature_lists
from skewless.pipelines.output.tfrecord_crc import masked_crc
from skewless.schemas.row_checks import RowProblem
from skewless.sequence_specs import SEQUENCE_COLUMN

# on first use: the CLI reads input heads with this module before it imports TensorFlow (issue 42 item 2)
example_coder = lazy_import("tfx_bsl.coders.example_coder")
sequence_example_coder = lazy_import("tfx_bsl.coders.sequence_example_coder")
tf = lazy_import("tensorflow")

READ_BYTES = 1 << 20
_HEADER = 12
_FOOTER = 4
# Bad records are kept in quarantine by their first bytes, in hex.
RAW_RECORD_BYTES = 200
SAMPLE_RECORDS = 1000  # column types are inferred from the first records of the first file


def tfrecord_batches(path: str, batch_rows: int, record: str = "example", start: int = 0,
                     stop: int = -1) -> Iterator[SourceBatch]:
    """Records `start` to `stop - 1` (0-based; -1: to the end) of a file, decoded, up to `batch_rows` a batch.

    `record` is "example" or "sequence_example" (`record_decoder`); each batch keeps its records' bytes.
    """
    decoder, message = record_decoder(record)
    first = start + 1  # 1-based number of records[0]
    records: list[bytes] = []
    for data in read_records(path, start, stop):
        records.append(data)
        if len(records) == batch_rows:
            yield from decode_examples(decoder, records, path, first, message)
            first += len(records)
            records = []
    if records:
        yield from decode_examples(decoder, records, path, first, message)


def read_records(path: str, start: int = 0, stop: int = -1) -> Iterator[bytes]:
    """The data of records `start` to `stop - 1` (0-based; `stop` -1: to the end) of a TFRecord file.

    Records before `start` are framed and their length checked, not their data.
    """
    with open_input(path) as handle:
        for index, data in _frames(handle, path, check_from=start, stop=stop):
            if index >= start:
                yield data


def count_records(path: str) -> int:
    """How many records the file holds, having checked every one."""
    count = 0
    with open_input(path) as handle:
        for count, _ in enumerate(_frames(handle, path, check_from=0, stop=-1), start=1):
            pass
    return count


def _frames(handle: BinaryIO, path: str, check_from: int, stop: int) -> Iterator[tuple[int, bytes | None]]:
    """(index, data) per record up to `stop` (-1: all); data is None (not copied, not checked) before `check_from`."""
    where = "uncompressed byte" if isinstance(handle, GunzippedFile) else "byte"
    buffer, position, base, index = b"", 0, 0, 0  # base: stream offset of buffer[0]
    at_end = False
    while stop < 0 or index < stop:
        if len(buffer) - position < _HEADER:
            if at_end:
                break
            buffer, base, position = buffer[position:], base + position, 0
            chunk = handle.read(READ_BYTES)
            at_end = not chunk
            buffer += chunk
            continue
        header = buffer[position : position + 8]
        (length,) = struct.unpack_from("<Q", buffer, position)
        (header_crc,) = struct.unpack_from("<I", buffer, position + 8)
        if masked_crc(header) != header_crc:
            raise InputError(
                f"{path}: record {index + 1} at {where} {base + position}: its length fails the CRC check (corrupt file)"
            )
        size = _HEADER + length + _FOOTER
        while len(buffer) - position < size and not at_end:
            buffer, base, position = buffer[position:], base + position, 0
            chunk = handle.read(max(READ_BYTES, size - len(buffer)))
            at_end = not chunk
            buffer += chunk
        if len(buffer) - position < size:
            raise InputError(
                f"{path}: record {index + 1} at {where} {base + position}: the file ends inside it "
                f"({len(buffer) - position} of {size} bytes; truncated file)"
            )
        data = None
        if index >= check_from:
            data = buffer[position + _HEADER : position + _HEADER + length]
            (data_crc,) = struct.unpack_from("<I", buffer, position + _HEADER + length)
            if masked_crc(data) != data_crc:
                raise InputError(
                    f"{path}: record {index + 1} at {where} {base + position}: its data fails the CRC check (corrupt record)"
                )
        yield index, data
        position += size
        index += 1
    if len(buffer) > position and index != stop:
        raise InputError(
            f"{path}: record {index + 1} at {where} {base + position}: the file ends inside its header "
            f"({len(buffer) - position} of {_HEADER} bytes; truncated file)"
        )


def record_decoder(record: str = "example"):
    """(tfx_bsl decoder, message name) for TFRecords of `record` ("example" or "sequence_example").

    A SequenceExample decodes to its context features as list columns and its feature lists as
    list<list> columns of one struct column, ``skewless.sequence_specs.SEQUENCE_COLUMN``.
    """
    if record == "sequence_example":
        decoder = sequence_example_coder.SequenceExamplesToRecordBatchDecoder(SEQUENCE_COLUMN)
        return decoder, "tf.train.SequenceExample"
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
    numbers = np.arange(first, first + len(serialized), dtype=np.int64)
    yield SourceBatch(path, "record", batch, numbers, raw=serialized.__getitem__)


def _decode_one_by_one(decoder, serialized: list[bytes], path: str, first: int, message: str) -> Iterator[SourceBatch]:
    """Finds the records that do not decode, one by one, then decodes the others together: one batch, as if
    the culprits had not been there (rows grouped alike whatever else the file holds)."""
    rejected, good = [], []
    for offset, record in enumerate(serialized):
        try:
            decoder.DecodeBatch([record])
        except RuntimeError as error:
            detail = str(error).splitlines()[0] if str(error) else "cannot parse"
            problem = RowProblem("undecodable", None, f"not a {message}: {detail}")
            rejected.append(RejectedRow(first + offset, record, problem))
            continue
        good.append(offset)
    records = [serialized[offset] for offset in good]
    try:
        batch = decoder.DecodeBatch(records) if records else pa.RecordBatch.from_arrays([], [])
    except RuntimeError:
        # each decodes alone, not together: a feature's kind differs between them; each is its own batch then
        for offset in good:
            yield SourceBatch(path, "record", decoder.DecodeBatch([serialized[offset]]),
                              np.array([first + offset], dtype=np.int64), raw=[serialized[offset]].__getitem__)
        batch, records = None, []
    if records:
        yield SourceBatch(path, "record", batch, first + np.array(good, dtype=np.int64), raw=records.__getitem__)
    if rejected:
        yield SourceBatch(path, "record", pa.RecordBatch.from_arrays([], []), np.zeros(0, dtype=np.int64), rejected)


class TfrecordFormat(InputFormat):
    """TFRecord files of tf.train.Example or SequenceExample, cut by records (counting them checks every one)."""

    def sizes(self, config: InputConfig, paths: list[str]) -> list[int]:
        return [count_records(p) for p in paths]

    def read(self, reader, segment: Segment):
        def hex_head(record: bytes) -> str:
            return record[:RAW_RECORD_BYTES].hex()

        record = reader.config.record
        for decoded in tfrecord_batches(segment.path, ROW_CHUNK, record, segment.start, segment.stop):
            batch, misplaced = _with_columns(decoded.batch, [c.name for c in reader.columns if not c.sequence]), {}
            if record == "sequence_example":
                batch, misplaced = lift_feature_lists(batch, reader.columns)
            yield reader.chunk(
                batch, decoded.numbers, decoded.rejected, segment.path,
                lambda row, raw=decoded.raw: hex_head(raw(row)), raw_rejected=hex_head, problems=misplaced,
            )

    def batches(self, config: InputConfig, paths: list[str], batch_rows: int) -> Iterator[SourceBatch]:
        for path in paths:
            yield from tfrecord_batches(path, batch_rows, config.record)

    def infer_types(self, config: InputConfig, paths: list[str], lists=(), wanted=None) -> dict[str, str]:
        """Kinds of the features (context features and feature lists alike) of the file's first records."""
        path = paths[0]
        records = list(read_records(path, 0, SAMPLE_RECORDS))  # damage is an InputError with the offset
        decoder, message = record_decoder(config.record)
        # records that do not decode are left out here (the job quarantines them)
        batches = [source.batch for source in decode_examples(decoder, records, path, 1, message)
                   if source.batch.num_rows]
        if records and not batches:
            raise InputError(f"{path}: none of the first {len(records)} records is a {message}")
        # a feature's kind is the one most of its records hold, as a CSV column's type is its values' majority
        # ("Types without a schema"): the records of another kind are then quarantined, not a crash here
        rows: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for batch in batches:
            fields = [field for field in batch.schema if field.name != SEQUENCE_COLUMN]
            if SEQUENCE_COLUMN in batch.schema.names:
                fields += list(batch.schema.field(SEQUENCE_COLUMN).type)
            for field in fields:
                if not pa.types.is_null(values_type(field.type)):  # a feature with no value in any of these records
                    rows[field.name][arrow_kind(field.type)] += batch.num_rows
        names = dict.fromkeys(field.name for batch in batches for field in batch.schema
                              if field.name != SEQUENCE_COLUMN)
        names.update(dict.fromkeys(rows))  # in the order the records first name them, feature lists last
        return {name: rows[name].most_common(1)[0][0] if rows[name] else "bytes" for name in names}


    def copy_head(self, path: str, target: str, rows: int) -> bool:
        with tf.io.TFRecordWriter(target) as writer:
            for record in read_records(path, 0, rows):
                writer.write(record)
        return True


def _with_columns(batch: pa.RecordBatch, names: list[str]) -> pa.RecordBatch:
    """`batch` with a column of nulls for each of `names` it lacks.

    A record batch without columns has no rows: an Example with no features (b"") decoded alone would vanish,
    uncounted, instead of being judged (and quarantined for its missing values).
    """
    absent = [name for name in names if name not in batch.schema.names]
    if not absent:
        return batch
    arrays = [*batch.columns, *(pa.nulls(batch.num_rows) for _ in absent)]
    return pa.RecordBatch.from_arrays(arrays, [*batch.schema.names, *absent])


FORMAT = TfrecordFormat()
