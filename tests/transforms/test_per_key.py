"""`key: COLUMN` on z_score, scale_0_1, scale_by_min_max and bucketize: the statistics per value of another column.

The written rows must equal what stock tf.Transform writes for the same rows with `tft.scale_to_z_score_per_key`,
`tft.scale_to_0_1_per_key`, `tft.scale_by_min_max_per_key` and `tft.bucketize_per_key` (an
AnalyzeAndTransformDataset run in the test), serving (TransformLayer on raw tf.Examples) must equal the written
rows, a key the analysis never saw must get tf.Transform's fallback, and the native Keras preprocessor must
refuse the keyed features with a reason.
"""

import numpy as np
import pytest

from rich_rows import served_rows, with_gaps, write_csv, written_rows
from skewless.config import load_config
from skewless.errors import ConfigError

ROWS = 600
KEYED = {  # feature: (its options, the key column)
    "p_z": ({"transform": "z_score"}, "c"),
    "p_01": ({"transform": "scale_0_1"}, "c"),
    "p_mm": ({"transform": "scale_by_min_max", "range": [-1.0, 1.0], "clip": [10.0, 90.0]}, "store"),
    "p_b": ({"transform": "bucketize", "num_buckets": 4}, "c"),
}


def _raw_rows():
    """Columns of numbers exact in float32 (eighths), so the CSV's text and the stock rows hold the same values.

    Key "d" is rare, and its p_01 values are all equal: tf.Transform's one-value fallback (a sigmoid) per key.
    """
    rng = np.random.default_rng(31)
    c = rng.choice(["a", "b", "c", "d"], ROWS, p=[0.5, 0.3, 0.18, 0.02]).tolist()
    shift = {"a": 0, "b": 40, "c": -25, "d": 7}
    columns = {
        "id": list(range(ROWS)),
        "c": with_gaps(rng, c, 0.05),  # missing keys take the feature's default "zz"
        "store": rng.integers(1, 4, ROWS).tolist(),  # an int key that is no feature
    }
    for name in KEYED:
        columns[name] = [(int(rng.integers(0, 800)) / 8 + shift[key]) for key in c]
    columns["p_01"] = [12.5 if key == "d" else value for key, value in zip(c, columns["p_01"])]
    columns["label"] = rng.integers(0, 2, ROWS).tolist()
    return columns


def _config(folder, csv):
    features = {"id": {"transform": "passthrough"}, "c": {"transform": "vocabulary", "default": "zz"}}
    features.update({name: {**options, "key": key} for name, (options, key) in KEYED.items()})
    return {"name": "per_key", "input": {"format": "csv", "paths": [str(csv)], "header": True},
            "features": features, "label": {"column": "label"}, "output": {"dir": str(folder / "out"), "shards": 1}}


@pytest.fixture(scope="module")
def keyed_run(tmp_path_factory):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("per_key")
    raw = _raw_rows()
    write_csv(folder / "rows.csv", raw)
    return run(_config(folder, folder / "rows.csv")), raw


def _stock_rows(raw, temp_dir):
    """The same transforms written by hand with tf.Transform's per-key mappers, on the same rows."""
    import tensorflow as tf
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam

    spec = {"id": tf.io.FixedLenFeature([], tf.int64), "c": tf.io.VarLenFeature(tf.string),
            "store": tf.io.FixedLenFeature([], tf.int64),
            **{name: tf.io.FixedLenFeature([], tf.float32) for name in KEYED}}

    def preprocessing_fn(inputs):
        c = tf.squeeze(tft.sparse_tensor_to_dense_with_shape(inputs["c"], [None, 1], default_value="zz"), axis=1)
        store = tf.strings.as_string(inputs["store"])
        return {
            "id": inputs["id"],
            "p_z": tft.scale_to_z_score_per_key(inputs["p_z"], c),
            "p_01": tft.scale_to_0_1_per_key(inputs["p_01"], c),
            "p_mm": tft.scale_by_min_max_per_key(tf.clip_by_value(inputs["p_mm"], 10.0, 90.0), store, -1.0, 1.0),
            "p_b": tft.bucketize_per_key(inputs["p_b"], c, 4),
        }

    rows = [{"id": raw["id"][i], "c": [] if raw["c"][i] is None else [raw["c"][i].encode()],
             "store": raw["store"][i], **{name: np.float32(raw[name][i]) for name in KEYED}} for i in range(ROWS)]
    # one batch of every row, as the job's one work unit (shards: 1) gives them: tf.Transform sums float32 means
    # and variances batch by batch, so other batches would put the z-scores a few ulps apart
    with tft_beam.Context(temp_dir=str(temp_dir), desired_batch_size=ROWS):
        (transformed, _), _ = (rows, tft.DatasetMetadata.from_feature_spec(spec)) | (
            tft_beam.AnalyzeAndTransformDataset(preprocessing_fn))
    by_id = sorted(transformed, key=lambda row: row["id"])
    return {name: [np.asarray(row[name]).item() for row in by_id] for name in KEYED}


def test_written_rows_equal_stock_tf_transform_per_key(keyed_run, tmp_path):
    result, raw = keyed_run
    assert result.rows["quarantined"] == 0
    written, stock = written_rows(result.output_dir), _stock_rows(raw, tmp_path)
    for name in KEYED:
        ours, theirs = np.asarray(written[name]), np.asarray(stock[name])
        assert ours.dtype == theirs.dtype, name
        np.testing.assert_array_equal(ours, theirs, err_msg=name)
    # the statistics really are per key: within each key, z-scores have mean 0 and 0-1 values span [0, 1]
    keys = np.array(["zz" if c is None else c for c in raw["c"]])
    for key in ("a", "b", "c"):
        z = np.asarray(written["p_z"], np.float64)[keys == key]
        assert abs(z.mean()) < 1e-5 and abs(z.std() - 1) < 1e-4, key
        scaled = np.asarray(written["p_01"])[keys == key]
        assert scaled.min() == 0 and scaled.max() == 1, key
        assert sorted(set(np.asarray(written["p_b"])[keys == key])) == [0, 1, 2, 3], key
    # key "d": one distinct value, which tf.Transform maps through a sigmoid
    d = np.asarray(written["p_01"])[keys == "d"]
    np.testing.assert_array_equal(d, np.full(len(d), 1 / (1 + np.exp(-12.5)), np.float32))


def test_serving_equals_the_written_rows_and_unseen_keys_fall_back(keyed_run):
    from skewless.layers import TransformLayer

    result, raw = keyed_run
    layer = TransformLayer(result.output_dir)
    assert {"c", "store"} <= set(layer.raw_feature_spec)  # the key columns are serving inputs
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(ROWS)]
    served, written = served_rows(layer, rows), written_rows(result.output_dir)
    for name in KEYED:
        assert served[name] == written[name], name
    unseen = served_rows(layer, [{"id": 0, "c": "new", "store": 9, "p_z": 3.5, "p_01": 2.0, "p_mm": 20.0,
                                  "p_b": 1.0}])
    assert unseen["p_z"] == [3.5]  # tf.Transform leaves the value of an unknown key unscaled
    assert unseen["p_01"] == [float(np.float32(1 / (1 + np.exp(-2.0))))]  # and the 0-1 scale takes its sigmoid
    assert unseen["p_b"] == [-1]  # and bucketize_per_key gives -1


def test_native_preprocessor_refuses_keyed_features_with_a_reason(keyed_run):
    from skewless.layers import check_preprocessor

    result, raw = keyed_run
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(0, ROWS, 5)]
    statuses = {f.name: (f.status, f.reason) for f in check_preprocessor(result.output_dir, rows=rows, sample=200).features}
    # scale_by_min_max has native layers now (its range and clip too), but not with a key
    for name in ("p_z", "p_01", "p_mm", "p_b"):
        assert statuses[name] == ("unsupported", "option key has no exact Keras equivalent in skewless yet"), name
    assert statuses["c"] == ("exact", None)


@pytest.mark.parametrize("features, message", [
    ({"x": {"transform": "z_score", "key": [1, 2]}}, r"features\.x: key of transform z_score names a column"),
    ({"x": {"transform": "scale_0_1", "key": "x"}}, r"features\.x: cannot key by itself"),
    ({"x": {"transform": "bucketize", "num_buckets": 3, "key": "c", "list": True}},
     "key needs one value per row"),
    ({"x": {"transform": "z_score", "key": "c"}, "c": {"transform": "vocabulary", "list": True}},
     r"features\.x: cannot key by 'c' \(a cross, an image or a list\)"),
    ({"x": {"transform": "z_score", "key": "y"}}, r"features\.x: key of the label column 'y'"),
    ({"x": {"transform": "log", "key": "c"}}, "key only applies to transform z_score or scale_0_1 or scale_by_min_max "
                                              "or bucketize or hash, not log"),
])
def test_config_refuses_bad_keys_in_one_line(tmp_path, features, message):
    config = {"name": "t", "input": {"format": "synthetic", "rows": 10}, "output": {"dir": str(tmp_path)},
              "features": features, "label": {"column": "y"}}
    with pytest.raises(ConfigError, match=message) as error:
        load_config(config)
    assert "\n" not in str(error.value)


def test_a_float_key_column_is_refused(tmp_path):
    from skewless.pipelines import run

    write_csv(tmp_path / "rows.csv", {"x": [1.5, 2.5], "w": [0.5, 0.25]})
    config = {"name": "t", "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
              "features": {"x": {"transform": "z_score", "key": "w"}}, "output": {"dir": str(tmp_path / "out")}}
    with pytest.raises(ConfigError, match=r"features\.x\.key: w holds floats"):
        run(config)
