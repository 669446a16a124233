"""`transform: hash` with `key: [k0, k1]`: keyed SipHash ids equal to stock `tft.hash_strings(key=...)` on the same
rows (an AnalyzeAndTransformDataset run in the test), serving equal to the written rows, the native Keras
`Hashing(salt=key)` exact, and bad keys refused in one line."""

import numpy as np
import pytest
import tensorflow as tf

from rich_rows import served_rows, write_csv, written_rows
from skewless.config import load_config
from skewless.errors import ConfigError

ROWS = 400
KEY = [2**63 - 5, 7]  # the largest numbers TensorFlow's int64 key attribute holds


@pytest.fixture(scope="module")
def hash_run(tmp_path_factory):
    from skewless.pipelines import run

    rng = np.random.default_rng(5)
    folder = tmp_path_factory.mktemp("keyed_hash")
    raw = {"id": list(range(ROWS)),
           "user": [f"user{n}" for n in rng.integers(0, 300, ROWS)],
           "zip": rng.integers(10000, 99999, ROWS).tolist(),  # integers hash by their decimal text
           "plain": [f"user{n}" for n in rng.integers(0, 300, ROWS)],
           "label": rng.integers(0, 2, ROWS).tolist()}
    write_csv(folder / "rows.csv", raw)
    config = {"name": "keyed_hash", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
              "features": {"id": {"transform": "passthrough"},
                           "user": {"transform": "hash", "hash_buckets": 50, "key": KEY},
                           "zip": {"transform": "hash", "hash_buckets": 1000, "key": [1, 2]},
                           "plain": {"transform": "hash", "hash_buckets": 50}},
              "label": {"column": "label"}, "output": {"dir": str(folder / "out"), "shards": 2}}
    return run(config), raw


def _stock_rows(raw, temp_dir):
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam

    spec = {"id": tf.io.FixedLenFeature([], tf.int64), "user": tf.io.FixedLenFeature([], tf.string),
            "zip": tf.io.FixedLenFeature([], tf.int64), "plain": tf.io.FixedLenFeature([], tf.string)}

    def preprocessing_fn(inputs):
        return {"id": inputs["id"], "user": tft.hash_strings(inputs["user"], 50, key=KEY),
                "zip": tft.hash_strings(tf.strings.as_string(inputs["zip"]), 1000, key=[1, 2]),
                "plain": tft.hash_strings(inputs["plain"], 50)}

    rows = [{"id": raw["id"][i], "user": raw["user"][i].encode(), "zip": raw["zip"][i],
             "plain": raw["plain"][i].encode()} for i in range(ROWS)]
    with tft_beam.Context(temp_dir=str(temp_dir)):
        (transformed, _), _ = (rows, tft.DatasetMetadata.from_feature_spec(spec)) | (
            tft_beam.AnalyzeAndTransformDataset(preprocessing_fn))
    by_id = sorted(transformed, key=lambda row: row["id"])
    return {name: [int(row[name]) for row in by_id] for name in ("user", "zip", "plain")}


def test_written_ids_equal_stock_tf_transform(hash_run, tmp_path):
    result, raw = hash_run
    written, stock = written_rows(result.output_dir), _stock_rows(raw, tmp_path)
    for name in ("user", "zip", "plain"):
        assert written[name] == stock[name], name
    # the key changes the ids: the same strings hashed unkeyed (FarmHash) land elsewhere
    unkeyed = tf.strings.to_hash_bucket_fast(raw["user"], 50).numpy().tolist()
    assert sum(a != b for a, b in zip(written["user"], unkeyed)) > ROWS * 0.8


def test_serving_equals_the_written_rows(hash_run):
    from skewless.layers import TransformLayer

    result, raw = hash_run
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(ROWS)]
    served, written = served_rows(TransformLayer(result.output_dir), rows), written_rows(result.output_dir)
    for name in ("user", "zip", "plain"):
        assert served[name] == written[name], name


def test_native_keras_hashing_with_the_key_as_salt_is_exact(hash_run):
    from skewless.layers import check_preprocessor

    result, raw = hash_run
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(ROWS)]
    check = check_preprocessor(result.output_dir, rows=rows, sample=300)
    statuses = {f.name: (f.status, f.reason, f.differences) for f in check.features}
    for name in ("user", "zip", "plain"):
        assert statuses[name] == ("exact", None, 0), name


@pytest.mark.parametrize("key", [[1], [1, 2, 3], [-1, 2], [2**63, 0], "user"])
def test_config_refuses_a_bad_key_in_one_line(tmp_path, key):
    config = {"name": "t", "input": {"format": "synthetic", "rows": 10}, "output": {"dir": str(tmp_path)},
              "features": {"x": {"transform": "hash", "hash_buckets": 8, "key": key}}}
    with pytest.raises(ConfigError, match=r"features\.x: key .* of transform hash must be two integers in \[0, 2\^63\)"):
        load_config(config)
