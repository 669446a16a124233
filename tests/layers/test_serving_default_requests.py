"""serving_default parses a request as it is and keeps each promise of the export: a row served alone gives its
bits in a batch (the model called on batches of one size, layers/fixed_size_calls.py), the outputs are the
model's own on the graph's outputs, an empty request gives empty outputs, a bad record is named by its batch
position."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from skewless.layers import TransformLayer, export_serving_model, model_inputs, serialize_raw_examples
from skewless.layers import export as export_module
from skewless.pipelines.reading.synthetic_rows import synthetic_rows


@pytest.fixture(scope="module")
def dense_model(example_run):
    keras.utils.set_random_seed(5)
    inputs, encoded = model_inputs(example_run.output_dir)
    hidden = keras.layers.Dense(16, activation="relu")(encoded)
    return keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(hidden))


@pytest.fixture(scope="module")
def served(example_run, dense_model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("serving_default") / "export"
    return tf.saved_model.load(str(export_serving_model(example_run.output_dir, dense_model, folder)))


@pytest.fixture(scope="module")
def records(example_run):
    spec = TransformLayer(example_run.output_dir).raw_feature_spec
    rows = [row for _, table in synthetic_rows(11, 0, 60) for row in table.to_pylist()]
    return serialize_raw_examples([{k: v for k, v in row.items() if k != "label"} for row in rows],
                                  {name: s for name, s in spec.items() if name != "label"})


def _serve(loaded, records):
    return loaded.signatures["serving_default"](examples=tf.constant(records, tf.string))["output_0"].numpy()


def test_a_row_alone_gives_its_bits_in_a_batch(served, records):
    batched = _serve(served, records)
    for index in range(len(records)):
        np.testing.assert_array_equal(_serve(served, records[index:index + 1])[0], batched[index],
                                      err_msg=f"row {index}")
    np.testing.assert_array_equal(_serve(served, records[::-1])[::-1], batched)
    assert batched.shape == (len(records), 1)


def test_the_outputs_are_the_models_own(served, dense_model, example_run, records):
    """The outputs are the model's own on the graph's output (no row of the filling among them)."""
    from skewless.layers.export import parse_raw_examples

    layer = TransformLayer(example_run.output_dir)
    spec = {name: s for name, s in layer.raw_feature_spec.items() if name != "label"}
    transformed = layer(parse_raw_examples(tf.constant(records), spec))
    fed = export_module._feed(dense_model, transformed)  # the export's own casts and trailing axes
    np.testing.assert_allclose(_serve(served, records), dense_model.predict(fed, verbose=0), rtol=0, atol=1e-6)


def test_an_empty_request_gives_empty_outputs(served):
    assert _serve(served, []).shape == (0, 1)


def test_a_bad_record_is_named_by_its_batch_position(served, records):
    with pytest.raises(tf.errors.InvalidArgumentError, match="example id: batch position 1"):
        _serve(served, [records[0], b"not a record \x01", records[1]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="example id: batch position 0"):
        _serve(served, [b"not a record \x01"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="is required but could not be found"):
        _serve(served, [records[0], tf.train.Example().SerializeToString()])
