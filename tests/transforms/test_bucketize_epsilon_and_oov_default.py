"""bucketize `epsilon` and vocabulary `default_value` (with `num_oov_buckets: 0`): the written rows equal stock
`tft.bucketize(epsilon=...)` and `tft.compute_and_apply_vocabulary(default_value=...)` on the same rows (an
AnalyzeAndTransformDataset run in the test), serving equals the written rows, the native preprocessor is exact
for both (Keras' lookup then `VocabularyFirst` with the graph's default), and bad combinations are refused in one
line."""

import numpy as np
import pytest

from example_job import assert_feature_refused
from rich_rows import served_rows, write_csv, written_rows

ROWS = 3000
COLORS = ["red", "blue", "green", "teal", "sky", "rust"]
NAMES = ("b_eps", "b_default", "color", "shade")


@pytest.fixture(scope="module")
def options_run(tmp_path_factory):
    from skewless.pipelines import run

    rng = np.random.default_rng(44)
    folder = tmp_path_factory.mktemp("epsilon_default")
    raw = {"id": list(range(ROWS)),
           "b_eps": (rng.integers(0, 80000, ROWS) / 8).tolist(),  # eighths: exact in float32
           "b_default": (rng.integers(0, 80000, ROWS) / 8).tolist(),
           # top_k 3 of 6 colors: the other three are out of the vocabulary in the written rows too
           "color": rng.choice(COLORS, ROWS, p=[0.3, 0.25, 0.2, 0.1, 0.1, 0.05]).tolist(),
           "shade": rng.choice(COLORS, ROWS, p=[0.3, 0.25, 0.2, 0.1, 0.1, 0.05]).tolist(),
           "label": rng.integers(0, 2, ROWS).tolist()}
    write_csv(folder / "rows.csv", raw)
    config = {"name": "options", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
              "features": {"id": {"transform": "passthrough"},
                           "b_eps": {"transform": "bucketize", "num_buckets": 20, "epsilon": 0.05},
                           "b_default": {"transform": "bucketize", "num_buckets": 20},
                           "color": {"transform": "vocabulary", "top_k": 3, "num_oov_buckets": 0, "default_value": 99},
                           "shade": {"transform": "vocabulary", "top_k": 3, "num_oov_buckets": 0}},
              "label": {"column": "label"}, "output": {"dir": str(folder / "out"), "shards": 1}}
    return run(config), raw


def _stock_rows(raw, temp_dir):
    import tensorflow as tf
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam

    spec = {"id": tf.io.FixedLenFeature([], tf.int64), "b_eps": tf.io.FixedLenFeature([], tf.float32),
            "b_default": tf.io.FixedLenFeature([], tf.float32), "color": tf.io.FixedLenFeature([], tf.string),
            "shade": tf.io.FixedLenFeature([], tf.string)}

    def preprocessing_fn(inputs):
        return {"id": inputs["id"], "b_eps": tft.bucketize(inputs["b_eps"], 20, epsilon=0.05),
                "b_default": tft.bucketize(inputs["b_default"], 20),
                "color": tft.compute_and_apply_vocabulary(inputs["color"], top_k=3, num_oov_buckets=0,
                                                          default_value=99),
                "shade": tft.compute_and_apply_vocabulary(inputs["shade"], top_k=3, num_oov_buckets=0)}

    rows = [{"id": raw["id"][i], "b_eps": np.float32(raw["b_eps"][i]), "b_default": np.float32(raw["b_default"][i]),
             "color": raw["color"][i].encode(), "shade": raw["shade"][i].encode()} for i in range(ROWS)]
    # one batch of every row, as the job's one work unit gives them (the quantile sketch is summarized per batch)
    with tft_beam.Context(temp_dir=str(temp_dir), desired_batch_size=ROWS):
        (transformed, _), _ = (rows, tft.DatasetMetadata.from_feature_spec(spec)) | (
            tft_beam.AnalyzeAndTransformDataset(preprocessing_fn))
    by_id = sorted(transformed, key=lambda row: row["id"])
    return {name: [int(row[name]) for row in by_id] for name in NAMES}


def test_written_rows_equal_stock_tf_transform(options_run, tmp_path):
    result, raw = options_run
    written, stock = written_rows(result.output_dir), _stock_rows(raw, tmp_path)
    for name in NAMES:
        assert written[name] == stock[name], name
    # the three rarest colors are out of the top 3: the default value, or tf.Transform's -1 without one
    rare = {"teal", "sky", "rust"}
    assert {id_ for c, id_ in zip(raw["color"], written["color"]) if c in rare} == {99}
    assert {id_ for c, id_ in zip(raw["color"], written["color"]) if c not in rare} == {0, 1, 2}
    assert {id_ for c, id_ in zip(raw["shade"], written["shade"]) if c in rare} == {-1}


def test_oov_rows_count_the_rows_given_the_default_id(options_run):
    """run.json's oov_rows counts the rows whose value the vocabulary lacks without OOV buckets too: the rows given
    default_value 99 (past the vocabulary) and those given tf.Transform's -1."""
    import json
    import os

    result, raw = options_run
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        features = json.load(handle)["features"]
    for name in ("color", "shade"):
        assert features[name]["oov_rows"] == sum(value in ("teal", "sky", "rust") for value in raw[name]), name


def test_epsilon_bounds_the_boundaries_ranks(options_run):
    from skewless.layers.graph_analyzers import read_graph_features

    result, raw = options_run
    boundaries = read_graph_features(result.output_dir)["b_eps"].constant("Reshape", 0).reshape(-1)
    ordered = np.sort(np.asarray(raw["b_eps"], np.float32))
    assert len(boundaries) == 19
    for i, boundary in enumerate(boundaries, 1):
        rank = np.searchsorted(ordered, boundary)
        assert abs(rank - i / 20 * ROWS) <= 0.05 * ROWS + 1, (i, boundary, rank)


def test_serving_equals_the_written_rows(options_run):
    from skewless.layers import TransformLayer

    result, raw = options_run
    layer = TransformLayer(result.output_dir)
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(ROWS)]
    served, written = served_rows(layer, rows), written_rows(result.output_dir)
    for name in NAMES:
        assert served[name] == written[name], name
    unseen = served_rows(layer, [{"id": 0, "b_eps": 1.0, "b_default": 1.0, "color": "never", "shade": "never"}])
    assert unseen["color"] == [99] and unseen["shade"] == [-1]


def test_native_preprocessor_is_exact_for_epsilon_and_default_value(options_run):
    from skewless.layers import TransformLayer, check_preprocessor, keras_preprocessor, raw_feature_batch

    result, raw = options_run
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(0, ROWS, 5)]
    statuses = {f.name: (f.status, f.reason) for f in check_preprocessor(result.output_dir, rows=rows, sample=300).features}
    assert statuses["b_eps"] == ("exact", None) and statuses["b_default"] == ("exact", None)
    assert statuses["shade"] == ("exact", None) and statuses["color"] == ("exact", None)
    # Keras' lookup itself: an unseen color and one cut by top_k get the default, as in the graph
    spec = {name: s for name, s in TransformLayer(result.output_dir).raw_feature_spec.items() if name != "label"}
    rows = [{"id": 0, "b_eps": 1.0, "b_default": 1.0, "color": color, "shade": color} for color in ("red", "never", "rust")]
    native = keras_preprocessor(result.output_dir)(raw_feature_batch(rows, spec))
    assert np.asarray(native["color"]).tolist() == [0, 99, 99] and np.asarray(native["shade"]).tolist() == [0, -1, -1]


@pytest.mark.parametrize("feature, message", [
    ({"transform": "vocabulary", "default_value": 5}, "default_value needs num_oov_buckets: 0"),
    ({"transform": "vocabulary", "num_oov_buckets": 2, "default_value": 5}, "default_value needs num_oov_buckets: 0"),
    ({"transform": "hash", "hash_buckets": 4, "default_value": 5}, "default_value only applies to transform vocabulary"),
    ({"transform": "bucketize", "num_buckets": 4, "epsilon": 0}, "features.x.epsilon: Input should be greater than 0"),
    ({"transform": "z_score", "epsilon": 0.01}, "epsilon only applies to transform bucketize, not z_score"),
])
def test_config_refuses_bad_combinations_in_one_line(tmp_path, feature, message):
    assert_feature_refused(tmp_path, feature, message)
