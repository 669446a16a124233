"""The raw columns a job feeds to tf.Transform, and their tf.Example / Arrow / tf.metadata forms.

A column with a `default` (or `fill`) in the config may be missing in a row: it is a `VarLenFeature` (0 or 1
value) and the graph fills the default, so serving fills it the same way. A list column (`list: true`)
is a `VarLenFeature` too, of any number of values. Every other column is a required
`FixedLenFeature([])`: a row without a value there goes to quarantine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

KINDS = ("int", "float", "bytes")
ARROW_TYPES = {"int": pa.int64(), "float": pa.float32(), "bytes": pa.binary()}


@dataclass(frozen=True)
class RawColumn:
    name: str
    kind: str  # "int" | "float" | "bytes"
    optional: bool = False
    default: Any = None
    is_list: bool = False  # 0..n values per row (an Arrow list column), always optional
    image: bool = False  # encoded images (transform: image): bytes that do not start like one go to quarantine

    def tf_dtype(self):
        import tensorflow as tf

        return {"int": tf.int64, "float": tf.float32, "bytes": tf.string}[self.kind]

    def feature_spec(self):
        import tensorflow as tf

        if self.optional:
            return tf.io.VarLenFeature(self.tf_dtype())
        return tf.io.FixedLenFeature([], self.tf_dtype())


def raw_feature_spec(columns: list[RawColumn]) -> dict:
    return {column.name: column.feature_spec() for column in columns}


def raw_schema(columns: list[RawColumn]):
    """The tf.metadata Schema of the raw columns, as tf.Transform records it next to the graph."""
    from tensorflow_transform.tf_metadata import schema_utils

    return schema_utils.schema_from_feature_spec(raw_feature_spec(columns))


def to_list_array(values: pa.Array) -> pa.Array:
    """A flat Arrow array with nulls -> a list array with one value per row, or none for a null.

    tfx_bsl's tensor adapters read list columns: a dense feature needs exactly one value per row, a
    var-len one takes zero (missing) or one.
    """
    valid = np.ones(len(values), dtype=bool) if values.null_count == 0 else values.is_valid().to_numpy(
        zero_copy_only=False
    )
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum(valid, out=offsets[1:])
    flat = values if values.null_count == 0 else values.filter(pa.array(valid))
    return pa.ListArray.from_arrays(pa.array(offsets), flat)


def to_record_batch(table: pa.Table, columns: list[RawColumn]) -> pa.RecordBatch:
    """Typed flat columns (list columns already lists) -> the RecordBatch of list columns tf.Transform reads."""
    arrays = [table.column(c.name).combine_chunks() if c.is_list else to_list_array(table.column(c.name).combine_chunks())
              for c in columns]
    return pa.RecordBatch.from_arrays(arrays, [c.name for c in columns])


def arrow_schema(columns: list[RawColumn]) -> pa.Schema:
    return pa.schema([pa.field(c.name, pa.list_(ARROW_TYPES[c.kind])) for c in columns])
