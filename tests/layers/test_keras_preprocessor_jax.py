"""keras_preprocessor under KERAS_BACKEND=jax: bit-exact against the TF graph, trains, reloads without the run.

Keras fixes its backend at import, so the JAX half runs in a subprocess: this file run as a script.
The parent (TensorFlow backend) writes raw rows and the graph's outputs for them; the child builds the
preprocessor from a copy of the run, compares, trains a model on its outputs through tf.data, saves
model and preprocessor as one .keras file, deletes the run, reloads the file and compares again.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest

EXAMPLE_FEATURES = ["age", "capital_gain", "education", "fnlwgt", "hours_per_week", "native_country", "occupation",
                    "workclass"]


def test_jax_backend_reproduces_the_graph_and_reloads_without_the_run(example_run, tmp_path):
    pytest.importorskip("jax")
    from example_job import ODD_ROWS, example_rows

    training = example_rows(1000)
    labels = [float(row["label"] == b">50K") for row in training]
    report, rows = _run_on_jax(example_run.output_dir, training, labels, ODD_ROWS, tmp_path)

    assert sorted(report["built"]) == sorted(EXAMPLE_FEATURES)
    _assert_exact_and_reloaded(report, rows)
    assert report["int_dtype"] == "int32"  # JAX without x64; the values are the graph's int64 values


@pytest.mark.census
@pytest.mark.slow
def test_census_run_is_exact_on_jax(census_run, census_path, tmp_path):
    """The issue's bar: every census transform, all 32,561 rows, bit for bit on JAX (TF: test_keras_preprocessor)."""
    pytest.importorskip("jax")
    from example_job import CENSUS_COLUMNS, CENSUS_NUMERIC

    with open(census_path) as handle:
        training = [{name: (int(value) if name in CENSUS_NUMERIC else value) for name, value in zip(CENSUS_COLUMNS, fields)}
                    for fields in csv.reader(handle, skipinitialspace=True) if fields]
    labels = [float(row["label"] == ">50K") for row in training]
    report, rows = _run_on_jax(census_run.output_dir, training, labels, [], tmp_path)

    assert len(report["built"]) == 14
    _assert_exact_and_reloaded(report, rows)


def test_issue_31_options_are_exact_on_jax(tmp_path):
    """hash with `key` (Keras Hashing(salt=key), keyed SipHash) on strings and ints, a vocabulary's `default_value`
    (VocabularyFirst) and bucketize's `epsilon`: on JAX, the graph's ids."""
    pytest.importorskip("jax")
    from skewless.pipelines import run

    rng = np.random.default_rng(12)
    colors = rng.choice(["red", "blue", "green", "teal", "sky"], 400, p=[0.4, 0.3, 0.2, 0.05, 0.05])
    training = [{"user": f"u{n}", "zip": int(z), "color": str(c), "amount": float(a) / 8}
                for n, z, c, a in zip(rng.integers(0, 200, 400), rng.integers(1000, 9999, 400), colors,
                                      rng.integers(0, 8000, 400))]
    labels = [float(int(row["user"][1:]) % 2) for row in training]
    names = list(training[0])
    lines = [",".join(names + ["label"])] + [",".join(str(row[name]) for name in names) + f",{int(label)}"
                                             for row, label in zip(training, labels)]
    (tmp_path / "rows.csv").write_text("\n".join(lines) + "\n")
    result = run({"name": "issue31", "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
                  "features": {"user": {"transform": "hash", "hash_buckets": 500, "key": [2**63 - 1, 3]},
                               "zip": {"transform": "hash", "hash_buckets": 900, "key": [5, 8]},
                               "color": {"transform": "vocabulary", "top_k": 3, "num_oov_buckets": 0,
                                         "default_value": 7},
                               "amount": {"transform": "bucketize", "num_buckets": 8, "epsilon": 0.05}},
                  "label": {"column": "label"}, "output": {"dir": str(tmp_path / "job")}})
    report, rows = _run_on_jax(result.output_dir, training, labels, [], tmp_path)

    assert sorted(report["built"]) == ["amount", "color", "user", "zip"]
    _assert_exact_and_reloaded(report, rows)


def test_real_config_transforms_are_exact_on_jax(native_run, tmp_path):
    """clip, log, scale_by_min_max with a range, fill: median / most_frequent, missing indicators and a cross
    (example_job.NATIVE_FEATURES): on JAX, the graph's values bit for bit, before and after a reload."""
    pytest.importorskip("jax")
    from example_job import NATIVE_FEATURES, ODD_ROWS, example_rows

    training = example_rows(1000)
    labels = [float(row["label"] == b">50K") for row in training]
    report, rows = _run_on_jax(native_run.output_dir, training, labels, ODD_ROWS, tmp_path)

    assert sorted(report["built"]) == sorted([*NATIVE_FEATURES, "capital_gain_missing", "occupation_missing"])
    _assert_exact_and_reloaded(report, rows)


def test_computed_fills_are_exact_on_jax(gaps_job, tmp_path):
    """fill: mean of an int column (float32), median, most_frequent of floats and strings, ±inf missing: on JAX."""
    pytest.importorskip("jax")
    from example_job import GAPS_FEATURES

    result, rows = gaps_job
    labels = [float(row["id"] % 2) for row in rows]
    report, checked = _run_on_jax(result.output_dir, rows, labels, [], tmp_path)

    assert sorted(report["built"]) == sorted([*GAPS_FEATURES, "x_missing", "f_missing"])
    _assert_exact_and_reloaded(report, checked)


def _run_on_jax(run_dir, training: list, labels: list, extra_rows: list, tmp_path) -> tuple[dict, list]:
    """Writes rows and the TF graph's outputs for them, runs the JAX child on a copy of the run."""
    from skewless.layers import TransformLayer, transform_raw_rows
    from skewless.layers.keras_preprocessor import plan_preprocessor
    from skewless.layers.probe_rows import probe_rows
    from skewless.layers.transform_graph import specs_to_json

    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    graph = TransformLayer(copy)
    spec = {name: value for name, value in graph.raw_feature_spec.items() if name != graph.label}
    rows = training + extra_rows + probe_rows(spec, plan_preprocessor(copy), 1000, seed=3)
    np.savez(tmp_path / "expected.npz", **transform_raw_rows(graph, rows))
    (tmp_path / "inputs.json").write_text(json.dumps({
        "spec": specs_to_json(spec),
        "rows": [{name: _text(value) for name, value in row.items()} for row in rows],
        "labels": labels,
    }))
    env = {**os.environ, "KERAS_BACKEND": "jax", "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "3"}
    child = subprocess.run([sys.executable, __file__, str(copy), str(tmp_path)], env=env,
                           capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stderr[-4000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["backend"] == "jax"
    assert not copy.exists()
    return report, rows


def _assert_exact_and_reloaded(report: dict, rows: list) -> None:
    assert sorted(report["built"]) == sorted(report["loaded"])
    for stage in ("built", "loaded"):
        for name, differences in report[stage].items():
            assert differences == {"rows": len(rows), "different": 0}, (stage, name, differences)
    assert report["archive"] == ["config.json", "metadata.json", "model.weights.h5"]
    assert np.isfinite(report["loss"]).all() and report["loss"][-1] < report["loss"][0]
    assert report["predictions_equal_after_reload"]


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def _differences(outputs, expected) -> dict:
    """Per feature: rows compared and rows not equal (floats: not bit-identical; NaN equals NaN)."""
    result = {}
    for name, value in outputs.items():
        actual, wanted = np.asarray(value), expected[name]
        if wanted.dtype.kind == "f":
            same = (actual.astype(np.float32).view(np.uint32) == wanted.view(np.uint32)) | (
                np.isnan(actual) & np.isnan(wanted))
        else:
            same = actual.astype(np.int64) == wanted
        result[name] = {"rows": len(wanted), "different": int(np.count_nonzero(~same))}
    return result


def _child(run_dir: str, work_dir: str) -> None:
    """The JAX side (run as a script with KERAS_BACKEND=jax)."""
    import keras
    import tensorflow as tf

    from skewless.layers import RawFeatureModel, keras_preprocessor, raw_feature_batch, serialize_raw_examples
    from skewless.layers.transform_graph import specs_from_json

    inputs = json.loads(open(os.path.join(work_dir, "inputs.json")).read())
    expected = np.load(os.path.join(work_dir, "expected.npz"))
    spec = specs_from_json(inputs["spec"])
    batch = raw_feature_batch(inputs["rows"], spec)
    report = {"backend": keras.backend.backend()}

    preprocessor = keras_preprocessor(run_dir)
    built = preprocessor(batch)
    report["built"] = _differences(built, expected)
    ids = [name for name, feature in preprocessor.feature_specs.items() if not feature["dtype"].startswith("float")]
    report["int_dtype"] = str(np.asarray(built[ids[0]]).dtype)

    # Train on the preprocessor's outputs, computed in tf.data; the model itself is jit-compiled JAX.
    count = len(inputs["labels"])
    parsed = tf.io.parse_example(tf.constant(serialize_raw_examples(inputs["rows"][:count], spec)), spec)
    dataset = (tf.data.Dataset.from_tensor_slices((parsed, np.array(inputs["labels"], np.float32)))
               .batch(100).map(lambda raw, label: (preprocessor(raw), label)))
    features = {name: keras.Input(shape=(), dtype=feature["dtype"], name=name)
                for name, feature in preprocessor.feature_specs.items()}
    columns = []
    for name, feature in preprocessor.feature_specs.items():
        column = keras.ops.expand_dims(features[name], -1)
        if not feature["dtype"].startswith("float"):  # ids: vocabulary, bucket or hash bucket
            column = keras.layers.Flatten()(keras.layers.Embedding(1000, 2)(column))
        columns.append(column)
    hidden = keras.layers.Dense(16, activation="relu")(keras.layers.Concatenate()(columns))
    body = keras.Model(features, keras.layers.Dense(1, activation="sigmoid")(hidden))
    body.compile(keras.optimizers.Adam(0.01), "binary_crossentropy")
    report["loss"] = body.fit(dataset, epochs=4, verbose=0).history["loss"]

    model = RawFeatureModel(preprocessor, body)
    before = np.asarray(model(batch))
    path = os.path.join(work_dir, "model.keras")
    model.save(path)
    report["archive"] = sorted(zipfile.ZipFile(path).namelist())
    shutil.rmtree(run_dir)

    loaded = keras.models.load_model(path)
    report["loaded"] = _differences(loaded.preprocessor(batch), expected)
    report["predictions_equal_after_reload"] = np.asarray(loaded(batch)).tobytes() == before.tobytes()
    with open(os.path.join(work_dir, "report.json"), "w") as handle:
        json.dump(report, handle)


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
