"""make_raw_dataset: raw rows typed and cleaned as the job does, from CSV, Parquet and TFRecord, and
transformed on the fly into exactly the rows the job writes.

The hand-made input: row `id` has x = id / 8, city = "c{id % 5}", bonus = 10 * id (missing when
id % 4 == 0, default 0), tag = "t{id % 3}" (missing when id % 5 == 0, default "none") and label
"yes" for odd ids, "no" for even ones. The CSV also holds two rows the job would quarantine.
"""

import math
import os
import re
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tensorflow as tf

from skewless.errors import ConfigError
from skewless.pipelines.tfdata.dataset import make_dataset
from skewless.pipelines.tfdata.raw_dataset import make_raw_dataset

ROWS = 60


def _row(i: int) -> dict:
    return {
        "id": i,
        "x": i / 8,
        "city": f"c{i % 5}",
        "bonus": None if i % 4 == 0 else 10.0 * i,
        "tag": None if i % 5 == 0 else f"t{i % 3}",
        "label": "yes" if i % 2 else "no",
    }


COLUMNS = list(_row(0))


def _config(data_format: str, paths: list[str], **input_options) -> dict:
    return {
        "name": "raw",
        "input": {"format": data_format, "paths": paths, **input_options},
        "features": {
            "id": {"transform": "passthrough"},
            "x": {"transform": "z_score"},
            "city": {"transform": "vocabulary"},
            "bonus": {"transform": "z_score", "default": 0},
            "tag": {"transform": "vocabulary", "default": "none"},
        },
        "label": {"column": "label", "map": {"no": 0, "yes": 1}},
        "output": {"dir": "unused"},
    }


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """The same rows as a CSV (with a header and two bad rows), a Parquet file and a TFRecord file."""
    folder = tmp_path_factory.mktemp("raw")
    lines = [",".join(COLUMNS)]
    for i in range(ROWS):
        row = _row(i)
        lines.append(",".join("" if row[name] is None else str(row[name]) for name in COLUMNS))
        if i == 20:
            lines.append("999,,c1,5.0,t1,yes")
            lines.append("998,1.5,c1,5.0,t1,maybe")
    csv = folder / "rows.csv"
    csv.write_text("\n".join(lines) + "\n")

    rows = [_row(i) for i in range(ROWS)]
    table = pa.table({
        "id": pa.array([r["id"] for r in rows], pa.int64()),
        "x": pa.array([r["x"] for r in rows], pa.float32()),
        "city": pa.array([r["city"] for r in rows], pa.string()),
        "bonus": pa.array([r["bonus"] for r in rows], pa.float32()),
        "tag": pa.array([r["tag"] for r in rows], pa.string()),
        "label": pa.array([r["label"] for r in rows], pa.string()),
    })
    parquet = folder / "rows.parquet"
    pq.write_table(table, parquet)

    tfrecord = folder / "rows.tfrecord.gz"
    with tf.io.TFRecordWriter(str(tfrecord), tf.io.TFRecordOptions(compression_type="GZIP")) as writer:
        for row in rows:
            feature = {}
            for name, value in row.items():
                if value is None:
                    continue
                if isinstance(value, int):
                    feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))
                elif isinstance(value, float):
                    feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
                else:
                    feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[value.encode()]))
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    return {"csv": str(csv), "parquet": str(parquet), "tfrecord": str(tfrecord)}


def _rows(dataset) -> list[dict]:
    """Every row of every (features, label) batch as a plain dict; a missing optional value is None."""
    rows = []
    for features, label in dataset:
        columns = {"label": [v.decode() for v in label.numpy()]}
        for name, value in features.items():
            if isinstance(value, tf.SparseTensor):
                dense = [None] * int(value.dense_shape[0])
                for (row, _), item in zip(value.indices.numpy(), value.values.numpy()):
                    dense[row] = item
                values = dense
            else:
                values = value.numpy().tolist()
            columns[name] = [v.decode() if isinstance(v, bytes) else v for v in values]
        rows.extend(dict(zip(columns, values)) for values in zip(*columns.values()))
    return rows


def _check_values(rows: list[dict]) -> None:
    for row in rows:
        expected = _row(row["id"])
        assert set(row) == set(expected)
        for name, value in expected.items():
            if isinstance(value, float):
                assert math.isclose(row[name], value, rel_tol=1e-6), (row, name)
            else:
                assert row[name] == value, (row, name)


@pytest.mark.parametrize("data_format", ["csv", "parquet", "tfrecord"])
def test_reads_the_rows_the_job_would(inputs, data_format):
    options = {"header": True} if data_format == "csv" else {}
    config = _config(data_format, [inputs[data_format]], **options)
    dataset = make_raw_dataset(config, batch_size=7)
    features, label = dataset.element_spec
    assert isinstance(features["bonus"], tf.SparseTensorSpec) and isinstance(features["tag"], tf.SparseTensorSpec)
    assert features["x"].dtype == tf.float32 and features["id"].dtype == tf.int64 and label.dtype == tf.string
    rows = _rows(dataset)
    # file order; the two bad CSV rows (x missing, a label outside the map) are left out
    assert [row["id"] for row in rows] == list(range(ROWS))
    _check_values(rows)


def test_data_paths_alone_with_inferred_types(inputs):
    dataset = make_raw_dataset(inputs["parquet"], batch_size=16, label="label")
    features, _ = dataset.element_spec
    assert {name: spec.dtype for name, spec in features.items()} == {
        "id": tf.int64, "x": tf.float32, "city": tf.string, "bonus": tf.float32, "tag": tf.string,
    }
    rows = _rows(dataset)
    # without a config every column is required, so rows with a missing value are left out
    assert [row["id"] for row in rows] == [i for i in range(ROWS) if i % 4 and i % 5]
    _check_values(rows)


def test_shuffle_epochs_and_drop_remainder(inputs):
    config = _config("csv", [inputs["csv"]], header=True)
    first = _rows(make_raw_dataset(config, batch_size=8, shuffle_buffer=100, seed=4, num_epochs=2))
    again = _rows(make_raw_dataset(config, batch_size=8, shuffle_buffer=100, seed=4, num_epochs=2))
    assert first == again
    ids = [row["id"] for row in first]
    assert sorted(ids[:ROWS]) == sorted(ids[ROWS:]) == list(range(ROWS))
    assert ids[:ROWS] != list(range(ROWS)) and ids[:ROWS] != ids[ROWS:]
    _check_values(first)
    dropped = make_raw_dataset(config, batch_size=8, drop_remainder=True)
    assert [label.shape[0] for _, label in dropped] == [8] * (ROWS // 8)


def _generator_config(generator: str, rows: int) -> dict:
    return {
        "name": "generated",
        "input": {"format": "python", "generator": generator, "args": {"rows": rows}},
        "features": {
            "id": {"transform": "passthrough"},
            "height": {"transform": "z_score", "default": 160.0},
            "city": {"transform": "vocabulary"},
        },
        "label": {"column": "label", "map": {"short": 0, "tall": 1}},
        "output": {"dir": "unused"},
    }


def test_python_generator_rows(caplog):
    """The job's `python` source (tests/generated_rows.py) through from_generator, each row once."""
    dataset = make_raw_dataset(_generator_config("generated_rows:people", 900), batch_size=64, shuffle_buffer=200, seed=3)
    features, label = dataset.element_spec
    assert features["height"].dtype == tf.float32 and isinstance(features["height"], tf.SparseTensorSpec)
    assert features["id"].dtype == tf.int64 and features["city"].dtype == tf.string and label.dtype == tf.string
    rows = _rows(dataset)
    assert sorted(row["id"] for row in rows) == list(range(900))
    for row in rows:
        i = row["id"]
        height = 150.0 + (i * 37 % 50)
        assert row["height"] == (None if i % 10 == 0 else height)
        assert row["city"] == ["paris", "oslo", "rome"][i % 3]
        assert row["label"] == ("tall" if height > 175 else "short")
    # rows the job would quarantine (a height that is not a number) are skipped with a warning
    rows = _rows(make_raw_dataset(_generator_config("generated_rows:with_bad_rows", 2000), batch_size=500))
    assert sorted(row["id"] for row in rows) == sorted(set(range(2000)) - {1407, 1907})
    skipped = re.findall(r"skipped (\d+) row\(s\) the job would quarantine", caplog.text)
    assert sum(map(int, skipped)) == 2 and "height: 'very tall' is not a float" in caplog.text


def test_transformed_rows_are_the_rows_the_job_wrote(example_run):
    """Raw input through the run's graph on the fly == the run's train + eval shards, row for row."""
    run_dir = example_run.output_dir
    raw = make_raw_dataset(os.path.join(run_dir, "config.yaml"), graph_dir=run_dir, transform=True, batch_size=500)
    features, label = raw.element_spec
    assert label.dtype == tf.int64
    written = Counter()
    for split in ("train", "eval"):
        written.update(_transformed_rows(make_dataset(run_dir, split=split, batch_size=500, shuffle_buffer=0)))
    assert sum(written.values()) == 4000
    assert _transformed_rows(raw) == written


def _transformed_rows(dataset) -> Counter:
    rows = Counter()
    for features, label in dataset:
        names = sorted(features)
        columns = [np.round(features[name].numpy(), 4).tolist() for name in names] + [label.numpy().tolist()]
        rows.update(zip(*columns))
    return rows


def test_errors(inputs, tmp_path):
    with pytest.raises(ConfigError, match="transform=True needs graph_dir"):
        make_raw_dataset(inputs["csv"], transform=True)
    with pytest.raises(ConfigError, match=r"label 'income' is not a raw column \(columns: id, x, city"):
        make_raw_dataset(inputs["csv"], label="income")
    with pytest.raises(ConfigError, match="rows.json: cannot tell the format"):
        make_raw_dataset(str(tmp_path / "rows.json"))


def _label_counts(dataset) -> Counter:
    return Counter(value for _, label in dataset for value in label.numpy().tolist())


def _sorted_age_fnlwgt_label(dataset) -> list:
    return sorted((age, fnlwgt, label) for features, labels in dataset for age, fnlwgt, label in zip(
        features["age"].numpy().tolist(), features["fnlwgt"].numpy().tolist(), labels.numpy().tolist()))


def test_a_runs_split_gives_the_rows_the_job_wrote_there_with_the_label_it_wrote(example_run):
    """Raw rows trained like the shards: the job's split (the same row hash) and its label map. Without
    `split` train and eval rows came mixed, and the label was the raw string ('Cast string to float')."""
    run = example_run.output_dir
    for split in ("train", "eval"):
        raw = make_raw_dataset(run, split=split, batch_size=512)
        assert raw.element_spec[1].dtype == tf.int64
        shards = make_dataset(run, split, batch_size=512, shuffle_buffer=0)
        counts = _label_counts(raw)
        assert sum(counts.values()) == example_run.rows["written"][split]
        assert counts == _label_counts(shards) and set(counts) == {0, 1}
        # the same rows: through the run's graph they are the shards' rows
        transformed = make_raw_dataset(run, split=split, transform=True, batch_size=512)
        assert _sorted_age_fnlwgt_label(transformed) == _sorted_age_fnlwgt_label(shards)


def test_split_needs_a_job_and_one_of_its_splits(example_run, inputs):
    with pytest.raises(ConfigError, match=r"no split 'test' in the job \(splits: train, eval\)"):
        make_raw_dataset(example_run.output_dir, split="test")
    with pytest.raises(ConfigError, match="split='train' needs the job's config or run directory"):
        make_raw_dataset(inputs["csv"], split="train")
