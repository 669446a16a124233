"""tf.train.Example and tf.train.SequenceExample serialization of a batch of list columns, the same bytes on every run.

tfx_bsl's `RecordBatchToExamplesEncoder` writes each Example's feature map in hash order, and that
order changes from run to run (protobuf seeds its map hashing per process), so the same rows gave
shards with other bytes. Here the features are written sorted by name, exactly as protobuf's
deterministic serialization writes them, a whole batch per call: in C (`_native_records.c`, through
native_records.py) where the package was built with it, else with NumPy (no Python step per row); the same bytes.

Wire format (every field length-delimited: a tag byte ``field << 3 | 2``, a varint length, the bytes)::

    Example      { 1: Features }
    Features     { 1: FeatureEntry, repeated }          the map<string, Feature>
    FeatureEntry { 1: key, 2: Feature }
    Feature      { 1: BytesList | 2: FloatList | 3: Int64List }
    BytesList    { 1: bytes, repeated }   FloatList { 1: packed float32 }   Int64List { 1: packed varints }

An empty list is written as an empty list message, as protobuf writes it. A SequenceExample is::

    SequenceExample  { 1: Features (context), 2: FeatureLists }   each left out when the batch has no such column
    FeatureLists     { 1: FeatureListEntry, repeated }            the map<string, FeatureList>
    FeatureListEntry { 1: key, 2: FeatureList }
    FeatureList      { 1: Feature, repeated }                     one Feature per step
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from skewless.pipelines.write import native_records

_FIELD_1 = 0x0A
_FIELD_2 = 0x12
_LIST_TAGS = {"bytes": 0x0A, "float": 0x12, "int": 0x1A}
_VARINT_SHIFTS = np.arange(0, 70, 7, dtype=np.uint64)  # 10 groups of 7 bits hold any uint64
_VARINT_LIMITS = np.uint64(1) << _VARINT_SHIFTS[1:]  # a value at or above the k-th needs k + 1 bytes


@dataclass(frozen=True)
class Records:
    """Serialized records back to back: `data` (uint8) holds them all, `lengths` (int64) each one's size.

    The writer frames them as they are (`shards.ShardWriter.write_records`): no Python object per record.
    """

    data: np.ndarray
    lengths: np.ndarray

    def to_list(self) -> list[bytes]:
        ends = np.cumsum(self.lengths)
        buffer = self.data.tobytes()
        return [buffer[end - length : end] for end, length in zip(ends.tolist(), self.lengths.tolist())]


def encode_examples(batch: pa.RecordBatch) -> Records:
    """One serialized tf.train.Example per row of `batch`, whose columns are lists of float32, int64 or binary: in C
    where the package was built with it (native_records), else in Python; the same bytes."""
    native = native_records.encode(_sorted_columns(batch), sequence=False)
    return Records(*native) if native is not None else encode_examples_in_python(batch)


def encode_sequence_examples(batch: pa.RecordBatch) -> Records:
    """One serialized tf.train.SequenceExample per row of `batch`: its list columns are the context features,
    its list<list> columns (steps of values) the feature lists. In C where built, else in Python; the same bytes."""
    native = native_records.encode(_sorted_columns(batch), sequence=True)
    return Records(*native) if native is not None else encode_sequence_examples_in_python(batch)


def _sorted_columns(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The columns in protobuf's deterministic order of map keys (by name), the order the C encoder writes."""
    return batch.select(sorted(batch.schema.names))


def encode_examples_in_python(batch: pa.RecordBatch) -> Records:
    """`encode_examples` with NumPy over the whole batch."""
    rows = batch.num_rows
    entries = [_map_entry(name, *_feature_message(batch.column(name)), rows) for name in sorted(batch.schema.names)]
    return _serialized(_field(_FIELD_1, entries, rows), rows)


def encode_sequence_examples_in_python(batch: pa.RecordBatch) -> Records:
    """`encode_sequence_examples` with NumPy over the whole batch."""
    rows = batch.num_rows
    context, lists = [], []
    for name in sorted(batch.schema.names):
        column = batch.column(name)
        if _is_nested(column.type):
            lists.append(_map_entry(name, *_feature_list_message(column), rows))
        else:
            context.append(_map_entry(name, *_feature_message(column), rows))
    parts = []
    if context:
        parts += _field(_FIELD_1, context, rows)
    if lists:
        parts += _field(_FIELD_2, lists, rows)
    return _serialized(parts, rows)


def _is_nested(arrow_type: pa.DataType) -> bool:
    is_list = pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)
    return is_list and (pa.types.is_list(arrow_type.value_type) or pa.types.is_large_list(arrow_type.value_type))


def _serialized(parts: list, rows: int) -> Records:
    return Records(*concat_rows(parts, rows))


def _field(tag: int, entries: list[tuple[list, np.ndarray]], rows: int) -> list:
    """A message field made of messages (each: its parts, each row's length): tag, length, their bytes."""
    length = np.zeros(rows, dtype=np.int64)
    parts = []
    for entry_parts, entry_length in entries:
        parts.extend(entry_parts)
        length += entry_length
    return [_constant(tag, rows), _varints(length), *parts]


def _map_entry(name: str, value_parts: list, value_length: np.ndarray, rows: int) -> tuple[list, np.ndarray]:
    """The parts of one map entry per row ({1: name, 2: value}, its tag and length included), and its length per row."""
    value_length_varint = _varints(value_length)
    key = name.encode()
    key_field = bytes([_FIELD_1]) + _varint_bytes(len(key)) + key + bytes([_FIELD_2])
    entry_length = len(key_field) + value_length_varint[1] + value_length
    entry_length_varint = _varints(entry_length)
    parts = [
        _constant(_FIELD_1, rows),
        entry_length_varint,
        (np.tile(np.frombuffer(key_field, np.uint8), rows), np.full(rows, len(key_field), np.int64)),
        value_length_varint,
        *value_parts,
    ]
    return parts, 1 + entry_length_varint[1] + entry_length


def _feature_list_message(column: pa.Array) -> tuple[list, np.ndarray]:
    """A FeatureList per row of a list<list> column: one Feature per step (a field 1 each), and their lengths."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    offsets = column.offsets.to_numpy().astype(np.int64)
    steps = column.values.slice(offsets[0], offsets[-1] - offsets[0])
    # every step's bytes, step after step: each row's steps are one run of them
    step_data, step_length = concat_rows(_field(_FIELD_1, [_feature_message(steps)], len(steps)), len(steps))
    row_length = _per_row(step_length, offsets - offsets[0])
    return [(step_data, row_length)], row_length


def _feature_message(column: pa.Array) -> tuple[list, np.ndarray]:
    """The parts of a Feature message per row of a list column, and each row's Feature length."""
    kind, offsets, data, data_length = _payload(column)
    rows = len(offsets) - 1
    if kind == "bytes":
        list_parts = [(data, data_length)]
        list_length = data_length
    else:
        # a packed field: tag, length, values; left out when the row has no values
        present = (np.diff(offsets) > 0).astype(np.int64)
        packed_length = _varints(data_length)
        list_parts = [(np.full(int(present.sum()), _FIELD_1, np.uint8), present),
                      _masked(packed_length, present), (data, data_length)]
        list_length = present * (1 + packed_length[1]) + data_length
    list_length_varint = _varints(list_length)
    parts = [_constant(_LIST_TAGS[kind], rows), list_length_varint, *list_parts]
    return parts, 1 + list_length_varint[1] + list_length


def _payload(column: pa.Array) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    """(kind, row offsets into the values, the list fields' content for all rows, each row's share of it)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    offsets = column.offsets.to_numpy().astype(np.int64)
    values = column.values.slice(offsets[0], offsets[-1] - offsets[0])
    offsets = offsets - offsets[0]
    if pa.types.is_floating(values.type):
        data = np.ascontiguousarray(values.to_numpy(zero_copy_only=False), dtype="<f4").view(np.uint8)
        return "float", offsets, data, 4 * np.diff(offsets)
    if pa.types.is_integer(values.type):
        data, value_lengths = _varints(values.to_numpy(zero_copy_only=False).astype(np.int64))
        return "int", offsets, data, _per_row(value_lengths, offsets)
    # bytes: every value is a field of its own (tag, length, bytes), not packed
    values = values.cast(pa.large_binary())
    value_offsets = np.frombuffer(values.buffers()[1], np.int64)[values.offset : values.offset + len(values) + 1]
    sizes = np.diff(value_offsets)
    raw = np.frombuffer(values.buffers()[2] or b"", np.uint8)[value_offsets[0] : value_offsets[-1]]
    data, value_lengths = concat_rows([_constant(_FIELD_1, len(values)), _varints(sizes), (raw, sizes)], len(values))
    return "bytes", offsets, data, _per_row(value_lengths, offsets)


def _per_row(value_lengths: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sums of per-value lengths over each row's values."""
    cumulative = np.concatenate([[0], np.cumsum(value_lengths, dtype=np.int64)])
    return cumulative[offsets[1:]] - cumulative[offsets[:-1]]


def _varints(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Protobuf varints of int64 values (negative ones as their 10-byte two's complement): bytes and lengths."""
    unsigned = np.asarray(values, dtype=np.int64).view(np.uint64)
    lengths = 1 + np.searchsorted(_VARINT_LIMITS, unsigned, side="right").astype(np.int64)
    width = int(lengths.max()) if len(lengths) else 1
    if width == 1:  # lengths and small ids: one byte each
        return unsigned.astype(np.uint8), lengths
    groups = ((unsigned[:, None] >> _VARINT_SHIFTS[:width]) & np.uint64(0x7F)).astype(np.uint8)
    position = np.arange(width)
    groups[position[None, :] < (lengths[:, None] - 1)] |= 0x80
    return groups[position[None, :] < lengths[:, None]], lengths


def _varint_bytes(value: int) -> bytes:
    data, _ = _varints(np.array([value], dtype=np.int64))
    return data.tobytes()


def _constant(byte: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full(rows, byte, dtype=np.uint8), np.ones(rows, dtype=np.int64)


def _masked(part: tuple[np.ndarray, np.ndarray], keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A part with the rows where `keep` is 0 emptied."""
    data, lengths = part
    per_byte = np.repeat(keep.astype(bool), lengths)
    return data[per_byte], lengths * keep


def concat_rows(parts: list[tuple[np.ndarray, np.ndarray]], rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the bytes of every part for that row, one after the other; and the rows' lengths.

    Each part is (its bytes for all rows in row order, each row's share of them).
    """
    lengths = np.zeros(rows, dtype=np.int64)
    for _, part_lengths in parts:
        lengths += part_lengths
    widths = [int(part_lengths[0]) if rows else 0 for _, part_lengths in parts]
    if rows and all((part_lengths == width).all() for (_, part_lengths), width in zip(parts, widths)):
        # every part is as long in every row (tabular features of one value each): rows of a 2-D array
        table = np.concatenate([data.reshape(rows, width) for (data, _), width in zip(parts, widths)], axis=1)
        return table.ravel(), lengths
    out = np.empty(int(lengths.sum()), dtype=np.uint8)
    row_starts = np.cumsum(lengths) - lengths
    filled = np.zeros(rows, dtype=np.int64)
    for data, part_lengths in parts:
        starts = row_starts + filled
        width = int(part_lengths[0]) if rows else 0
        if rows and (part_lengths == width).all():  # tags, keys, one-byte varints: a 2-D write, no index per byte
            out[starts[:, None] + np.arange(width)] = data.reshape(rows, width)
        elif 8 * len(data) >= len(out):
            # most of the output (strings, records being framed): mark its bytes with one running sum over
            # the output, rather than an 8-byte index per byte
            edges = np.zeros(len(out) + 1, dtype=np.int8)
            present = part_lengths > 0
            edges[starts[present]] += 1
            edges[starts[present] + part_lengths[present]] -= 1
            out[np.cumsum(edges[:-1], dtype=np.int8).view(bool)] = data
        else:
            sources = np.cumsum(part_lengths) - part_lengths
            out[np.repeat(starts - sources, part_lengths) + np.arange(len(data))] = data
        filled += part_lengths
    return out, lengths
