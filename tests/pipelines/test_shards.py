"""Shard sizing (`output.shards: auto`) and work units: the arithmetic pinned, every line owned once."""


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dirty_csv import job_config, make_inputs
from example_job import REPO
from run_output import files_of

from skewless.config import parse_input, load_config
from skewless.pipelines.reading.columns import RawColumn
from skewless.pipelines.plan.shard_count import MB, auto_shard_count
from skewless.run_directory import shard_name, shard_split
from skewless.pipelines.plan.plan import plan_units
from skewless.pipelines.reading.sources import RowReader

CONFIGS = sorted((REPO / "configs").glob("*.yaml"))


@pytest.mark.parametrize(
    "size, readers, expected",
    [
        (300 * 1024, 1, 1),  # small data: one file
        (2 * MB, 1, 2),  # no file under ~1 MB
        (123 * MB, 1, 10),  # the 1M-row census CSV: 10 files for one reader
        (5 * 1024 * MB, 1, 40),  # 5 GB: 128 MB files
        (1024 * MB, 4, 40),  # 10 files per reader beats the size rule
        (30 * 1024 * MB, 4, 240),  # 30 GB: the size rule beats 10 per reader
    ],
)
def test_auto_shard_count(size, readers, expected):
    assert auto_shard_count(size, 128, readers) == expected


def test_auto_shard_count_follows_the_target_size():
    assert auto_shard_count(1000 * MB, target_shard_mb=200) == 10
    assert auto_shard_count(1000 * MB, target_shard_mb=50) == 20


def test_shard_names():
    assert shard_name("train", 3, 12, "gzip") == "train-00003-of-00012.tfrecord.gz"
    assert shard_name("eval", 0, 1, "none") == "eval-00000-of-00001.tfrecord"


def test_a_shard_name_reads_back_as_its_split():
    assert shard_split(shard_name("my-train", 3, 12, "gzip")) == "my-train"
    assert shard_split(shard_name("eval", 0, 1, "none")) == "eval"
    assert shard_split("train-00003-of-00012.tfrecord.gz.tmp-abc") is None
    assert shard_split("notes.txt") is None


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_shipped_configs_are_valid(path):
    config = load_config(path)
    assert config.features


def test_units_partition_the_inputs_in_order(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"  # planning reads a file's first bytes: a gzip one cannot be cut
    a.write_bytes(b"1\n" * 50)
    b.write_bytes(b"1\n" * 25)
    config = parse_input(format="csv", paths=[str(a), str(b)], columns=["x"])
    units = plan_units(config, [str(a), str(b)], [100, 50], 3)
    assert [[(s.path, s.start, s.stop) for s in u.segments] for u in units] == [
        [(str(a), 0, 50)],
        [(str(a), 50, 100)],
        [(str(b), 0, 50)],
    ]


def test_a_gzip_csv_goes_whole_to_one_unit_whatever_its_name(tmp_path):
    import gzip

    plain, packed = tmp_path / "plain.csv.gz", tmp_path / "packed.csv"
    plain.write_bytes(b"1\n" * 50)
    packed.write_bytes(gzip.compress(b"1\n" * 500))
    config = parse_input(format="csv", paths=[str(plain), str(packed)], columns=["x"])
    sizes = [plain.stat().st_size, packed.stat().st_size]
    units = plan_units(config, [str(plain), str(packed)], sizes, 4)
    segments = [(s.path, s.start, s.stop) for u in units for s in u.segments]
    assert (str(packed), 0, -1) in segments  # never cut
    assert len([s for s in segments if s[0] == str(plain)]) > 1  # a plain file named .gz is cut


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lines=st.lists(st.integers(min_value=0, max_value=10**6), min_size=0, max_size=60),
    blank_every=st.integers(min_value=0, max_value=7),
    units=st.integers(min_value=1, max_value=9),
    crlf=st.booleans(),
)
def test_byte_range_units_read_every_row_exactly_once(tmp_path_factory, lines, blank_every, units, crlf):
    folder = tmp_path_factory.mktemp("csv")
    newline = "\r\n" if crlf else "\n"
    text = ""
    for index, value in enumerate(lines):
        if blank_every and index % blank_every == 0:
            text += newline  # blank lines are not rows
        text += f"{value},{index}{newline}"
    path = folder / "data.csv"
    path.write_bytes(text.encode())
    config = parse_input(format="csv", paths=[str(path)], columns=["value", "index"])
    columns = [RawColumn("value", "int"), RawColumn("index", "int")]
    reader = RowReader(config, columns)
    seen = []
    for unit in plan_units(config, [str(path)], [len(text.encode())], units):
        for chunk in reader.read(unit):
            assert not chunk.bad
            seen.extend(chunk.table.column("index").to_pylist())
    assert seen == list(range(len(lines)))


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_shard_writer_writes_the_bytes_tensorflow_writes(tmp_path, compression):
    """Framing (lengths, CRCs) against tf.io.TFRecordWriter, record lengths of 0 to 300 bytes, two blocks."""
    import gzip

    import numpy as np
    import tensorflow as tf

    from skewless.pipelines.write.example_encoder import Records
    from skewless.pipelines.write.shards import ShardWriter

    rng = np.random.default_rng(7)
    records = [rng.integers(0, 256, int(n), dtype=np.uint8).tobytes() for n in rng.integers(0, 300, 500)]
    records[3] = b""
    ours = ShardWriter(str(tmp_path / "ours"), compression, 2)
    for block in (records[:123], records[123:]):
        lengths = np.array([len(r) for r in block], np.int64)
        ours.write_records(Records(np.frombuffer(b"".join(block), np.uint8), lengths))
    ours.close()
    with tf.io.TFRecordWriter(str(tmp_path / "tf")) as writer:
        for record in records:
            writer.write(record)
    written = (tmp_path / "ours").read_bytes()
    assert (gzip.decompress(written) if compression == "gzip" else written) == (tmp_path / "tf").read_bytes()
    assert ours.records == len(records) and ours.bytes == len(written)
    read = tf.data.TFRecordDataset(str(tmp_path / "ours"), "GZIP" if compression == "gzip" else "")
    assert [r.numpy() for r in read] == records


def test_gzip_shards_are_the_same_bytes_however_written(tmp_path):
    """zlib-ng's gzip stream (not zlib's bytes): the same bytes written again, on the writer's thread or the
    caller's, whatever blocks the records came in (zlib-ng's output depends on its input's cuts); a gzip stream
    of the framed records that Python's gzip and TensorFlow's GZIP reader both read."""
    import gzip

    import numpy as np
    import tensorflow as tf

    from skewless.pipelines.write.example_encoder import Records
    from skewless.pipelines.write.shards import ShardWriter, tfrecord_frames

    # ~3 MB (3 GZIP_BLOCKs and a part) of compressible records: random bytes pass through deflate whatever the cuts
    rng = np.random.default_rng(5)
    records = [rng.choice(np.frombuffer(b"abcd,Married", np.uint8), int(n)).tobytes()
               for n in rng.integers(0, 2_000, 3_000)]

    def written(name, threaded, block_records, level=2):
        writer = ShardWriter(str(tmp_path / name), "gzip", level, threaded=threaded)
        for block in (records[i : i + block_records] for i in range(0, len(records), block_records)):
            writer.write_records(Records(np.frombuffer(b"".join(block), np.uint8),
                                         np.array([len(r) for r in block], np.int64)))
        writer.close()
        return (tmp_path / name).read_bytes()

    first = written("a", True, 1_000)
    assert written("b", True, 1_000) == first and written("c", False, 1_000) == first
    assert written("d", True, 7) == first and written("e", False, 2_345) == first and written("f", True, 1) == first
    assert gzip.decompress(first) == b"".join(
        tfrecord_frames(Records(np.frombuffer(r, np.uint8), np.array([len(r)], np.int64))).tobytes() for r in records)
    assert [r.numpy() for r in tf.data.TFRecordDataset(str(tmp_path / "a"), "GZIP")] == records
    # another level: other bytes, fewer of them, the same records
    smaller = written("g", True, 1_000, level=6)
    assert smaller != first and len(smaller) < len(first) and gzip.decompress(smaller) == gzip.decompress(first)


def _records(lengths, seed=11) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, int(n), dtype=np.uint8).tobytes() for n in lengths]


@pytest.mark.parametrize("records", [
    [],  # a unit whose rows all went to another split
    [b""],
    [b"", b"", b"x"],
    _records([97] * 300),  # every record as long (tabular rows of one value each)
    _records(range(0, 600, 7)),
    _records([5, 70_000, 3]),  # a record longer than 16 bits of length
    _records(np.random.default_rng(3).integers(110, 190, 20_000)),  # census-like rows
], ids=["none", "one-empty", "empty-then-short", "equal-lengths", "0-600", "long", "census-like"])
@pytest.mark.parametrize("implementation", ["default", "python"])  # in C where it was built, and the fallback
def test_tfrecord_frames_are_the_bytes_tensorflow_writes(tmp_path, records, implementation):
    import tensorflow as tf

    from skewless.pipelines.write import shards
    from skewless.pipelines.write.example_encoder import Records

    with tf.io.TFRecordWriter(str(tmp_path / "tf")) as writer:
        for record in records:
            writer.write(record)
    frames = shards.tfrecord_frames if implementation == "default" else shards.tfrecord_frames_in_python
    framed = frames(Records(np.frombuffer(b"".join(records), np.uint8),
                                     np.array([len(r) for r in records], np.int64)))
    assert framed.dtype == np.uint8 and framed.tobytes() == (tmp_path / "tf").read_bytes()


def test_a_job_gzips_its_shards_at_output_gzip_level(tmp_path):
    """output.gzip_level reaches the job's shard writers: at level 9 the shards are other gzip bytes than at the
    default's (not each one: a shard too small for the levels to differ may be the same), of the same records,
    and the statistics are the same bytes."""
    import gzip

    from skewless.pipelines import run

    make_inputs(tmp_path)
    outputs = {}
    for level in (None, 9):
        config = job_config(tmp_path, max_bad_fraction=0.2, dir=str(tmp_path / f"out-{level}"))
        if level is not None:
            config["output"]["gzip_level"] = level
        outputs[level] = files_of(run(config).output_dir, ("data", "statistics"))
    default, nine = outputs[None], outputs[9]
    shards = sorted(path for path in default if path.startswith("data/"))
    assert shards and sorted(nine) == sorted(default)
    assert all(gzip.decompress(nine[path]) == gzip.decompress(default[path]) for path in shards)
    assert any(nine[path] != default[path] for path in shards)
    assert all(nine[path] == default[path] for path in default if path.startswith("statistics/"))
