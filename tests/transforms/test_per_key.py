"""`key: COLUMN` on z_score, scale_0_1, scale_by_min_max and bucketize: the statistics per value of another column.

The written rows must equal what stock tf.Transform writes for the same rows with `tft.scale_to_z_score_per_key`,
`tft.scale_to_0_1_per_key`, `tft.scale_by_min_max_per_key` and `tft.bucketize_per_key` (an
AnalyzeAndTransformDataset run in the test), serving (TransformLayer on raw tf.Examples) must equal the written
rows, a key the analysis never saw must get tf.Transform's fallback, and the native Keras preprocessor must
refuse the keyed features with a reason. List columns (`list: true`, rows with empty and missing lists) and fixed
shapes (`shape`, with and without `elementwise`) take their row's key for every value, as tf.Transform's per-key
mappers do for a SparseTensor with a dense key (issue 45 item 1); their statistics per key must also equal NumPy's.
"""

import json

import numpy as np
import pytest

from rich_rows import assert_bit_equal, served_rows, with_gaps, write_csv, written_rows
from skewless.config import load_config
from skewless.errors import ConfigError

ROWS = 600
KEYED = {  # feature: (its options, the key column)
    "p_z": ({"transform": "z_score"}, "c"),
    "p_01": ({"transform": "scale_0_1"}, "c"),
    "p_mm": ({"transform": "scale_by_min_max", "range": [-1.0, 1.0], "clip": [10.0, 90.0]}, "store"),
    "p_b": ({"transform": "bucketize", "num_buckets": 4}, "c"),
}
LISTED = {  # list features: 0..4 values a row, some rows an empty list, some none
    "l_z": ({"transform": "z_score", "list": True}, "c"),
    "l_01": ({"transform": "scale_0_1", "list": True}, "c"),
    "l_mm": ({"transform": "scale_by_min_max", "list": True, "range": [-1.0, 1.0], "clip": [10.0, 90.0]}, "store"),
    "l_b": ({"transform": "bucketize", "list": True, "num_buckets": 4}, "c"),
    "l_zp": ({"transform": "z_score", "list": True, "max_length": 3}, "store"),  # padded after the scaling
}
SHAPED = {  # fixed shapes
    "s_z": ({"transform": "z_score", "shape": [3]}, "c"),
    "s_01": ({"transform": "scale_0_1", "shape": [2, 3]}, "store"),
    "s_zz": ({"transform": "z_score", "shape": [2, 2]}, "c"),
    "s_ze": ({"transform": "z_score", "shape": [2, 2], "elementwise": True}, "c"),
    "s_mme": ({"transform": "scale_by_min_max", "shape": [3], "elementwise": True, "range": [-2.0, 2.0]}, "c"),
    "s_b": ({"transform": "bucketize", "shape": [2, 2], "num_buckets": 3}, "c"),
}
ALL_KEYED = {**KEYED, **LISTED, **SHAPED}
EMPTY_LIST, NO_LIST = 3, 5  # rows with index % 17 == 3 have an empty list, == 5 none (the JSON key left out)


def _raw_rows():
    """Columns of numbers exact in float32 (eighths), so the JSON text and the stock rows hold the same values.

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
    for name in LISTED:
        lists = [[int(rng.integers(0, 800)) / 8 + shift[key] for _ in range(rng.integers(1, 5))] for key in c]
        columns[name] = [[] if i % 17 == EMPTY_LIST else None if i % 17 == NO_LIST else values
                         for i, values in enumerate(lists)]
    for name, (options, _) in SHAPED.items():
        size = int(np.prod(options["shape"]))
        # positions differ in location, so statistics per position (elementwise) differ from those over all
        columns[name] = [[int(rng.integers(0, 400)) / 8 + shift[key] + 10 * position for position in range(size)]
                         for key in c]
    return columns


def _write_jsonl(path, raw):
    """One JSON object a row; None leaves the key out (a missing value), [] stays an empty list."""
    rows = ({name: values[i] for name, values in raw.items() if values[i] is not None} for i in range(ROWS))
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _config(folder, jsonl):
    features = {"id": {"transform": "passthrough"}, "c": {"transform": "vocabulary", "default": "zz"}}
    features.update({name: {**options, "key": key} for name, (options, key) in ALL_KEYED.items()})
    return {"name": "per_key", "input": {"format": "jsonl", "paths": [str(jsonl)]},
            "features": features, "label": {"column": "label"}, "output": {"dir": str(folder / "out"), "shards": 1}}


@pytest.fixture(scope="module")
def keyed_run(tmp_path_factory):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("per_key")
    raw = _raw_rows()
    _write_jsonl(folder / "rows.jsonl", raw)
    return run(_config(folder, folder / "rows.jsonl")), raw


def _stock_rows(raw, temp_dir):
    """The same transforms written by hand with tf.Transform's per-key mappers, on the same rows."""
    import tensorflow as tf
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam

    spec = {"id": tf.io.FixedLenFeature([], tf.int64), "c": tf.io.VarLenFeature(tf.string),
            "store": tf.io.FixedLenFeature([], tf.int64),
            **{name: tf.io.FixedLenFeature([], tf.float32) for name in KEYED},
            **{name: tf.io.VarLenFeature(tf.float32) for name in LISTED},
            **{name: tf.io.FixedLenFeature(options["shape"], tf.float32) for name, (options, _) in SHAPED.items()}}

    def preprocessing_fn(inputs):
        c = tf.squeeze(tft.sparse_tensor_to_dense_with_shape(inputs["c"], [None, 1], default_value="zz"), axis=1)
        store = tf.strings.as_string(inputs["store"])

        def per_value(values, key):  # bucketize_per_key wants a key per value: the row's, at the list's indices
            return tf.SparseTensor(values.indices, tf.gather(key, values.indices[:, 0]), values.dense_shape)

        def flat(mapper, values, key, *args):  # a shape's values in one axis, then shaped back
            size = int(np.prod(values.shape[1:]))
            return tf.reshape(mapper(tf.reshape(values, [-1, size]), key, *args), tf.shape(values))

        s_b = tf.reshape(inputs["s_b"], [-1])
        s_b_keys = tf.reshape(tf.broadcast_to(c[:, None, None], tf.shape(inputs["s_b"])), [-1])
        return {
            "id": inputs["id"],
            "p_z": tft.scale_to_z_score_per_key(inputs["p_z"], c),
            "p_01": tft.scale_to_0_1_per_key(inputs["p_01"], c),
            "p_mm": tft.scale_by_min_max_per_key(tf.clip_by_value(inputs["p_mm"], 10.0, 90.0), store, -1.0, 1.0),
            "p_b": tft.bucketize_per_key(inputs["p_b"], c, 4),
            # a SparseTensor with a dense key: tf.Transform takes each value's key from its row
            "l_z": tft.scale_to_z_score_per_key(inputs["l_z"], c),
            "l_01": tft.scale_to_0_1_per_key(inputs["l_01"], c),
            "l_mm": tft.scale_by_min_max_per_key(tf.sparse.map_values(tf.clip_by_value, inputs["l_mm"], 10.0, 90.0),
                                                 store, -1.0, 1.0),
            "l_b": tft.bucketize_per_key(inputs["l_b"], per_value(inputs["l_b"], c), 4),
            "l_zp": tft.scale_to_z_score_per_key(inputs["l_zp"], store),
            "s_z": tft.scale_to_z_score_per_key(inputs["s_z"], c),
            "s_01": tft.scale_to_0_1_per_key(inputs["s_01"], store),
            "s_zz": flat(tft.scale_to_z_score_per_key, inputs["s_zz"], c),
            "s_ze": tft.scale_to_z_score_per_key(inputs["s_ze"], c, elementwise=True),
            "s_mme": tft.scale_by_min_max_per_key(inputs["s_mme"], c, -2.0, 2.0, elementwise=True),
            "s_b": tf.reshape(tft.bucketize_per_key(s_b, s_b_keys, 3), tf.shape(inputs["s_b"])),
        }

    rows = [{"id": raw["id"][i], "c": [] if raw["c"][i] is None else [raw["c"][i].encode()],
             "store": raw["store"][i], **{name: np.float32(raw[name][i]) for name in KEYED},
             **{name: np.asarray(raw[name][i] or [], np.float32) for name in LISTED},
             **{name: np.asarray(raw[name][i], np.float32).reshape(options["shape"])
                for name, (options, _) in SHAPED.items()}} for i in range(ROWS)]
    # one batch of every row, as the job's one work unit (shards: 1) gives them: tf.Transform sums float32 means
    # and variances batch by batch, so other batches would put the z-scores a few ulps apart
    with tft_beam.Context(temp_dir=str(temp_dir), desired_batch_size=ROWS):
        (transformed, _), _ = (rows, tft.DatasetMetadata.from_feature_spec(spec)) | (
            tft_beam.AnalyzeAndTransformDataset(preprocessing_fn))
    by_id = sorted(transformed, key=lambda row: row["id"])
    stock = {name: [np.asarray(row[name]).item() for row in by_id] for name in KEYED}
    stock.update({name: [np.asarray(row[name]).tolist() for row in by_id] for name in [*LISTED, *SHAPED]})
    # max_length pads (pad_value 0.0) or truncates the scaled values to 3
    stock["l_zp"] = [(values + [0.0] * 3)[:3] for values in stock["l_zp"]]
    return stock


def test_written_rows_equal_stock_tf_transform_per_key(keyed_run, tmp_path):
    result, raw = keyed_run
    assert result.rows["quarantined"] == 0
    written, stock = written_rows(result.output_dir), _stock_rows(raw, tmp_path)
    assert_bit_equal(written, stock, KEYED)
    for name in [*LISTED, *SHAPED]:
        # lists compare row by row (an empty or missing list stays empty); floats are float32 on both sides
        assert written[name] == stock[name], name
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


def _by_key(raw, name, key_column):
    """{key: (the indices of its rows, their values: a float64 array a row, flat)}; a missing key is "zz"."""
    keys = [("zz" if key is None else key) if key_column == "c" else str(key) for key in raw[key_column]]
    groups = {}
    for key in sorted(set(keys)):
        rows = [i for i in range(ROWS) if keys[i] == key]
        groups[key] = (rows, [np.asarray(raw[name][i] or [], np.float64) for i in rows])
    return groups


def test_keyed_lists_and_shapes_take_their_rows_key_for_every_value(keyed_run):
    """NumPy's statistics per key over every value of the rows of that key (per position with elementwise); the
    z-scores within 1e-4: tf.Transform sums the means and variances in float32."""
    result, raw = keyed_run
    written = written_rows(result.output_dir)
    for name in ("l_z", "s_z", "s_zz"):
        for key, (rows, values) in _by_key(raw, name, "c").items():
            every = np.concatenate(values)
            mean, std = every.mean(), every.std()
            for i, row_values in zip(rows, values):
                expected = (row_values - mean) / std if std else row_values - mean
                np.testing.assert_allclose(np.ravel(written[name][i]), expected, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name} {key}")
    for key, (rows, values) in _by_key(raw, "s_ze", "c").items():
        stacked = np.stack(values)
        expected = (stacked - stacked.mean(axis=0)) / np.where(stacked.std(axis=0) == 0, 1, stacked.std(axis=0))
        np.testing.assert_allclose(np.asarray([np.ravel(written["s_ze"][i]) for i in rows]), expected, rtol=1e-4,
                                   atol=1e-4, err_msg=key)
    for key, (rows, values) in _by_key(raw, "l_01", "c").items():
        every = np.concatenate(values)
        if every.min() < every.max():
            scaled = np.concatenate([written["l_01"][i] for i in rows])
            np.testing.assert_allclose(scaled, (every - every.min()) / (every.max() - every.min()), rtol=1e-6,
                                       atol=1e-7, err_msg=key)
            assert scaled.min() == 0 and scaled.max() == 1, key
    for key, (rows, values) in _by_key(raw, "l_b", "c").items():
        if sum(map(len, values)) > 100:
            ids = np.concatenate([written["l_b"][i] for i in rows])
            counts = np.bincount(ids.astype(int), minlength=4)
            assert len(counts) == 4 and counts.min() > 0.15 * len(ids), (key, counts)  # quantiles of that key
    # an empty or missing list stays empty (with max_length: three pad values)
    for i in range(ROWS):
        if i % 17 in (EMPTY_LIST, NO_LIST):
            assert written["l_z"][i] == [] and written["l_b"][i] == [] and written["l_zp"][i] == [0.0] * 3, i


def test_serving_equals_the_written_rows_and_unseen_keys_fall_back(keyed_run):
    from skewless.layers import TransformLayer

    result, raw = keyed_run
    layer = TransformLayer(result.output_dir)
    assert {"c", "store"} <= set(layer.raw_feature_spec)  # the key columns are serving inputs
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(ROWS)]
    served, written = served_rows(layer, rows), written_rows(result.output_dir)
    for name in ALL_KEYED:
        assert served[name] == written[name], name
    unseen = served_rows(layer, [{"id": 0, "c": "new", "store": 9, "p_z": 3.5, "p_01": 2.0, "p_mm": 20.0,
                                  "p_b": 1.0, "l_z": [3.5, -1.25], "l_01": [2.0, 0.5], "l_mm": [20.0], "l_b": [1.0],
                                  "l_zp": [], "s_z": [3.5, 0.5, 1.0], "s_01": [2.0] * 6, "s_zz": [1.5] * 4,
                                  "s_ze": [1.5] * 4, "s_mme": [0.0, 1.0, 2.0], "s_b": [1.0] * 4}])
    assert unseen["p_z"] == [3.5]  # tf.Transform leaves the value of an unknown key unscaled
    assert unseen["p_01"] == [float(np.float32(1 / (1 + np.exp(-2.0))))]  # and the 0-1 scale takes its sigmoid
    assert unseen["p_b"] == [-1]  # and bucketize_per_key gives -1
    # so does every value of a list or a shape whose row's key is unknown
    sigmoid = lambda x: float(np.float32(1 / (1 + np.exp(-x))))  # float64, rounded once, as the p_01 case
    assert unseen["l_z"] == [[3.5, -1.25]] and unseen["s_z"] == [[3.5, 0.5, 1.0]]
    assert unseen["s_zz"] == unseen["s_ze"] == [[[1.5, 1.5], [1.5, 1.5]]]
    assert unseen["l_01"] == [[sigmoid(2.0), sigmoid(0.5)]] and unseen["s_01"] == [[[sigmoid(2.0)] * 3] * 2]
    assert unseen["l_b"] == [[-1]] and unseen["s_b"] == [[[-1, -1], [-1, -1]]]
    assert unseen["l_zp"] == [[0.0, 0.0, 0.0]]


def test_native_preprocessor_refuses_keyed_features_with_a_reason(keyed_run):
    from skewless.layers import check_preprocessor

    result, raw = keyed_run
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(0, ROWS, 5)]
    statuses = {f.name: (f.status, f.reason) for f in check_preprocessor(result.output_dir, rows=rows, sample=200).features}
    # scale_by_min_max has native layers now (its range and clip too), but not with a key
    for name in ("p_z", "p_01", "p_mm", "p_b"):
        assert statuses[name] == ("unsupported", "option key has no exact Keras equivalent in skewless yet"), name
    for name in [*LISTED, *SHAPED]:  # nor keyed lists and shapes
        assert statuses[name][0] == "unsupported" and statuses[name][1], name
    assert statuses["c"] == ("exact", None)


@pytest.mark.parametrize("features, message", [
    ({"x": {"transform": "z_score", "key": [1, 2]}}, r"features\.x: key of transform z_score names a column"),
    ({"x": {"transform": "scale_0_1", "key": "x"}}, r"features\.x: cannot key by itself"),
    ({"x": {"transform": "bucketize", "num_buckets": 3, "key": "c", "shape": [2], "elementwise": True}},
     r"features\.x: elementwise: true with key: tf\.Transform's per-key bucketize has no statistics per position"),
    ({"x": {"transform": "z_score", "key": "c"}, "c": {"transform": "vocabulary", "list": True}},
     r"features\.x: cannot key by 'c' \(a cross, an image or a list\)"),
    ({"x": {"transform": "z_score", "key": "c"}, "c": {"transform": "z_score", "shape": [2]}},
     r"features\.x: cannot key by 'c' \(shape \[2\]: several values per row\)"),
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
