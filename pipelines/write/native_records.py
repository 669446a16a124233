"""The Example encoder and TFRecord framing in C (`_native_records.c`), where the package was built with it.

Each takes a whole chunk in one call; None means "not here" (the module was not built, or a column is in a layout
the C code does not read), and the caller runs its Python code, which gives the same bytes
(tests/pipelines/test_native_records.py compares the two). The C code reads Arrow arrays through the Arrow C data
interface, so the columns are cast here to the few layouts it reads, exactly as the Python encoder converts them:
any list to large_list, any float to float32 and any integer to int64 (as NumPy's `astype` does: rounded to
nearest, wrapped), any binary or string to large_binary.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

try:
    from skewless.pipelines.write import _native_records
except ImportError:  # installed where no C compiler was found: setup.py builds the extension as optional
    _native_records = None

IMPLEMENTATION = "C" if _native_records is not None else "Python"


def encode(batch: pa.RecordBatch, sequence: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """The serialized Examples (SequenceExamples if `sequence`) of `batch`'s rows, its columns in the order given:
    (every record's bytes back to back as uint8, each record's length as int64), or None."""
    if _native_records is None or any("\0" in name for name in batch.schema.names):
        return None  # the C data interface's names end at a NUL
    for index, (name, column) in enumerate(zip(batch.schema.names, batch.columns)):
        native = _native_layout(column)
        if native is None:
            return None
        if native is not column:
            batch = batch.set_column(index, name, native)
    encoded = _native_records.encode(*batch.__arrow_c_array__(), sequence)
    if encoded is None:
        return None
    data, lengths = encoded
    return np.frombuffer(data, np.uint8), np.frombuffer(lengths, np.int64)


def frame(data: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
    """TFRecord's framing of the records `data` holds back to back, `lengths` long each: uint8, or None."""
    if _native_records is None:
        return None
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    records = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), len(lengths),
        [None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data, np.uint8))])
    framed = _native_records.frame(*records.__arrow_c_array__())
    return None if framed is None else np.frombuffer(framed, np.uint8)


def _native_layout(column: pa.Array) -> pa.Array | None:
    """`column` as large_list<float32 | int64 | large_binary>, or a large_list of those (a feature list)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)):
        return None
    inner = column.type.value_type
    nested = pa.types.is_list(inner) or pa.types.is_large_list(inner)
    values = _native_value_type(inner.value_type if nested else inner)
    if values is None:
        return None
    wanted = pa.large_list(pa.large_list(values) if nested else values)
    if column.type == wanted:
        return column
    try:
        return column.cast(wanted, safe=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a value type Arrow cannot cast so: the Python path's
        return None


def _native_value_type(value_type: pa.DataType) -> pa.DataType | None:
    if pa.types.is_floating(value_type):
        return pa.float32()
    if pa.types.is_integer(value_type):
        return pa.int64()
    if pa.types.is_binary(value_type) or pa.types.is_large_binary(value_type) or pa.types.is_string(value_type) \
            or pa.types.is_large_string(value_type):
        return pa.large_binary()
    return None
