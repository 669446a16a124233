"""`skewless export` / export_serving_model: TF Serving SavedModels that take raw data."""

import os
import shutil
import subprocess

import keras
import numpy as np
import pytest
import tensorflow as tf
from example_job import EXAMPLE_CONFIG, example_config, example_rows
from graph_ops import ops_run
from typer.testing import CliRunner

from skewless.cli import app
from skewless.errors import OutputExistsError, SchemaError
from skewless.layers import (
    TransformLayer,
    export_serving_model,
    raw_inputs,
    read_spec_file,
    serialize_raw_examples,
    transform_raw_rows,
    transform_raw_rows_exported,
)
from skewless.layers.fixed_size_calls import in_fixed_size_calls
from skewless.pipelines.reading.synthetic_rows import synthetic_rows

UNSEEN = {"workclass": b"Astronaut", "education": b"Kindergarten", "occupation": None, "capital_gain": None}


@pytest.fixture(scope="module")
def rows():
    """Raw rows of the example run without their label, the last with unseen categories and missing values."""
    seed = EXAMPLE_CONFIG["input"]["seed"]
    rows = [row for _, table in synthetic_rows(seed, 0, 40) for row in table.to_pylist()]
    rows = [{name: value for name, value in row.items() if name != "label"} for row in rows]
    return rows + [dict(rows[0], **UNSEEN)]


@pytest.fixture(scope="module")
def layer(example_run):
    return TransformLayer(example_run.output_dir)


def transformed_model():
    """A model on transformed features: a subset, with (None, 1) inputs and dtypes unlike the graph's."""
    inputs = {
        "age": keras.Input((1,), name="age"),
        "capital_gain": keras.Input((1,), dtype="float64", name="capital_gain"),
        "education": keras.Input((), dtype="int32", name="education"),
        "occupation": keras.Input((1,), dtype="int64", name="occupation"),
    }
    embedded = keras.layers.Flatten()(keras.layers.Embedding(20, 2)(inputs["occupation"]))
    hidden = keras.layers.Concatenate()([
        inputs["age"], keras.ops.cast(inputs["capital_gain"], "float32"), keras.ops.one_hot(inputs["education"], 8),
        embedded,
    ])
    return keras.Model(inputs, keras.layers.Dense(2, activation="softmax")(hidden))


def in_memory(model, transformed):
    """The model's outputs on transformed rows, called 24 rows at a time as the export calls it."""
    return in_fixed_size_calls(lambda features: model(features, training=False), {
        "age": transformed["age"][:, None],
        "capital_gain": transformed["capital_gain"][:, None].astype(np.float64),
        "education": transformed["education"].astype(np.int32),
        "occupation": transformed["occupation"][:, None],
    }).numpy()


def test_cli_exports_a_model_on_transformed_features(example_run, layer, rows, tmp_path):
    keras.utils.set_random_seed(1)
    model = transformed_model()
    model.save(tmp_path / "model.keras")
    out = tmp_path / "export"

    result = CliRunner().invoke(
        app, ["export", example_run.output_dir, "--model", str(tmp_path / "model.keras"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "serving_default, predict_raw, transform_features" in result.output

    transformed = transform_raw_rows(layer, rows)
    expected = in_memory(model, transformed)
    served = tf.saved_model.load(str(out))
    assert sorted(served.signatures) == ["classification", "predict_raw", "serving_default", "transform_features"]
    spec = read_spec_file(out)
    assert spec["label"] == "label" and "label" not in spec["raw"] and "label" not in spec["transformed"]

    examples = tf.constant(serialize_raw_examples(rows, spec["raw"]))
    by_examples = served.signatures["serving_default"](examples=examples)["output_0"].numpy()
    # Bit for bit: the export holds the Embedding's table as a constant (serving_head) and runs the model's ops.
    np.testing.assert_array_equal(by_examples.view(np.uint32), expected.view(np.uint32))

    # predict_raw takes one value per row for every feature: the last row (missing values) is left out.
    columns = {name: tf.constant([row[name] for row in rows[:-1]], dtype) for name, dtype in
               (("age", tf.int64), ("hours_per_week", tf.int64), ("fnlwgt", tf.float32), ("workclass", tf.string),
                ("education", tf.string), ("native_country", tf.string))}
    columns["occupation"] = tf.constant([row["occupation"] or b"unknown" for row in rows[:-1]])
    columns["capital_gain"] = tf.constant([0.0 if row["capital_gain"] is None else row["capital_gain"]
                                           for row in rows[:-1]])
    by_raw = served.signatures["predict_raw"](**columns)["output_0"].numpy()
    np.testing.assert_allclose(by_raw, expected[:-1], rtol=1e-6, atol=1e-7)

    features = served.signatures["transform_features"](examples=examples)
    assert sorted(features) == sorted(set(layer.transformed_feature_spec) - {"label"})
    for name, value in features.items():
        np.testing.assert_array_equal(value.numpy(), transformed[name], err_msg=name)

    listing = subprocess.run(["saved_model_cli", "show", "--all", "--dir", str(out)], capture_output=True, text=True)
    assert listing.returncode == 0, listing.stderr
    for signature in ("serving_default", "predict_raw", "transform_features"):
        assert f"signature_def['{signature}']" in listing.stdout
    assert "inputs['examples']" in listing.stdout and "inputs['label']" not in listing.stdout

    again = CliRunner().invoke(app, ["export", example_run.output_dir, "--model", str(tmp_path / "model.keras"),
                                     "--out", str(out)])
    assert again.exit_code == 2
    assert again.stderr.strip() == f"skewless: error: {out}: already exists (pass overwrite=True / --overwrite to replace it)"


def test_exported_full_model_serves_raw_examples_after_the_run_is_gone(example_run, layer, rows, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(example_run.output_dir, run_dir)
    keras.utils.set_random_seed(2)
    inputs = raw_inputs(run_dir)
    features = TransformLayer(run_dir)(inputs)
    hidden = keras.layers.Concatenate()([keras.ops.expand_dims(features[name], -1) for name in
                                         ("age", "fnlwgt", "capital_gain", "occupation", "workclass")])
    model = keras.Model(inputs, {"score": keras.layers.Dense(1)(keras.ops.cast(hidden, "float32"))})
    parse_spec = {name: spec for name, spec in layer.raw_feature_spec.items() if name != "label"}
    examples = tf.constant(serialize_raw_examples(rows, parse_spec))
    expected = model.predict(tf.io.parse_example(examples, parse_spec), verbose=0)["score"]

    export_serving_model(run_dir, model, tmp_path / "export")
    shutil.rmtree(run_dir)
    served = tf.saved_model.load(str(tmp_path / "export"))

    scores = served.signatures["serving_default"](examples=examples)["score"].numpy()
    np.testing.assert_allclose(scores, expected, rtol=1e-6, atol=1e-6)
    exported = transform_raw_rows_exported(tmp_path / "export", rows)
    for name, value in transform_raw_rows(layer, rows).items():
        np.testing.assert_array_equal(exported[name], value, err_msg=name)
    # The unseen categories went to the OOV buckets, the missing values took the defaults.
    known = dict(rows[0], occupation=b"unknown", capital_gain=0.0)
    reference = transform_raw_rows(layer, [known])
    assert exported["occupation"][-1] == reference["occupation"][0]
    assert exported["capital_gain"][-1] == reference["capital_gain"][0]
    assert exported["workclass"][-1] > exported["workclass"][:-1].max()
    with pytest.raises(tf.errors.InvalidArgumentError, match="fnlwgt"):
        served.signatures["serving_default"](
            examples=tf.constant(serialize_raw_examples([dict(rows[0], fnlwgt=None)], parse_spec))
        )


def test_export_refuses_models_it_cannot_feed(example_run, tmp_path):
    label_input = keras.Input((), dtype="int64", name="label")
    with pytest.raises(SchemaError, match="model input 'label' is computed from the label column"):
        export_serving_model(example_run.output_dir, keras.Model(label_input, label_input), tmp_path / "a")
    typo = keras.Input((), name="agee")
    with pytest.raises(SchemaError, match=r"model input 'agee' is not a transformed feature of the run \(those are: age,"):
        export_serving_model(example_run.output_dir, keras.Model(typo, typo), tmp_path / "b")
    os.makedirs(tmp_path / "c" / "1")
    age = keras.Input((), name="age")
    with pytest.raises(OutputExistsError):
        export_serving_model(example_run.output_dir, keras.Model(age, age), tmp_path / "c")
    export_serving_model(example_run.output_dir, keras.Model(age, age), tmp_path / "c", overwrite=True)
    assert tf.saved_model.load(str(tmp_path / "c")).signatures["serving_default"] is not None


def test_embeddings_read_an_unseen_value_as_keras_does_where_ids_can_be_negative(tmp_path):
    """The export gathers a hash's ids (never negative) without Keras 3's negative-id mapping, and keeps the mapping
    for a vocabulary without OOV buckets, whose unseen value is -1 though its schema records ids from 0: served,
    the -1 reads the table's last row, as the model itself reads it."""
    from skewless.pipelines import run

    features = {"workclass": {"transform": "vocabulary", "num_oov_buckets": 0},
                "education": {"transform": "hash", "hash_buckets": 7}, "age": {"transform": "z_score"}}
    run_dir = run(example_config(tmp_path / "run", features=features)).output_dir
    layer = TransformLayer(run_dir)
    keras.utils.set_random_seed(5)
    inputs = {name: keras.Input((), dtype="int64", name=name) for name in ("workclass", "education")}
    embedded = [keras.layers.Embedding(30, 2, name=f"table_{name}")(inputs[name]) for name in inputs]
    model = keras.Model(inputs, keras.layers.Dense(1)(keras.layers.Concatenate()(embedded)))
    spec = {name: value for name, value in layer.raw_feature_spec.items() if name != layer.label}
    rows = [{name: value for name, value in row.items() if name != layer.label} for row in example_rows(6)]
    rows[-1] = dict(rows[-1], workclass=b"Astronaut", education=b"Kindergarten")
    transformed = transform_raw_rows(layer, rows)
    assert transformed["workclass"][-1] == -1  # unseen, no OOV bucket: tf.Transform's default id
    expected = in_fixed_size_calls(lambda ids: model(ids, training=False), {name: transformed[name] for name in inputs})

    export_serving_model(run_dir, model, tmp_path / "export")
    serve = tf.saved_model.load(str(tmp_path / "export")).signatures["serving_default"]
    served = serve(examples=tf.constant(serialize_raw_examples(rows, spec)))["output_0"].numpy()
    np.testing.assert_array_equal(served.view(np.uint32), expected.numpy().view(np.uint32))

    fresh = tf.saved_model.load(str(tmp_path / "export")).signatures["serving_default"]  # never called yet
    ops = ops_run(fresh, examples=tf.constant(serialize_raw_examples(rows[:1], spec)))
    # only the vocabulary's ids are mapped (one SelectV2 each time the graph holds the model: called once, and in
    # the loop that calls it 24 rows at a time, layers/fixed_size_calls.py); both mapped would be four
    assert ops.count("GatherV2") >= 2 and ops.count("SelectV2") == 2
