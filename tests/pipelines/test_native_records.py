"""The C encoder and framing (pipelines/write/_native_records.c) give the Python fallback's bytes, byte for byte,
and TensorFlow parses them back to the batch's values (issue 40)."""

import math
import struct

import google_crc32c
import numpy as np
import pyarrow as pa
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from skewless.pipelines.output.tfrecord_crc import masked_crc
from skewless.pipelines.write import native_records
from skewless.pipelines.write.example_encoder import (
    Records,
    encode_examples,
    encode_examples_in_python,
    encode_sequence_examples,
    encode_sequence_examples_in_python,
)
from skewless.pipelines.write.shards import tfrecord_frames, tfrecord_frames_in_python

BUILT = pytest.mark.skipif(native_records.IMPLEMENTATION != "C",
                           reason="the C extension was not built here (no C compiler): the Python path runs")

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def lists(values, arrow_type, large=True):
    return pa.array(values, pa.large_list(arrow_type) if large else pa.list_(arrow_type))


def batch(**columns) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(list(columns.values()), list(columns))


EXAMPLE_CASES = {
    "floats: nan, infinities, signed zero, subnormal, extremes": batch(
        f=lists([[math.nan, math.inf, -math.inf], [-0.0, 0.0], [1e-45, 3.4028235e38, -3.4028235e38], [1.5]],
                pa.float32())),
    "float64 values rounded to float32": batch(
        f=lists([[0.1, 1 / 3, 1e300, -1e-300], [2.0**-149 * 0.75], [16777217.0]], pa.float64())),
    "float16 values": batch(f=lists([[0.5, -2.0], [65504.0]], pa.float16())),
    "int64 extremes and varint widths": batch(
        i=lists([[0, 1, 127, 128, 16383, 16384], [-1, INT64_MIN, INT64_MAX], [2**35, -(2**35)], [2**56, 2**63 - 2]],
                pa.int64())),
    "narrow and unsigned integers": batch(
        a=lists([[-128, 127], [0]], pa.int8()), b=lists([[2**64 - 1, 2**63], [7]], pa.uint64()),
        c=lists([[-(2**31), 2**31 - 1], []], pa.int32()), d=lists([[255], [0, 1]], pa.uint8())),
    "bytes: empty strings, non-ASCII, long values": batch(
        b=lists([[b"", b""], ["é中文🙂".encode(), b"\x00\xff"], [b"x" * 300], [b"y" * 70_000, b""]], pa.binary())),
    "strings and large types": batch(
        s=lists([["naïve", ""], ["Ωmega"], []], pa.string()), t=lists([["a"], [], ["b", "c"]], pa.large_string()),
        u=lists([[b"\x01"], [b""], []], pa.large_binary())),
    "empty lists in every kind": batch(
        f=lists([[], [1.0], []], pa.float32()), i=lists([[], [], [5]], pa.int64()), b=lists([[], [b"z"], []],
                                                                                        pa.binary())),
    "columns with no values at all": batch(f=lists([[], []], pa.float32()), b=lists([[], []], pa.binary()),
                                           i=lists([[], []], pa.int64())),
    "list offsets of 32 bits": batch(
        f=lists([[1.0, 2.0], []], pa.float32(), large=False), b=lists([[b"q"], [b"", b"r"]], pa.binary(), large=False)),
    "names out of order, prefixing each other, non-ASCII": batch(
        **{"b": lists([[1]], pa.int64()), "ab": lists([[2]], pa.int64()), "a": lists([[3]], pa.int64()),
           "é": lists([[4]], pa.int64()), "Z": lists([[5]], pa.int64()), "a_b": lists([[6]], pa.int64())}),
    "many features": batch(**{f"feature_{n:03d}": lists([[n, -n], [n]], pa.int64()) for n in range(300)}),
    "a census-like row": batch(
        age=lists([[0.42], [-1.3]], pa.float32()), workclass=lists([[3], [0]], pa.int64()),
        education=lists([[b"Bachelors"], [b"HS-grad"]], pa.binary()), label=lists([[1], [0]], pa.int64())),
    "one row": batch(x=lists([[1.0]], pa.float32())),
    "no rows": batch(x=lists([], pa.float32()), y=lists([], pa.binary())),
    "no columns": pa.RecordBatch.from_pydict({"x": [1, 2]}).drop_columns(["x"]),
}

SEQUENCE_CASES = {
    "context and feature lists of every kind": batch(
        score=lists([[1.5, -2.0], [], [math.nan]], pa.float32()),
        ids=lists([[-1, 300], [2**40], []], pa.int64()),
        words=lists([[b"red"], [b"", b"blue"], [b"x" * 200]], pa.binary()),
        steps=lists([[[1, 2], []], [], [[3], [INT64_MIN]]], pa.large_list(pa.int64())),
        floats=lists([[[0.5]], [[], [-0.0, math.inf]], []], pa.large_list(pa.float32())),
        tokens=lists([[[b"a", b""]], [[]], [[b"\xc3\xa9" * 100], [b"q"]]], pa.large_list(pa.binary()))),
    "feature lists only": batch(steps=lists([[[1]], [], [[2, 3], [4]]], pa.list_(pa.int64()))),
    "context only": batch(x=lists([[1.0], []], pa.float32())),
    "feature lists of 32-bit offsets and float64": batch(
        s=lists([[[1.25, 1e40]], [[]]], pa.list_(pa.float64()), large=False)),
}


def sliced(case: pa.RecordBatch) -> pa.RecordBatch:
    return case.slice(1) if case.num_rows > 1 else case


def taken(case: pa.RecordBatch) -> pa.RecordBatch:
    return case.take(pa.array(np.arange(case.num_rows)[::-1].copy())) if case.num_rows else case


@BUILT
@pytest.mark.parametrize("view", [lambda case: case, sliced, taken], ids=["whole", "sliced", "taken"])
@pytest.mark.parametrize("case", list(EXAMPLE_CASES), ids=list(EXAMPLE_CASES))
def test_c_encoder_gives_the_python_encoders_bytes_and_tensorflow_parses_them(case, view):
    rows = view(EXAMPLE_CASES[case])
    assert native_records.encode(rows.select(sorted(rows.schema.names)), sequence=False) is not None, "ran in Python"
    native, python = encode_examples(rows), encode_examples_in_python(rows)
    assert native.to_list() == python.to_list()
    assert native.lengths.tolist() == python.lengths.tolist()
    for index, record in enumerate(native.to_list()):
        parsed = tf.train.Example.FromString(record).features.feature
        assert sorted(parsed) == sorted(rows.schema.names)
        for name in rows.schema.names:
            assert feature_values(parsed[name]) == expected_values(rows.column(name), index), (name, index)
    assert_framed_alike(native)


@BUILT
@pytest.mark.parametrize("case", list(SEQUENCE_CASES), ids=list(SEQUENCE_CASES))
def test_c_sequence_encoder_gives_the_python_encoders_bytes_and_tensorflow_parses_them(case):
    for rows in (SEQUENCE_CASES[case], sliced(SEQUENCE_CASES[case]), taken(SEQUENCE_CASES[case])):
        assert native_records.encode(rows.select(sorted(rows.schema.names)), sequence=True) is not None
        native, python = encode_sequence_examples(rows), encode_sequence_examples_in_python(rows)
        assert native.to_list() == python.to_list()
        for index, record in enumerate(native.to_list()):
            parsed = tf.train.SequenceExample.FromString(record)
            for name in rows.schema.names:
                column = rows.column(name)
                if pa.types.is_list(column.type.value_type) or pa.types.is_large_list(column.type.value_type):
                    steps = parsed.feature_lists.feature_list[name].feature
                    row_steps = column[index].values  # a list array: one list of values per step
                    expected = [expected_values(row_steps, step) for step in range(len(column[index]))]
                    assert [feature_values(step) for step in steps] == expected, (name, index)
                else:
                    assert feature_values(parsed.context.feature[name]) == expected_values(column, index)
        assert_framed_alike(native)


VALUES = {
    "int": (st.integers(INT64_MIN, INT64_MAX), pa.int64()),
    "float": (st.floats(width=32), pa.float32()),  # NaN and infinities included
    "bytes": (st.binary(max_size=200), pa.binary()),
}


@st.composite
def sequence_batches(draw):
    rows = draw(st.integers(0, 6))
    names = draw(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=4, unique=True))
    columns = []
    for _ in names:
        values, arrow_type = VALUES[draw(st.sampled_from(sorted(VALUES)))]
        if draw(st.booleans()):  # a feature list: steps of values
            step = st.lists(values, max_size=3)
            columns.append(lists([draw(st.lists(step, max_size=3)) for _ in range(rows)], pa.large_list(arrow_type)))
        else:
            columns.append(lists([draw(st.lists(values, max_size=4)) for _ in range(rows)], arrow_type))
    return pa.RecordBatch.from_arrays(columns, names)


@BUILT
@settings(max_examples=150, deadline=None)
@given(sequence_batches())
def test_c_sequence_encoder_gives_the_python_bytes_on_any_batch(rows):
    assert encode_sequence_examples(rows).to_list() == encode_sequence_examples_in_python(rows).to_list()


@BUILT
def test_values_the_c_code_does_not_read_are_encoded_in_python():
    """Nulls among a list's values, a NUL in a name: the C path declines (None) and the fallback encodes them."""
    rows = batch(f=lists([[1.0, None], [2.0]], pa.float32()), b=lists([[b"a", None], []], pa.binary()))
    named = batch(**{"a\0b": lists([[1]], pa.int64()), "a": lists([[2]], pa.int64())})  # Arrow's C names end at NUL
    for case in (rows, named):
        assert native_records.encode(case, sequence=False) is None
        assert encode_examples(case).to_list() == encode_examples_in_python(case).to_list()


@BUILT
@pytest.mark.parametrize("lengths", [[], [0], [0, 0, 1], [97] * 300, list(range(0, 600, 7)), [5, 70_000, 3]],
                         ids=["none", "one-empty", "empty-then-short", "equal", "0-600", "long"])
def test_c_framing_gives_the_python_framings_bytes_and_tensorflows_reader_reads_them(tmp_path, lengths):
    rng = np.random.default_rng(len(lengths))
    records = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in lengths]
    framed = assert_framed_alike(Records(np.frombuffer(b"".join(records), np.uint8), np.array(lengths, np.int64)))
    (tmp_path / "framed.tfrecord").write_bytes(framed)
    assert [record.numpy() for record in tf.data.TFRecordDataset(str(tmp_path / "framed.tfrecord"))] == records


@BUILT
def test_c_framing_checksums_equal_google_crc32c():
    """The checksum of every record length of 0 to 300 bytes (the hardware and table paths' tails and words)."""
    data = np.random.default_rng(5).integers(0, 256, 301 * 150, dtype=np.uint8)
    lengths = np.arange(301, dtype=np.int64)
    framed = tfrecord_frames(Records(data[: lengths.sum()], lengths)).tobytes()
    at = 0
    for length in lengths.tolist():
        header, record = framed[at : at + 8], framed[at + 12 : at + 12 + length]
        assert struct.unpack("<I", framed[at + 8 : at + 12])[0] == masked_crc(header)
        assert struct.unpack("<I", framed[at + 12 + length : at + 16 + length])[0] == masked_crc(record)
        at += 16 + length


@BUILT
def test_both_crc32c_implementations_equal_google_crc32c():
    """The table-driven CRC32C (CPUs without the instruction) and SSE 4.2's, on lengths 0 to 300 at odd offsets."""
    c_module = native_records._native_records
    data = np.random.default_rng(9).integers(0, 256, 400, dtype=np.uint8).tobytes()
    implementations = ["software"] + (["sse4.2"] if c_module.crc32c_implementation() == "sse4.2" else [])
    for start, length in [(start, length) for start in (0, 1, 3) for length in range(301)]:
        chunk = data[start : start + length]
        assert {c_module.crc32c(chunk, name) for name in implementations} == {google_crc32c.value(chunk)}


def assert_framed_alike(records: Records) -> bytes:
    native = native_records.frame(records.data, records.lengths)
    assert native is not None
    assert native.tobytes() == tfrecord_frames_in_python(records).tobytes()
    return native.tobytes()


def feature_values(feature: tf.train.Feature) -> list:
    kind = feature.WhichOneof("kind")
    if kind == "float_list":
        return [struct.pack("<f", value) for value in feature.float_list.value]  # bits: NaN equals itself
    if kind == "int64_list":
        return list(feature.int64_list.value)
    return list(feature.bytes_list.value) if kind == "bytes_list" else []


def expected_values(column: pa.Array, row: int) -> list:
    """Row `row`'s values as an Example holds them, converted with NumPy (not Arrow's casts, which the C path uses):
    float32 bits, int64 (wrapped), bytes."""
    values = column[row].values
    if values is None or len(values) == 0:
        return []
    if pa.types.is_floating(values.type):
        with np.errstate(over="ignore"):  # 1e300 is inf in float32, as the encoders write it
            return [value.tobytes() for value in np.asarray(values.to_numpy(zero_copy_only=False), "<f4")]
    if pa.types.is_integer(values.type):
        return np.asarray(values.to_numpy(zero_copy_only=False)).astype(np.int64).tolist()
    return [value if isinstance(value, bytes) else value.encode() for value in values.to_pylist()]


def test_without_the_c_extension_the_python_code_encodes_and_frames(monkeypatch):
    rows = EXAMPLE_CASES["a census-like row"]
    monkeypatch.setattr(native_records, "_native_records", None)
    assert native_records.encode(rows, sequence=False) is None
    records = encode_examples(rows)
    assert records.to_list() == encode_examples_in_python(rows).to_list()
    assert native_records.frame(records.data, records.lengths) is None
    assert tfrecord_frames(records).tobytes() == tfrecord_frames_in_python(records).tobytes()
