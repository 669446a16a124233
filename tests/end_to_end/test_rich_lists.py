"""Variable-length list columns (`list: true`): CSV fields split by input.list_delimiter, tf.train.Example value
lists and Parquet list columns read alike; z-score, scaling, vocabulary and hashing apply to each value with
statistics over all values; `max_length` pads or truncates; the shards equal the serving path row for row."""

import collections

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tensorflow as tf

from rich_rows import served_rows, written_rows

ROWS = 200
TAGS = ["red", "green", "blue", "black", "white"]


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(9)
    weights = np.array([5, 4, 3, 2, 1]) / 15
    data = []
    for i in range(ROWS):
        data.append({
            "id": i,
            "scores": rng.normal(3, 2, rng.integers(0, 5)).round(2).tolist(),
            "tags": rng.choice(TAGS, rng.integers(0 if i % 10 else 1, 4), p=weights).tolist(),
            "codes": rng.integers(0, 1000, rng.integers(1, 7)).tolist(),
            "label": int(i % 3 == 0),
        })
    data[3]["scores"] = []  # an empty list: an empty CSV field
    return data


def config(folder, input_config: dict) -> dict:
    return {
        "name": "lists",
        "input": input_config,
        "features": {
            "id": {"transform": "passthrough"},
            "scores": {"transform": "z_score", "list": True},
            "tags": {"transform": "vocabulary", "list": True},
            "codes": {"transform": "hash", "hash_buckets": 8, "list": True, "max_length": 4},
        },
        "label": {"column": "label"},
        "output": {"dir": str(folder / "out"), "shards": 2},
    }


@pytest.fixture(scope="module")
def list_run(tmp_path_factory, rows):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("lists")
    lines = ["id,scores,tags,codes,label"] + [
        ",".join([str(r["id"]), " ; ".join(map(str, r["scores"])), ";".join(r["tags"]), ";".join(map(str, r["codes"])),
                  str(r["label"])])
        for r in rows
    ]
    (folder / "rows.csv").write_text("\n".join(lines) + "\n")
    result = run(config(folder, {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True,
                                 "list_delimiter": ";"}))
    return result, written_rows(result.output_dir)


def test_values_are_transformed_one_by_one_over_all_values(list_run, rows):
    result, written = list_run
    scores = np.float32([v for r in rows for v in r["scores"]]).astype(np.float64)
    mean, std = scores.mean(), scores.std()
    for row, got in zip(rows, written["scores"]):
        np.testing.assert_allclose(got, [(np.float32(v) - mean) / std for v in row["scores"]], atol=2e-6)
    assert written["scores"][3] == []
    counts = collections.Counter(t for r in rows for t in r["tags"])
    index = {tag: i for i, tag in enumerate(sorted(counts, key=counts.get, reverse=True))}
    assert written["tags"] == [[index[t] for t in r["tags"]] for r in rows]
    assert result.features["tags"]["vocabulary_size"] == 5 and result.features["tags"]["oov_rows"] == 0
    assert result.features["scores"]["count"] == len(scores)  # statistics over the values


def test_max_length_pads_and_truncates(list_run, rows):
    _, written = list_run
    hashed = [tf.strings.to_hash_bucket_fast([str(c) for c in r["codes"]], 8).numpy().tolist() for r in rows]
    assert written["codes"] == [(h + [-1] * 4)[:4] for h in hashed]


def test_specs_and_make_dataset(list_run):
    import tensorflow_transform as tft

    from skewless.pipelines.tfdata.dataset import make_dataset

    result, _ = list_run
    graph = tft.TFTransformOutput(result.graph_dir)
    assert graph.raw_feature_spec()["scores"] == tf.io.VarLenFeature(tf.float32)
    assert graph.raw_feature_spec()["tags"] == tf.io.VarLenFeature(tf.string)
    spec = graph.transformed_feature_spec()
    assert spec["scores"] == tf.io.VarLenFeature(tf.float32) and spec["tags"] == tf.io.VarLenFeature(tf.int64)
    assert spec["codes"] == tf.io.FixedLenFeature([4], tf.int64)
    features, _ = next(iter(make_dataset(result.output_dir, batch_size=8, shuffle_buffer=0)))
    assert isinstance(features["scores"], tf.RaggedTensor) and features["codes"].shape == (8, 4)


def test_shards_equal_serving_and_unseen_values_go_to_oov(list_run, rows):
    from skewless.layers import TransformLayer
    from skewless.pipelines.commands.verify import verify

    result, written = list_run
    layer = TransformLayer(result.output_dir)
    served = served_rows(layer, rows)
    assert set(served) == set(written) - {"label"}
    for name in served:
        assert served[name] == written[name], name
    red = written["tags"][next(i for i, r in enumerate(rows) if r["tags"][:1] == ["red"])][0]
    unseen = served_rows(layer, [{"id": 0, "scores": [], "tags": ["red", "purple"], "codes": [1]}])
    assert unseen["tags"] == [[red, 5]] and unseen["scores"] == [[]]  # 5 tags, then the OOV bucket
    check = verify(result.output_dir, sample=60)
    assert check.differences == 0 and check.unseen_rows == 50


def test_tfrecord_lists_and_parquet_list_columns_read_as_the_csv(list_run, rows, tmp_path):
    from skewless.config import load_config
    from skewless.pipelines.plan.plan import plan
    from skewless.pipelines.reading.sources import RowReader
    from skewless.pipelines.write.transform import ChunkTransformer

    result, written = list_run
    with tf.io.TFRecordWriter(str(tmp_path / "rows.tfrecord")) as writer:
        for r in rows:
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[r["id"]])),
                "scores": tf.train.Feature(float_list=tf.train.FloatList(value=r["scores"])),
                "tags": tf.train.Feature(bytes_list=tf.train.BytesList(value=[t.encode() for t in r["tags"]])),
                "codes": tf.train.Feature(int64_list=tf.train.Int64List(value=r["codes"])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[r["label"]])),
            })).SerializeToString())
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "rows.parquet")
    transformer = ChunkTransformer(result.graph_dir, plan(load_config(result.output_dir + "/config.yaml")).columns)
    for input_config in ({"format": "tfrecord", "paths": [str(tmp_path / "rows.tfrecord")]},
                         {"format": "parquet", "paths": [str(tmp_path / "rows.parquet")]}):
        job_plan = plan(load_config(config(tmp_path, input_config)))
        assert [(c.name, c.kind, c.is_list) for c in job_plan.columns] == [
            (c.name, c.kind, c.is_list) for c in transformer.columns]  # kinds inferred alike
        reader = RowReader(job_plan.input_config, job_plan.columns)
        table = pa.concat_tables(chunk.table for unit in job_plan.units for chunk in reader.read(unit))
        assert table.num_rows == ROWS
        transformed = transformer.transform(table)
        for name in ("scores", "tags", "codes"):
            value = transformed[name]
            got = tf.RaggedTensor.from_sparse(value).to_list() if isinstance(value, tf.SparseTensor) else value.numpy()
            assert np.asarray(got, dtype=object).tolist() == written[name], (input_config["format"], name)
