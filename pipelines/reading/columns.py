"""The raw columns a job feeds to tf.Transform, and their tf.Example / Arrow / tf.metadata forms.

A column with a `default` (or `fill`) in the config may be missing in a row: it is a `VarLenFeature` (0 or 1
value) and the graph fills the default, so serving fills it the same way. A list column (`list: true`)
is a `VarLenFeature` too, of any number of values. A column of a fixed shape (`shape: [d0, d1, ...]`) is read
as a list too, of exactly d0 * d1 * ... values (row-major), and is a required `FixedLenFeature(shape)`: the
graph sees a dense (batch, d0, d1, ...) tensor. Every other column is a required `FixedLenFeature([])`: a row
without a value there goes to quarantine.

A feature list of `tf.train.SequenceExample` input (`sequence: true`) is a list of steps per row, each
step 0..n values: an Arrow list<list<kind>> column, a (batch, steps, values) `tf.RaggedTensor` in the
graph. The raw schema then has TFX's SequenceExample form: the feature lists are the children of a
STRUCT feature ``##SEQUENCE##``, and every feature gets an explicit TensorRepresentation (see
`skewless.sequence_specs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from tensorflow_metadata.proto.v0 import schema_pb2

from skewless.lazy_imports import lazy_import
from skewless.sequence_specs import SEQUENCE_COLUMN

# on first use: the CLI reads input heads with this module before it imports TensorFlow (issue 42 item 2)
tf = lazy_import("tensorflow")
tft_metadata = lazy_import("tensorflow_transform.tf_metadata")
tensor_adapter = lazy_import("tfx_bsl.tfxio.tensor_adapter")
tensor_representation_util = lazy_import("tfx_bsl.tfxio.tensor_representation_util")

KINDS = ("int", "float", "bytes")
ARROW_TYPES = {"int": pa.int64(), "float": pa.float32(), "bytes": pa.binary()}


@dataclass(frozen=True)
class RawColumn:
    name: str
    kind: str  # "int" | "float" | "bytes"
    optional: bool = False
    default: Any = None
    is_list: bool = False  # read as an Arrow list column: 0..n values per row (optional), or `shape`'s values
    image: bool = False  # encoded images (transform: image): bytes that do not start like one go to quarantine
    sequence: bool = False  # a SequenceExample feature list: steps of 0..n values per row, always optional
    # a fixed shape (`shape: [d0, ...]`): a list of exactly d0 * ... values per row, required; None: no fixed shape
    shape: tuple[int, ...] | None = None

    def tf_dtype(self):
        return {"int": tf.int64, "float": tf.float32, "bytes": tf.string}[self.kind]

    def feature_spec(self):
        if self.sequence:
            return tf.io.RaggedFeature(self.tf_dtype(), value_key=self.name, row_splits_dtype=tf.int64)
        if self.shape is not None:
            return tf.io.FixedLenFeature(list(self.shape), self.tf_dtype())
        if self.optional:
            return tf.io.VarLenFeature(self.tf_dtype())
        return tf.io.FixedLenFeature([], self.tf_dtype())


def column_of_spec(name: str, spec) -> RawColumn:
    """The raw column an entry of a raw feature spec reads (a run's graph or an export names them): optional for
    a `VarLenFeature`, a fixed shape for a `FixedLenFeature` of one (read as a list of its values)."""
    kind = {"int64": "int", "float32": "float", "string": "bytes"}[spec.dtype.name]
    shape = tuple(spec.shape) if isinstance(spec, tf.io.FixedLenFeature) and list(spec.shape) else None
    return RawColumn(name, kind, optional=isinstance(spec, tf.io.VarLenFeature), is_list=shape is not None,
                     shape=shape)


def values_type(arrow_type: pa.DataType) -> pa.DataType:
    """The type of the values of a list type, however deep; a type that is no list as it is."""
    while pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        arrow_type = arrow_type.value_type
    return arrow_type


def arrow_kind(arrow_type: pa.DataType) -> str:
    """The kind a column of `arrow_type` (or lists of it) is read as: whole numbers and booleans "int",
    floats "float", anything else "bytes"."""
    arrow_type = values_type(arrow_type)
    if pa.types.is_integer(arrow_type) or pa.types.is_boolean(arrow_type):
        return "int"
    if pa.types.is_floating(arrow_type):
        return "float"
    return "bytes"


def raw_feature_spec(columns: list[RawColumn]) -> dict:
    return {column.name: column.feature_spec() for column in columns}


def raw_schema(columns: list[RawColumn]):
    """The tf.metadata Schema of the raw columns, as tf.Transform records it next to the graph.

    With feature lists it is TFX's SequenceExample schema: the context columns, a STRUCT holding the
    feature lists, and a TensorRepresentation per feature (a ragged tensor for each feature list).
    """
    context = [c for c in columns if not c.sequence]
    schema = tft_metadata.schema_utils.schema_from_feature_spec(raw_feature_spec(context))
    sequences = [c for c in columns if c.sequence]
    if not sequences:
        return schema
    representations = tensor_representation_util.InferTensorRepresentationsFromSchema(schema)
    struct = schema.feature.add(name=SEQUENCE_COLUMN, type=schema_pb2.STRUCT)
    types = {"int": schema_pb2.INT, "float": schema_pb2.FLOAT, "bytes": schema_pb2.BYTES}
    for column in sequences:
        struct.struct_domain.feature.add(name=column.name, type=types[column.kind])
        representations[column.name] = schema_pb2.TensorRepresentation(
            ragged_tensor=schema_pb2.TensorRepresentation.RaggedTensor(
                feature_path={"step": [SEQUENCE_COLUMN, column.name]}
            )
        )
    tensor_representation_util.SetTensorRepresentationsInSchema(schema, representations)
    return schema


def tensor_adapter_config(columns: list[RawColumn]):
    """How tfx_bsl turns `to_record_batch` batches into the graph's input tensors."""
    return tensor_adapter.TensorAdapterConfig(
        arrow_schema(columns),
        tensor_representation_util.InferTensorRepresentationsFromMixedSchema(raw_schema(columns)),
    )


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
    """Typed flat columns (list columns already lists) -> the RecordBatch of list columns tf.Transform reads.

    Feature lists go into one struct column, as tfx_bsl's SequenceExample decoder gives them.
    """
    context = [c for c in columns if not c.sequence]
    arrays = [table.column(c.name).combine_chunks() if c.is_list else to_list_array(table.column(c.name).combine_chunks())
              for c in context]
    names = [c.name for c in context]
    sequences = [c for c in columns if c.sequence]
    if sequences:
        # tfx_bsl reads raw offsets and refuses sliced arrays: each nested column is rebuilt from offset 0
        nested = [_unsliced(table.column(c.name).combine_chunks()) for c in sequences]
        arrays.append(pa.StructArray.from_arrays(nested, [c.name for c in sequences]))
        names.append(SEQUENCE_COLUMN)
    return pa.RecordBatch.from_arrays(arrays, names)


def arrow_schema(columns: list[RawColumn]) -> pa.Schema:
    fields = [pa.field(c.name, pa.list_(ARROW_TYPES[c.kind])) for c in columns if not c.sequence]
    sequences = [pa.field(c.name, pa.list_(pa.list_(ARROW_TYPES[c.kind]))) for c in columns if c.sequence]
    if sequences:
        fields.append(pa.field(SEQUENCE_COLUMN, pa.struct(sequences)))
    return pa.schema(fields)


def _unsliced(column: pa.Array) -> pa.Array:
    """A list<list<T>> column as fresh arrays whose offsets start at 0 (what a take or filter may not give)."""
    steps = column.flatten()
    outer = np.asarray(column.offsets) - column.offsets[0].as_py()
    inner = np.asarray(steps.offsets) - steps.offsets[0].as_py()
    values = steps.flatten()
    return pa.ListArray.from_arrays(pa.array(outer.astype(np.int32)),
                                    pa.ListArray.from_arrays(pa.array(inner.astype(np.int32)), values))
