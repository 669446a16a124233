"""The job's tf.train.Example encoder writes protobuf's canonical (deterministic) bytes for any list columns."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skewless.pipelines.write.example_encoder import encode_examples, encode_examples_in_python

# the C encoder where it was built (native_records), and the Python fallback
ENCODERS = pytest.mark.parametrize("encode", [encode_examples, encode_examples_in_python], ids=["default", "python"])

INT64 = st.integers(-(2**63), 2**63 - 1)
FLOAT32 = st.floats(width=32, allow_nan=False)
KINDS = {
    "int": (INT64, pa.int64()),
    "float": (FLOAT32, pa.float32()),
    "bytes": (st.binary(max_size=300), pa.binary()),
}


def no_name_prefixes_another(names) -> bool:
    return not any(a != b and b.startswith(a) for a in names for b in names)


@st.composite
def batches(draw):
    rows = draw(st.integers(0, 12))
    # protobuf's Python (upb) puts "ab" before "a" in its deterministic order; the encoder sorts by bytes, "a" first
    names = draw(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=4, unique=True)
                 .filter(no_name_prefixes_another))
    columns = []
    for _ in names:
        values, arrow_type = KINDS[draw(st.sampled_from(sorted(KINDS)))]
        lists = [draw(st.lists(values, max_size=4)) for _ in range(rows)]
        columns.append(pa.array(lists, pa.large_list(arrow_type)))
    return pa.RecordBatch.from_arrays(columns, names)


@ENCODERS
@settings(max_examples=200, deadline=None)
@given(batches())
def test_bytes_equal_deterministic_protobuf_serialization(encode, batch):
    import tensorflow as tf

    expected = []
    for row in range(batch.num_rows):
        feature = {}
        for name in batch.schema.names:
            values = batch.column(name)[row].as_py()
            value_type = batch.column(name).type.value_type
            if pa.types.is_integer(value_type):
                feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
            elif pa.types.is_floating(value_type):
                feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
            else:
                feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        expected.append(example.SerializeToString(deterministic=True))
    assert encode(batch).to_list() == expected


@ENCODERS
def test_features_in_byte_order_when_a_name_prefixes_another(encode):
    import tensorflow as tf

    batch = pa.RecordBatch.from_arrays(
        [pa.array([[1]], pa.large_list(pa.int64())), pa.array([[2]], pa.large_list(pa.int64())),
         pa.array([[3]], pa.large_list(pa.int64()))],
        ["age_bucket", "age", "Age"],
    )
    (encoded,) = encode(batch).to_list()
    assert encoded.index(b"\x03Age") < encoded.index(b"\x03age") < encoded.index(b"\x0aage_bucket")
    parsed = tf.train.Example.FromString(encoded).features.feature
    assert {name: list(parsed[name].int64_list.value) for name in parsed} == {"age_bucket": [1], "age": [2], "Age": [3]}


@ENCODERS
def test_sliced_and_taken_batches(encode):
    batch = pa.RecordBatch.from_arrays(
        [pa.array([[1.5], [2.5], [], [4.0]], pa.large_list(pa.float32())),
         pa.array([[b"a"], [b""], [b"ccc", b"d"], [b"e"]], pa.large_list(pa.binary())),
         pa.array([[-1], [300], [2**40], [0]], pa.large_list(pa.int64()))],
        ["f", "b", "i"],
    )
    whole = encode(batch).to_list()
    assert encode(batch.slice(1, 2)).to_list() == whole[1:3]
    assert encode(batch.take(pa.array(np.array([3, 0])))).to_list() == [whole[3], whole[0]]
