"""TransformLayer and raw_inputs: the run's own tf.Transform graph inside Keras 3 models."""

import os
import shutil
import zipfile

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft
from example_job import ODD_ROWS, example_rows

from skewless.errors import InputError
from skewless.layers import TransformLayer, raw_inputs, serialize_raw_examples, transform_raw_rows

def parse(rows, spec):
    return tf.io.parse_example(tf.constant(serialize_raw_examples(rows, spec)), spec)


@pytest.fixture(scope="module")
def layer(example_run):
    return TransformLayer(example_run.output_dir)


def test_outputs_equal_tft_transform_raw_features_exactly(example_run, layer):
    graph = tft.TFTransformOutput(os.path.join(example_run.output_dir, "transform_graph"))
    features = parse(example_rows(500) + ODD_ROWS, graph.raw_feature_spec())

    ours = layer(features)
    expected = graph.transform_raw_features(features)

    assert sorted(ours) == sorted(expected) == sorted(graph.transformed_feature_spec())
    for name in expected:
        assert ours[name].dtype == expected[name].dtype, name
        np.testing.assert_array_equal(ours[name].numpy(), expected[name].numpy(), err_msg=name)


def test_values_follow_the_config(example_run, layer):
    rows = example_rows()
    out = transform_raw_rows(layer, rows + ODD_ROWS)
    graph_dir = os.path.join(example_run.output_dir, "transform_graph")

    ages = np.array([row["age"] for row in rows], dtype=np.float64)
    expected_age = (ages - ages.mean()) / ages.std()
    np.testing.assert_allclose(out["age"][: len(rows)], expected_age, rtol=1e-4, atol=1e-5)

    vocabulary = open(os.path.join(graph_dir, "transform_fn", "assets", "vocab_workclass"), "rb").read().split(b"\n")
    vocabulary = [word for word in vocabulary if word]
    workclass = [vocabulary.index(row["workclass"]) for row in rows]
    np.testing.assert_array_equal(out["workclass"][: len(rows)], workclass)
    # An unseen category lands in the one OOV bucket, right after the vocabulary.
    assert out["workclass"][-2] == out["workclass"][-1] == len(vocabulary)
    # Missing optional features take their defaults: occupation "unknown", capital_gain 0.
    for name in ("occupation", "capital_gain"):
        assert out[name][-2] == out[name][-1], name
    assert set(out["label"][: len(rows)]) == {0, 1}
    np.testing.assert_array_equal(out["label"][: len(rows)], [row["label"] == b">50K" for row in rows])


def test_label_is_optional_and_errors_name_the_feature(layer):
    spec = {name: value for name, value in layer.raw_feature_spec.items() if name != "label"}
    features = parse(example_rows(8), spec)

    out = layer(features)
    assert layer.label == "label" and layer.label_outputs == ["label"]
    assert sorted(out) == sorted(set(layer.transformed_feature_spec) - {"label"})

    without_optional = {name: value for name, value in features.items() if name not in ("occupation", "capital_gain")}
    defaults = dict(features, occupation=tf.fill([8], "unknown"), capital_gain=tf.zeros([8]))
    for name in ("occupation", "capital_gain"):
        np.testing.assert_array_equal(layer(without_optional)[name], layer(defaults)[name])

    with pytest.raises(InputError, match=r"raw feature 'workclass' is required .* missing"):
        layer({name: value for name, value in features.items() if name != "workclass"})
    with pytest.raises(InputError, match=r"raw feature 'age' has dtype string; the transform graph expects int64"):
        layer(dict(features, age=tf.as_string(features["age"])))
    with pytest.raises(InputError, match=r"raw feature 'education' has dtype float32"):
        layer(dict(features, education=tf.zeros([8])))


def test_optional_features_may_be_sparse_ragged_or_dense(layer):
    spec = {name: value for name, value in layer.raw_feature_spec.items() if name != "label"}
    rows = [dict(row, occupation=row["occupation"] or b"unknown") for row in example_rows(16)]
    features = parse(rows, spec)
    dense = {name: tf.sparse.to_dense(value)[:, 0] if isinstance(value, tf.SparseTensor) else value
             for name, value in features.items()}
    ragged = {name: tf.RaggedTensor.from_sparse(value) if isinstance(value, tf.SparseTensor) else value
              for name, value in features.items()}
    column = {name: value[:, tf.newaxis] for name, value in dense.items()}  # Keras inputs of shape (None, 1)

    expected = layer(features)
    for variant in (dense, ragged, column):
        for name, value in layer(variant).items():
            np.testing.assert_array_equal(value, expected[name], err_msg=name)


def test_raw_inputs_follow_the_raw_schema(example_run):
    inputs = raw_inputs(example_run.output_dir)
    assert sorted(inputs) == ["age", "capital_gain", "education", "fnlwgt", "hours_per_week", "native_country",
                              "occupation", "workclass"]
    assert (inputs["age"].dtype, inputs["age"].shape, inputs["age"].sparse) == ("int64", (None,), False)
    assert (inputs["fnlwgt"].dtype, inputs["workclass"].dtype) == ("float32", "string")
    assert (inputs["occupation"].dtype, inputs["occupation"].shape, inputs["occupation"].sparse) == (
        "string", (None, None), True)
    assert all(tensor.name == name for name, tensor in inputs.items())
    with_label = raw_inputs(os.path.join(example_run.output_dir, "transform_graph"), include_label=True, label="label")
    assert with_label["label"].dtype == "string" and len(with_label) == 9
    assert "age" not in raw_inputs(example_run.output_dir, label="age")
    with pytest.raises(InputError, match="not a run directory"):
        raw_inputs(example_run.output_dir + "/data")


def _full_model(run_dir):
    inputs = raw_inputs(run_dir)
    features = TransformLayer(run_dir)(inputs)
    numeric = [keras.ops.expand_dims(features[name], -1) for name in ("age", "fnlwgt", "capital_gain")]
    education = keras.layers.Embedding(8, 3)(features["education"])
    workclass = keras.ops.one_hot(features["workclass"], 8)
    hidden = keras.layers.Dense(8, activation="relu")(keras.layers.Concatenate()([*numeric, education, workclass]))
    return keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(hidden))


def test_keras_model_trains_saves_and_loads_without_the_run(example_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(example_run.output_dir, run_dir)
    keras.utils.set_random_seed(0)
    model = _full_model(run_dir)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    layer = next(layer for layer in model.layers if isinstance(layer, TransformLayer))
    spec = layer.raw_feature_spec
    serialized = serialize_raw_examples(example_rows(600), spec)

    def to_training(batch):
        features = tf.io.parse_example(batch, spec)
        label = tf.cast(tf.equal(features.pop("label"), b">50K"), tf.float32)
        return features, label

    train = tf.data.Dataset.from_tensor_slices(serialized).batch(64).map(to_training)
    history = model.fit(train, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert np.isfinite(model.evaluate(train, verbose=0))

    # The layer also runs inside tf.data, as a preprocessing step.
    in_pipeline = next(iter(train.map(lambda features, label: layer(features))))
    eager = layer(next(iter(train))[0])
    for name in eager:
        np.testing.assert_array_equal(in_pipeline[name], eager[name], err_msg=name)

    before = model.predict(train, verbose=0)
    model.save(tmp_path / "model.keras")
    with zipfile.ZipFile(tmp_path / "model.keras") as archive:
        assert any(name.endswith("transform_fn/assets/vocab_workclass") for name in archive.namelist())
    shutil.rmtree(run_dir)

    loaded = keras.models.load_model(tmp_path / "model.keras")
    np.testing.assert_array_equal(loaded.predict(train, verbose=0), before)
    loaded_layer = next(layer for layer in loaded.layers if isinstance(layer, TransformLayer))
    assert loaded_layer.get_config()["graph_spec"] == layer.get_config()["graph_spec"]
    assert TransformLayer.from_config(loaded_layer.get_config()).get_config() == loaded_layer.get_config()

    # A loaded model exports again: its graph's assets outlived the loader's temporary folder.
    loaded.export(str(tmp_path / "keras_export"), verbose=False)
    served = tf.saved_model.load(str(tmp_path / "keras_export"))
    first = next(iter(train))[0]
    # Keras' export takes optional features as dense (None, None) tensors: rows filled with the defaults.
    first["occupation"] = tf.sparse.to_dense(first["occupation"], default_value="unknown")
    first["capital_gain"] = tf.sparse.to_dense(first["capital_gain"], default_value=0.0)
    np.testing.assert_allclose(served.serve(first).numpy(), before[:64], rtol=1e-6, atol=1e-7)
