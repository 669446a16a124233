"""An export stores each weight once, as a variable or as a graph constant, never both (issue 32).

A model with a large embedding is exported on both of serving_head's paths: dense transformed inputs (the
table only gathered from becomes a constant of saved_model.pb) and raw inputs through the TransformLayer
(sparse: the table stays a variable). Before, the first stored the table in variables/ and in the graph, the
second twice in variables/ (Keras' ExportArchive saved each Keras variable and the TF variable it holds)."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from example_job import EXAMPLE_CONFIG
from tensorflow.core.protobuf import saved_model_pb2

from skewless.layers import (
    TransformLayer,
    export_serving_model,
    parse_raw_examples,
    raw_inputs,
    read_spec_file,
    serialize_raw_examples,
)
from skewless.pipelines.reading.synthetic_rows import synthetic_rows

TABLE_ROWS, TABLE_WIDTH = 200_000, 16  # 12.8 MB of float32: the rest of a model is noise beside it


def stored_bytes(export_dir) -> int:
    """The bytes of variables/ plus those of the tensor constants in saved_model.pb (its functions included)."""
    variables = os.path.join(export_dir, "variables")
    total = sum(os.path.getsize(os.path.join(variables, name)) for name in os.listdir(variables))
    saved = saved_model_pb2.SavedModel.FromString(open(os.path.join(export_dir, "saved_model.pb"), "rb").read())
    graph = saved.meta_graphs[0].graph_def
    nodes = [*graph.node, *(node for function in graph.library.function for node in function.node_def)]
    return total + sum(tf.make_ndarray(node.attr["value"].tensor).nbytes for node in nodes if node.op == "Const")


def parameter_bytes(model) -> int:
    return sum(keras.ops.convert_to_numpy(weight).nbytes for weight in model.weights)


def head(features):
    """Country ids into a large table, plus age: one output."""
    table = keras.layers.Embedding(TABLE_ROWS, TABLE_WIDTH, name="table")(features["native_country"])
    age = keras.ops.expand_dims(keras.ops.cast(features["age"], "float32"), -1)
    return keras.layers.Dense(1, name="score")(keras.layers.Concatenate()([table, age]))


def on_transformed(run_dir):
    inputs = {"native_country": keras.Input((), dtype="int64", name="native_country"),
              "age": keras.Input((), name="age")}
    return keras.Model(inputs, head(inputs))


def on_raw(run_dir):
    inputs = raw_inputs(run_dir)
    return keras.Model(inputs, head(TransformLayer(run_dir)(inputs)))


@pytest.mark.parametrize("build", [on_transformed, on_raw])
def test_each_weight_is_stored_once_and_the_export_predicts_as_the_model(build, example_run, tmp_path):
    keras.utils.set_random_seed(5)
    model = build(example_run.output_dir)
    export_dir = export_serving_model(example_run.output_dir, model, str(tmp_path / "export"))

    weights = parameter_bytes(model)
    assert weights > 12_800_000
    # at least once (the transform graph's own constants are a few KB), and not twice
    assert weights <= stored_bytes(export_dir) < 1.02 * weights

    seed = EXAMPLE_CONFIG["input"]["seed"]
    rows = [row for _, table in synthetic_rows(seed, 0, 50) for row in table.to_pylist()]
    spec = read_spec_file(export_dir)["raw"]
    examples = tf.constant(serialize_raw_examples(rows, spec))
    served = tf.saved_model.load(export_dir).signatures["serving_default"](examples=examples)
    raw = parse_raw_examples(examples, spec)
    if build is on_transformed:
        transformed = TransformLayer(example_run.output_dir)(raw)
        expected = model({name: transformed[name] for name in model.input}, training=False)
    else:
        expected = model(raw, training=False)
    np.testing.assert_allclose(served["output_0"].numpy(), keras.ops.convert_to_numpy(expected), rtol=1e-6,
                               atol=1e-7)
