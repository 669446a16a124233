"""make_dataset: every row once per epoch, seeded order, batching, epochs, cache, snapshot, tf.data service.

Most tests read a hand-made run directory whose rows are known: row `id` has x = id / 4, s = "row{id}"
and label = id % 3, spread over three gzip train shards of unequal size and one uncompressed eval shard.
`test_reads_a_real_run` reads a real small run of the job.
"""

import json
import os
import shutil
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
import tensorflow as tf
from tensorflow_transform.tf_metadata import dataset_metadata, metadata_io, schema_utils

from skewless.errors import ConfigError, InputError
from skewless.pipelines.tfdata.dataset import _READ_CHUNK, make_dataset

TRAIN_SHARDS = [range(0, 50), range(50, 90), range(90, 127)]
EVAL_SHARDS = [range(127, 160)]
TRAIN_ROWS = 127
SPEC = {
    "id": tf.io.FixedLenFeature([], tf.int64),
    "x": tf.io.FixedLenFeature([], tf.float32),
    "s": tf.io.FixedLenFeature([], tf.string),
    "label": tf.io.FixedLenFeature([], tf.int64),
}


def _example(row: int) -> bytes:
    feature = {
        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[row])),
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[row / 4])),
        "s": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f"row{row}".encode()])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[row % 3])),
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _write_run(run_dir, with_summary: bool) -> str:
    run_dir = str(run_dir)
    metadata = dataset_metadata.DatasetMetadata(schema_utils.schema_from_feature_spec(SPEC))
    metadata_io.write_metadata(metadata, os.path.join(run_dir, "transform_graph", "transformed_metadata"))
    os.makedirs(os.path.join(run_dir, "data"))
    shards = {}
    for split, ranges, suffix in (("train", TRAIN_SHARDS, ".gz"), ("eval", EVAL_SHARDS, "")):
        options = tf.io.TFRecordOptions(compression_type="GZIP" if suffix else "")
        shards[split] = []
        for index, rows in enumerate(ranges):
            name = f"data/{split}-{index:05d}-of-{len(ranges):05d}.tfrecord{suffix}"
            with tf.io.TFRecordWriter(os.path.join(run_dir, name), options) as writer:
                for row in rows:
                    writer.write(_example(row))
            shards[split].append({"path": name, "rows": len(rows), "bytes": os.path.getsize(os.path.join(run_dir, name))})
    if with_summary:
        with open(os.path.join(run_dir, "run.json"), "w") as handle:
            written = {split: sum(shard["rows"] for shard in entries) for split, entries in shards.items()}
            json.dump({"name": "fixture", "rows": {"read": sum(written.values()), "written": written, "quarantined": 0},
                       "features": {}, "shards": shards, "compression": "gzip", "format": "example",
                       "label": {"column": "label", "name": "label"},
                       "analysis": {"datasets": 1, "analyzed": 1, "cache_dir": None}, "seconds": {}, "versions": {},
                       "platform": {"machine": "test", "cpus": 1, "python": "3"}}, handle)
    return run_dir


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return _write_run(tmp_path_factory.mktemp("dataset") / "run", with_summary=True)


def _ids(dataset) -> list[int]:
    """The ids of every row, in the order the dataset yields them; checks each row's values on the way."""
    ids = []
    for features, label in dataset:
        batch_ids = features["id"].numpy()
        np.testing.assert_allclose(features["x"].numpy(), batch_ids / 4)
        assert [s.decode() for s in features["s"].numpy()] == [f"row{i}" for i in batch_ids]
        np.testing.assert_array_equal(label.numpy(), batch_ids % 3)
        ids.extend(batch_ids.tolist())
    return ids


def test_reads_every_row_once_per_epoch_with_its_values(run_dir):
    ids = _ids(make_dataset(run_dir, batch_size=16, shuffle_buffer=32, seed=1))
    assert sorted(ids) == list(range(TRAIN_ROWS))
    # shuffled: not the file order
    assert ids != sorted(ids)


def test_without_shuffle_rows_come_in_file_order(run_dir):
    ids = _ids(make_dataset(run_dir, batch_size=10, shuffle_buffer=0, deterministic=True))
    # the interleave takes a chunk of rows from each shard in turn until the shorter shards run out
    chunks = [[list(rows[i:i + _READ_CHUNK]) for i in range(0, len(rows), _READ_CHUNK)] for rows in TRAIN_SHARDS]
    expected = []
    for turn in range(max(map(len, chunks))):
        for shard in chunks:
            expected.extend(shard[turn] if turn < len(shard) else [])
    assert ids == expected


def test_same_seed_same_order_other_seed_other_order(run_dir):
    first = _ids(make_dataset(run_dir, batch_size=16, shuffle_buffer=64, seed=7))
    again = _ids(make_dataset(run_dir, batch_size=16, shuffle_buffer=64, seed=7))
    other = _ids(make_dataset(run_dir, batch_size=16, shuffle_buffer=64, seed=8))
    assert first == again
    assert other != first
    assert sorted(other) == sorted(first)


def test_each_epoch_is_complete_and_reshuffled(run_dir):
    dataset = make_dataset(run_dir, batch_size=16, shuffle_buffer=64, seed=3, num_epochs=3)
    ids = _ids(dataset)
    batches = [label.numpy().size for _, label in dataset]
    # each epoch ends with its own short batch: 127 = 7 * 16 + 15
    assert batches == ([16] * 7 + [15]) * 3
    epochs = [ids[i * TRAIN_ROWS:(i + 1) * TRAIN_ROWS] for i in range(3)]
    for epoch in epochs:
        assert sorted(epoch) == list(range(TRAIN_ROWS))
    assert epochs[0] != epochs[1] != epochs[2]
    # iterating the dataset again (as Keras does each epoch) shuffles anew; rebuilding it replays
    assert _ids(dataset)[:TRAIN_ROWS] != epochs[0]
    rebuilt = make_dataset(run_dir, batch_size=16, shuffle_buffer=64, seed=3, num_epochs=3)
    assert _ids(rebuilt) == ids


def test_repeats_forever_when_num_epochs_is_none(run_dir):
    dataset = make_dataset(run_dir, batch_size=16, shuffle_buffer=0, num_epochs=None)
    assert dataset.cardinality().numpy() == tf.data.INFINITE_CARDINALITY
    counts = Counter(_ids(dataset.take(8 * 5)))
    assert set(counts) == set(range(TRAIN_ROWS)) and set(counts.values()) == {5}


def test_drop_remainder_gives_full_static_batches(run_dir):
    dataset = make_dataset(run_dir, batch_size=16, seed=2, drop_remainder=True, num_epochs=2)
    features, label = dataset.element_spec
    assert label.shape == (16,) and features["x"].shape == (16,)
    assert dataset.cardinality().numpy() == 2 * 7
    ids = _ids(dataset)
    assert len(ids) == 2 * 7 * 16
    for epoch in (ids[:112], ids[112:]):
        assert len(set(epoch)) == 112 and set(epoch) <= set(range(TRAIN_ROWS))


def test_cardinality_without_drop_remainder(run_dir):
    assert make_dataset(run_dir, batch_size=16).cardinality().numpy() == 8
    assert make_dataset(run_dir, split="eval", batch_size=16).cardinality().numpy() == 3


def test_eval_split_uncompressed_shards(run_dir):
    ids = _ids(make_dataset(run_dir, split="eval", batch_size=8, shuffle_buffer=0))
    assert ids == list(range(127, 160))


def test_shard_files_found_without_run_summary(run_dir, tmp_path):
    copy = shutil.copytree(run_dir, tmp_path / "run")
    os.remove(copy / "run.json")
    dataset = make_dataset(copy, batch_size=16, seed=4, label="label")  # no run.json names it
    assert dataset.cardinality().numpy() == tf.data.UNKNOWN_CARDINALITY
    assert sorted(_ids(dataset)) == list(range(TRAIN_ROWS))
    assert sorted(_ids(make_dataset(copy, split="eval", batch_size=16, label="label"))) == list(range(127, 160))


def test_nondeterministic_still_reads_every_row_once(run_dir):
    ids = _ids(make_dataset(run_dir, batch_size=16, seed=5, deterministic=False))
    assert sorted(ids) == list(range(TRAIN_ROWS))


def test_features_subset_and_no_label(run_dir):
    dataset = make_dataset(run_dir, batch_size=200, label=None, features=["s", "id"], shuffle_buffer=0)
    (batch,) = list(dataset)
    assert sorted(batch) == ["id", "s"]
    assert sorted(batch["id"].numpy().tolist()) == list(range(TRAIN_ROWS))
    everything = next(iter(make_dataset(run_dir, batch_size=4, label=None)))
    assert sorted(everything) == ["id", "label", "s", "x"]
    features, label = next(iter(make_dataset(run_dir, batch_size=4, label="id", features=["x"])))
    np.testing.assert_allclose(features["x"].numpy(), label.numpy() / 4)


def test_memory_cache_replays_every_row_each_epoch(run_dir):
    dataset = make_dataset(run_dir, batch_size=16, seed=6, cache=True, num_epochs=3)
    ids = _ids(dataset)
    for epoch in range(3):
        assert sorted(ids[epoch * TRAIN_ROWS:(epoch + 1) * TRAIN_ROWS]) == list(range(TRAIN_ROWS))
    # later epochs replay cached batches, in a different order of batches
    assert ids[:TRAIN_ROWS] != ids[TRAIN_ROWS:2 * TRAIN_ROWS]


def test_file_cache(run_dir, tmp_path):
    cache = tmp_path / "cache" / "train"
    os.makedirs(cache.parent)
    dataset = make_dataset(run_dir, batch_size=16, seed=6, cache=cache)
    assert sorted(_ids(dataset)) == list(range(TRAIN_ROWS))
    assert any(name.startswith("train") for name in os.listdir(cache.parent))
    # a second pass reads the cache files
    assert sorted(_ids(dataset)) == list(range(TRAIN_ROWS))


def test_snapshot_gives_the_same_rows_and_is_reused(run_dir, tmp_path):
    snapshot = tmp_path / "snapshot"
    plain = Counter(_ids(make_dataset(run_dir, batch_size=16, seed=1)))
    first = Counter(_ids(make_dataset(run_dir, batch_size=16, seed=1, snapshot_dir=snapshot)))
    assert first == plain
    written = sorted(os.listdir(snapshot))
    assert written
    # another seed shuffles differently but matches the same snapshot (no second one is written)
    again = Counter(_ids(make_dataset(run_dir, batch_size=16, seed=2, snapshot_dir=snapshot)))
    assert again == plain
    assert sorted(os.listdir(snapshot)) == written


def test_data_service_gives_the_same_rows(run_dir):
    dispatcher = tf.data.experimental.service.DispatchServer()
    address = dispatcher.target.split("://")[1]
    workers = [
        tf.data.experimental.service.WorkerServer(
            tf.data.experimental.service.WorkerConfig(dispatcher_address=address)
        )
        for _ in range(2)
    ]
    plain = Counter(_ids(make_dataset(run_dir, batch_size=16, seed=1)))
    served = make_dataset(run_dir, batch_size=16, seed=1, data_service=dispatcher.target, num_epochs=2)
    ids = _ids(served)
    assert Counter(ids[:TRAIN_ROWS]) == plain
    assert Counter(ids) == Counter({row: 2 for row in plain})
    for worker in workers:
        worker.stop()
    dispatcher.stop()


def test_errors_name_what_exists(run_dir, tmp_path):
    with pytest.raises(InputError, match="run directory not found"):
        make_dataset(tmp_path / "nowhere")
    with pytest.raises(ConfigError, match=r"no split 'test' \(splits in this run: eval, train\)"):
        make_dataset(run_dir, split="test")
    with pytest.raises(ConfigError, match=r"unknown feature\(s\) 'age' \(features in this run: id, label, s, x\)"):
        make_dataset(run_dir, features=["x", "age"])
    with pytest.raises(ConfigError, match=r"no label feature 'income' \(features in this run: id, label, s, x\)"):
        make_dataset(run_dir, label="income")
    with pytest.raises(InputError, match="no transformed_metadata"):
        make_dataset(tmp_path)


def test_reads_a_real_run(example_run):
    run_dir = example_run.output_dir
    written = example_run.rows["written"]
    for split in ("train", "eval"):
        rows = 0
        for features, label in make_dataset(run_dir, split=split, batch_size=256, seed=0):
            rows += label.shape[0]
            assert set(label.numpy().tolist()) <= {0, 1}
            assert set(features) == {
                "age", "hours_per_week", "fnlwgt", "capital_gain",
                "workclass", "education", "occupation", "native_country",
            }
            assert 0 <= features["fnlwgt"].numpy().min() and features["fnlwgt"].numpy().max() <= 1
        assert rows == written[split]


def test_reading_does_not_import_beam(run_dir):
    """Training containers have TensorFlow and tf.Transform but no Apache Beam."""
    code = (
        "import sys\n"
        "from skewless.pipelines.tfdata.dataset import make_dataset\n"
        f"next(iter(make_dataset({run_dir!r}, batch_size=4)))\n"
        "loaded = sorted(name for name in sys.modules if name.split('.')[0] == 'apache_beam')\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def _copy_tree(source: str, target: str) -> None:
    for folder, _, names in tf.io.gfile.walk(source):
        relative = os.path.relpath(folder, source)
        inside = target if relative == "." else os.path.join(target, relative)  # ram:// keeps "./" in names
        tf.io.gfile.makedirs(inside)
        for name in names:
            tf.io.gfile.copy(os.path.join(folder, name), os.path.join(inside, name))


def test_reads_a_run_on_a_filesystem_tensorflow_reads_in_place(example_run):
    """ram:// stands for gs:// and any other TensorFlow filesystem: the run was refused ("run directory not
    found") when make_dataset checked it with os.path."""
    remote = "ram://skewless-test/example"
    _copy_tree(example_run.output_dir, remote)
    try:
        for split in ("train", "eval"):
            read = [(features["age"].numpy().tolist(), label.numpy().tolist()) for features, label in
                    make_dataset(remote, split, batch_size=512, shuffle_buffer=0)]
            local = [(features["age"].numpy().tolist(), label.numpy().tolist()) for features, label in
                     make_dataset(example_run.output_dir, split, batch_size=512, shuffle_buffer=0)]
            assert read == local and sum(len(labels) for _, labels in read) == example_run.rows["written"][split]
    finally:
        tf.io.gfile.rmtree(remote)
