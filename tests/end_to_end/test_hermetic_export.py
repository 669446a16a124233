"""A run using every transform and option is exported (CLI on a body model, and a raw_inputs + TransformLayer
model saved as .keras), the run directory is moved away, and a process that does not import skewless serves
raw tf.Examples from another directory: every file the graph reads is inside the export."""

import json
import os
import shutil
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft
from typer.testing import CliRunner

from rich_rows import columns_with_gaps, written_rows
from skewless.cli import app
from skewless.layers import TransformLayer, raw_inputs, serialize_raw_examples

ROWS = 120
CITIES = ["paris", "oslo", "rome"]
TAGS = ["red", "green", "blue"]


def top_city(inputs, outputs):
    """A preprocessing_fn that reads its own vocabulary asset with tf.io.read_file (not through a table)."""
    path = tft.vocabulary(inputs["city"], top_k=1, vocab_filename="top_city")
    top = tf.strings.split(tf.io.read_file(path), "\n", maxsplit=1)[0]
    return {"is_top_city": tf.cast(tf.equal(inputs["city"], top), tf.int64)}


def raw_rows():
    rng = np.random.default_rng(16)
    columns = {
        **columns_with_gaps(rng, ROWS),
        "h": rng.choice(["u", "v", "w", "z"], ROWS).tolist(),
        "city": rng.choice(CITIES, ROWS, p=[0.5, 0.3, 0.2]).tolist(),
        "body": [" ".join(rng.choice(["good", "bad", "fine", "day", "night"], rng.integers(1, 6))) for _ in range(ROWS)],
        "tags": [rng.choice(TAGS, rng.integers(0, 4)).tolist() for _ in range(ROWS)],
        "scores": [rng.normal(3, 2, rng.integers(0, 4)).round(2).tolist() for _ in range(ROWS)],
        "label": rng.integers(0, 2, ROWS).tolist(),
    }
    rows = [{name: values[i] for name, values in columns.items()} for i in range(ROWS)]
    for i, row in enumerate(rows):
        image = np.clip(rng.normal([150, 90, 60], 40, (rng.integers(9, 15), rng.integers(9, 15), 3)), 0, 255)
        row["image"] = tf.io.encode_png(image.astype(np.uint8)).numpy()
    return rows


CONFIG_FEATURES = {
    "id": {"transform": "passthrough"},
    "x": {"transform": "z_score", "fill": "mean", "missing_indicator": True},
    "m": {"transform": "passthrough", "fill": "median"},
    "k": {"transform": "passthrough", "fill": "most_frequent", "missing_indicator": True},
    "f": {"transform": "passthrough", "fill": "most_frequent"},
    "c": {"transform": "vocabulary", "fill": "most_frequent", "missing_indicator": True},
    "d": {"transform": "vocabulary", "default": "none", "missing_indicator": True},
    "s": {"transform": "log", "clip": [0, 20]},
    "r": {"transform": "scale_by_min_max", "range": [-1, 1]},
    "h": {"transform": "hash", "hash_buckets": 5},
    "city": {"transform": "vocabulary", "num_oov_buckets": 2},
    "city_x_c": {"transform": "cross", "columns": ["city", "c"], "hash_buckets": 11},
    "body": {"transform": "text_vocabulary", "output": "tfidf", "ngram_range": [1, 2], "default": ""},
    "tags": {"transform": "vocabulary", "list": True},
    "scores": {"transform": "z_score", "list": True, "max_length": 3},
    "image": {"transform": "image", "size": [6, 5]},
}
# transformed features the models below read: one of each kind of transform and option
BODY_INPUTS = {"x": (), "x_missing": (), "m": (), "k": (), "f": (), "c": (), "d_missing": (), "s": (), "r": (),
               "h": (), "city_x_c": (), "is_top_city": (), "scores": (3,), "image": (6, 5, 3)}


@pytest.fixture(scope="module")
def everything_run(tmp_path_factory):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("everything")
    rows = raw_rows()
    spec = {name: tf.io.VarLenFeature(tf.string if name in ("c", "d", "h", "city", "body", "tags", "image")
                                      else tf.float32 if name in ("x", "m", "f", "s", "r", "scores") else tf.int64)
            for name in rows[0]}
    with tf.io.TFRecordWriter(str(folder / "rows.tfrecord")) as writer:
        for record in serialize_raw_examples(rows, spec):
            writer.write(record)
    config = {
        "name": "everything",
        "input": {"format": "tfrecord", "paths": [str(folder / "rows.tfrecord")]},
        "features": CONFIG_FEATURES,
        "label": {"column": "label"},
        "preprocessing_fn": "test_hermetic_export:top_city",
        "output": {"dir": str(folder / "run"), "shards": 1},
    }
    result = run(config)
    return result.output_dir, rows


def body_model():
    keras.utils.set_random_seed(3)
    inputs = {name: keras.Input(shape, name=name) for name, shape in BODY_INPUTS.items()}
    flat = [keras.layers.Flatten()(keras.ops.cast(keras.ops.expand_dims(t, -1), "float32")) for t in inputs.values()]
    return keras.Model(inputs, keras.layers.Dense(2)(keras.layers.Concatenate()(flat)))


SERVE = """
import json, sys
import numpy as np, tensorflow as tf
assert "skewless" not in sys.modules
loaded = tf.saved_model.load(sys.argv[1])
examples = tf.constant([bytes.fromhex(line) for line in open(sys.argv[2]).read().split()])
out = {"served": loaded.signatures["serving_default"](examples=examples)["output_0"].numpy().tolist()}
for name, value in loaded.signatures["transform_features"](examples=examples).items():
    out[name] = (tf.sparse.to_dense(value) if isinstance(value, tf.SparseTensor) else value).numpy().tolist()
json.dump(out, open(sys.argv[3], "w"))
"""


def serve_elsewhere(export_dir, examples, tmp_path) -> dict:
    """serving_default and transform_features of `export_dir`, in a plain TensorFlow process run elsewhere."""
    cwd = tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    (cwd / "examples.txt").write_text("\n".join(example.hex() for example in examples))
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    subprocess.run([sys.executable, "-c", SERVE, str(export_dir), "examples.txt", "out.json"], cwd=cwd, env=env,
                   check=True, capture_output=True)
    return json.loads((cwd / "out.json").read_text())


def test_export_of_every_transform_serves_from_a_moved_run_directory(everything_run, tmp_path):
    run_dir, rows = everything_run
    batch = written_rows(run_dir)
    assert len(batch["id"]) == ROWS
    body = body_model()
    body.save(tmp_path / "body.keras")
    expected = body.predict({name: np.asarray(batch[name], np.float32) for name in BODY_INPUTS}, verbose=0)

    inputs = raw_inputs(run_dir)
    features = TransformLayer(run_dir)(inputs)
    raw_model = keras.Model(inputs, body({name: features[name] for name in BODY_INPUTS}))
    raw_model.save(tmp_path / "raw.keras")
    del raw_model, features

    result = CliRunner().invoke(app, ["export", run_dir, "--model", str(tmp_path / "body.keras"),
                                      "--out", str(tmp_path / "body_export")])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["export", run_dir, "--model", str(tmp_path / "raw.keras"),
                                      "--out", str(tmp_path / "raw_export")])
    assert result.exit_code == 0, result.output

    shutil.move(run_dir, tmp_path / "moved_run")
    serving_spec = {name: spec for name, spec in TransformLayer(tmp_path / "moved_run").raw_feature_spec.items()
                    if name != "label"}
    examples = serialize_raw_examples(sorted(rows, key=lambda row: row["id"]), serving_spec)
    for export in ("body_export", "raw_export"):
        saved = b"".join(path.read_bytes() for path in (tmp_path / export).rglob("*.pb"))
        for path in (os.fsencode(os.path.join(run_dir, "")), b"skewless-graph-"):
            at = saved.find(path)
            assert at < 0, f"{export}: {saved[at - 100:at + 200]!r}"
        assert sorted(os.listdir(tmp_path / export / "assets")) == sorted(
            os.listdir(tmp_path / "moved_run" / "transform_graph" / "transform_fn" / "assets")), export
        served = serve_elsewhere(tmp_path / export, examples, tmp_path)
        np.testing.assert_allclose(served.pop("served"), expected, rtol=1e-5, atol=1e-5)
        assert set(served) == set(batch) - {"label"}
        for name, values in served.items():
            # batch var-len rows are lists: pad them as serving pads its dense copy of a sparse output
            width = max((len(v) for v in batch[name] if isinstance(v, list)), default=0)
            padded = [v + [0] * (width - len(v)) if isinstance(v, list) and np.ndim(v) == 1 else v
                      for v in batch[name]]
            np.testing.assert_allclose(np.asarray(values, np.float64), np.asarray(padded, np.float64),
                                       rtol=1e-6, atol=1e-6, err_msg=f"{export}: {name}")
