"""The batch job end to end on a CSV the test writes: values checked against NumPy and plain counts."""

import collections
import json
import os

import numpy as np
import pytest
from run_output import read_split

ROWS = 1200


@pytest.fixture(scope="module")
def csv_run(tmp_path_factory):
    from skewless.pipelines import run

    rng = np.random.default_rng(11)
    folder = tmp_path_factory.mktemp("csv")
    # distinct frequencies, so the vocabulary order (most frequent first) is unambiguous
    cities = ["paris"] * 500 + ["oslo"] * 350 + ["rome"] * 200 + ["lima"] * 100 + ["bern"] * 45 + ["nuuk"] * 5
    rng.shuffle(cities)
    x = rng.normal(10, 3, ROWS).round(3)
    u = rng.uniform(0, 100, ROWS).round(3)
    y = rng.normal(-5, 2, ROWS).round(3)
    y_missing = rng.random(ROWS) < 0.1
    labels = rng.choice(["yes", "no"], ROWS)
    lines = ["id,x,u,y,city,label"]
    for i in range(ROWS):
        lines.append(f"{i},{x[i]},{u[i]},{'' if y_missing[i] else y[i]},{cities[i]},{labels[i]}")
    (folder / "part-a.csv").write_text("\n".join(lines[:700]) + "\n")
    (folder / "part-b.csv").write_text("\n".join([lines[0]] + lines[700:]) + "\n")
    config = {
        "name": "csv",
        "input": {"format": "csv", "paths": [str(folder / "part-*.csv")], "header": True},
        "features": {
            "id": {"transform": "passthrough"},
            "x": {"transform": "z_score"},
            "u": {"transform": "bucketize", "num_buckets": 4},
            "y": {"transform": "z_score", "default": 0},
            "city": {"transform": "vocabulary", "top_k": 4, "num_oov_buckets": 1},
        },
        "label": {"column": "label", "map": {"no": 0, "yes": 1}},
        "output": {"dir": str(folder / "out"), "splits": {"train": 0.7, "eval": 0.3}, "shards": 3},
    }
    result = run(config)
    raw = {"id": np.arange(ROWS), "x": x, "u": u, "y": np.where(y_missing, 0.0, y), "city": np.array(cities),
           "label": labels, "y_missing": y_missing}
    return result, raw


def all_rows(result):
    parts = [read_split(result, split) for split in ("train", "eval")]
    merged = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
    order = np.argsort(merged["id"])
    return {name: values[order] for name, values in merged.items()}


def test_every_row_written_exactly_once_across_splits(csv_run):
    result, _ = csv_run
    train, evaluation = read_split(result, "train"), read_split(result, "eval")
    ids = np.concatenate([train["id"], evaluation["id"]])
    assert sorted(ids.tolist()) == list(range(ROWS))
    assert result.rows == {"read": ROWS, "written": {"train": len(train["id"]), "eval": len(evaluation["id"])},
                           "quarantined": 0}
    assert 0.6 < len(train["id"]) / ROWS < 0.8  # a 70/30 hash split
    names = sorted(os.listdir(os.path.join(result.output_dir, "data")))
    assert names == [f"{s}-{i:05d}-of-00003.tfrecord.gz" for s in ("eval", "train") for i in range(3)]


def test_z_scores_match_numpy(csv_run):
    result, raw = csv_run
    rows = all_rows(result)
    for name in ("x", "y"):
        values = raw[name]
        expected = (values - values.mean()) / values.std()
        np.testing.assert_allclose(rows[name], expected, rtol=1e-4, atol=1e-4)
    stats = json.load(open(os.path.join(result.output_dir, "run.json")))["features"]
    assert stats["x"]["mean"] == pytest.approx(raw["x"].mean(), rel=1e-6)
    assert stats["x"]["std"] == pytest.approx(raw["x"].std(), rel=1e-6)
    assert stats["x"]["min"] == pytest.approx(raw["x"].min()) and stats["x"]["max"] == pytest.approx(raw["x"].max())
    assert stats["y"]["missing"] == int(raw["y_missing"].sum())


def test_vocabulary_order_and_oov_ids_match_a_plain_count(csv_run):
    result, raw = csv_run
    rows = all_rows(result)
    counts = collections.Counter(raw["city"].tolist())
    top4 = [city for city, _ in counts.most_common(4)]
    expected = np.array([top4.index(c) if c in top4 else 4 for c in raw["city"]])  # one OOV bucket: id 4
    np.testing.assert_array_equal(rows["city"], expected)
    stats = json.load(open(os.path.join(result.output_dir, "run.json")))["features"]["city"]
    assert stats["vocabulary_size"] == 4
    assert stats["oov_rows"] == counts["bern"] + counts["nuuk"]
    assert [v for v, _ in stats["top_values"][:4]] == top4


def test_quantile_buckets_are_ordered_and_balanced(csv_run):
    result, raw = csv_run
    buckets = all_rows(result)["u"]
    assert set(buckets.tolist()) == {0, 1, 2, 3}
    order = np.argsort(raw["u"])
    assert np.all(np.diff(buckets[order]) >= 0), "bucket ids must not decrease as the value grows"
    shares = np.bincount(buckets) / ROWS
    np.testing.assert_allclose(shares, 0.25, atol=0.03)


def test_label_and_passthrough(csv_run):
    result, raw = csv_run
    rows = all_rows(result)
    np.testing.assert_array_equal(rows["label"], (raw["label"] == "yes").astype(np.int64))
    np.testing.assert_array_equal(rows["id"], raw["id"])


def test_graph_reproduces_written_rows(csv_run):
    import tensorflow as tf
    import tensorflow_transform as tft

    result, raw = csv_run
    graph = tft.TFTransformOutput(result.graph_dir)
    spec = graph.raw_feature_spec()
    assert isinstance(spec["y"], tf.io.VarLenFeature) and isinstance(spec["x"], tf.io.FixedLenFeature)
    picks = np.arange(0, ROWS, 7)
    present = np.flatnonzero(~raw["y_missing"][picks])  # missing values are absent, as in the CSV
    y = tf.SparseTensor(np.stack([present, np.zeros_like(present)], 1), raw["y"][picks][present].astype(np.float32),
                        [len(picks), 1])
    raw_features = {
        "id": tf.constant(raw["id"][picks], tf.int64),
        "x": tf.constant(raw["x"][picks], tf.float32),
        "u": tf.constant(raw["u"][picks], tf.float32),
        "y": y,
        "city": tf.constant(raw["city"][picks].astype(object)),
        "label": tf.constant(raw["label"][picks].astype(object)),
    }
    served = graph.transform_raw_features(raw_features)
    written = all_rows(result)
    for name, value in served.items():
        np.testing.assert_array_equal(value.numpy(), written[name][picks], err_msg=name)


def test_output_layout_and_run_json(csv_run):
    import tensorflow_transform as tft

    result, _ = csv_run
    # report.html is the CLI's: `run()` renders nothing (tests/pipelines/test_run_progress.py checks the command's page)
    assert sorted(os.listdir(result.output_dir)) == ["config.yaml", "data", "run.json", "statistics", "transform_graph"]
    graph = tft.TFTransformOutput(result.graph_dir)
    assert set(graph.raw_feature_spec()) == {"id", "x", "u", "y", "city", "label"}
    report = json.load(open(os.path.join(result.output_dir, "run.json")))
    assert report["shards"]["train"][0]["path"] == "data/train-00000-of-00003.tfrecord.gz"
    assert sum(s["rows"] for s in report["shards"]["eval"]) == report["rows"]["written"]["eval"]
    assert report["versions"]["tensorflow-transform"].startswith("1.21")
    assert not [p for p in os.listdir(os.path.dirname(result.output_dir)) if ".staging-" in p]


def test_refuses_to_overwrite(csv_run, tmp_path):
    from skewless.errors import OutputExistsError
    from skewless.pipelines import run

    from example_job import example_config

    result, _ = csv_run
    with pytest.raises(OutputExistsError, match="--overwrite"):
        run(example_config(result.output_dir))
