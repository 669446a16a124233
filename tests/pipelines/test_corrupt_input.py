"""Damaged TFRecord and gzip inputs fail `run` with the file and the byte offset, never a short read.

Offsets are checked against the record layout computed here from the record sizes (8-byte length,
4-byte CRC, data, 4-byte CRC). tf.data's reader reads some of these files to an early end without
an error; the job must not.
"""

import gzip
import os
import re

import pytest

from skewless.errors import InputError

RECORDS = 300


def examples() -> list[bytes]:
    import tensorflow as tf

    def example(i):
        feature = {
            "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=[i / 7])),
        }
        return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

    return [example(i) for i in range(RECORDS)]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """The bytes of a clean uncompressed TFRecord file, and the byte offset at which each record starts."""
    import tensorflow as tf

    path = tmp_path_factory.mktemp("clean") / "data.tfrecord"
    records = examples()
    with tf.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)
    offsets = [0]
    for record in records:
        offsets.append(offsets[-1] + 16 + len(record))
    data = path.read_bytes()
    assert len(data) == offsets[-1]
    return data, offsets


def run_on(folder, name: str, data: bytes):
    """Runs the job on one file holding `data`; returns the InputError message. Nothing may be left behind."""
    from skewless.pipelines import run

    (folder / name).write_bytes(data)
    config = {
        "name": "corrupt",
        "input": {"format": "tfrecord", "paths": [str(folder / name)]},
        "features": {"id": {"transform": "passthrough"}, "x": {"transform": "z_score"}},
        "output": {"dir": str(folder / "out"), "shards": 2},
    }
    with pytest.raises(InputError) as failure:
        run(config)
    assert os.listdir(folder) == [name]  # no output, no staging directory
    message = str(failure.value)
    assert "\n" not in message and message.startswith(str(folder / name))
    return message


def test_flipped_data_byte_is_a_crc_error_at_that_record(tmp_path, clean):
    data, offsets = clean
    damaged = bytearray(data)
    k = 123
    damaged[offsets[k] + 12 + 3] ^= 0x01  # a byte of record k's data
    message = run_on(tmp_path, "data.tfrecord", bytes(damaged))
    assert message.endswith(f": record {k + 1} at byte {offsets[k]}: its data fails the CRC check (corrupt record)")


def test_flipped_length_byte_is_a_crc_error_at_that_record(tmp_path, clean):
    data, offsets = clean
    damaged = bytearray(data)
    k = 200
    damaged[offsets[k] + 1] ^= 0x40  # the length field: without a CRC check it would be a huge length
    message = run_on(tmp_path, "data.tfrecord", bytes(damaged))
    assert message.endswith(f": record {k + 1} at byte {offsets[k]}: its length fails the CRC check (corrupt file)")


def test_file_cut_inside_a_record(tmp_path, clean):
    data, offsets = clean
    k = 250
    message = run_on(tmp_path, "data.tfrecord", data[: offsets[k] + 20])
    size = offsets[k + 1] - offsets[k]
    assert message.endswith(f": record {k + 1} at byte {offsets[k]}: the file ends inside it (20 of {size} bytes; truncated file)")


def test_file_cut_inside_a_header(tmp_path, clean):
    data, offsets = clean
    k = 40
    message = run_on(tmp_path, "data.tfrecord", data[: offsets[k] + 5])
    assert message.endswith(f": record {k + 1} at byte {offsets[k]}: the file ends inside its header (5 of 12 bytes; truncated file)")


@pytest.mark.parametrize("cut", [0.5, "trailer"])
def test_gzip_stream_cut_short(tmp_path, clean, cut):
    data, _ = clean
    compressed = gzip.compress(data)
    # "trailer": all the records are there, only the gzip CRC and size are missing (tf.data reads it silently)
    kept = compressed[:-6] if cut == "trailer" else compressed[: int(len(compressed) * cut)]
    message = run_on(tmp_path, "data.tfrecord.gz", kept)
    offset = int(re.search(r"corrupt or truncated gzip stream near compressed byte (\d+): ", message).group(1))
    assert 0 < offset <= len(kept)
    assert "end-of-stream marker" in message


def test_gzip_stream_with_a_flipped_byte(tmp_path, clean):
    data, _ = clean
    compressed = bytearray(gzip.compress(data))
    compressed[len(compressed) // 2] ^= 0xFF
    message = run_on(tmp_path, "data.tfrecord.gz", bytes(compressed))
    assert re.search(r": (corrupt or truncated gzip stream near compressed byte \d+|record \d+ at uncompressed byte \d+): ", message)


def test_reading_a_unit_checks_too(tmp_path, clean):
    """The read pass checks every record again (the file may change after planning): same error."""
    from skewless.pipelines.reading.tfrecord import read_records

    data, offsets = clean
    damaged = bytearray(data)
    damaged[offsets[7] + 14] ^= 0x01
    path = tmp_path / "data.tfrecord"
    path.write_bytes(bytes(damaged))
    assert len(list(read_records(str(path), 0, 7))) == 7  # the records before the damage read fine
    with pytest.raises(InputError, match=rf"^{path}: record 8 at byte {offsets[7]}: its data fails"):
        list(read_records(str(path), 5, -1))


def test_clean_records_read_back_exactly(tmp_path, clean):
    from skewless.pipelines.reading.tfrecord import count_records, read_records

    data, offsets = clean
    records = examples()
    for name, content in (("data.tfrecord", data), ("data.tfrecord.gz", gzip.compress(data))):
        path = tmp_path / name
        path.write_bytes(content)
        assert count_records(str(path)) == RECORDS
        assert list(read_records(str(path), 10, 20)) == records[10:20]
        assert list(read_records(str(path))) == records
