"""serving_head: the model as the export calls it, its gather-only tables held as constants, results bit for bit."""

import graph_ops
import keras
import numpy as np
import tensorflow as tf

from skewless.layers import serving_head as serving_head_module
from skewless.layers.fixed_size_calls import in_fixed_size_calls
from skewless.layers.serving_head import serving_head


def embedding_model():
    """Ids through a Keras 3 Embedding (a table only gathered from) and a Dense layer (a kernel multiplied)."""
    keras.utils.set_random_seed(4)
    inputs = {"id": keras.Input((), dtype="int64", name="id"), "x": keras.Input((1,), name="x")}
    embedded = keras.layers.Embedding(7, 3, name="table")(inputs["id"])
    hidden = keras.layers.Concatenate()([embedded, inputs["x"]])
    return keras.Model(inputs, keras.layers.Dense(2, name="dense")(hidden))


def features():
    # -1 and -7 are valid for a Keras 3 Embedding: they count from the table's end.
    ids = tf.constant([0, 6, 3, -1, -7, 2], tf.int64)
    return {"id": ids, "x": tf.reshape(tf.range(6, dtype=tf.float32) / 3.0, [6, 1])}


def called(model, inputs):
    """The model's own outputs, called as the head calls it: 24 rows at a time (layers/fixed_size_calls.py)."""
    return in_fixed_size_calls(lambda batch: model(batch, training=False), inputs).numpy()


def constants_of(head, model):
    """Every Const value of the graph `head` runs, its called functions included."""
    specs = {name: tf.TensorSpec(tensor.shape, tensor.dtype) for name, tensor in model.input.items()}
    graph_def = tf.function(head).get_concrete_function(specs).graph.as_graph_def()
    nodes = list(graph_def.node) + [node for function in graph_def.library.function for node in function.node_def]
    return [tf.make_ndarray(node.attr["value"].tensor) for node in nodes if node.op == "Const"]


def holds(constants, value) -> bool:
    return any(constant.shape == value.shape and np.array_equal(constant, value) for constant in constants)


def test_head_gives_the_models_outputs_bit_for_bit_negative_ids_included():
    model = embedding_model()
    expected = called(model, features())
    served = tf.function(serving_head(model))(features()).numpy()
    assert np.array_equal(served.view(np.uint32), expected.view(np.uint32))
    assert holds(constants_of(serving_head(model), model), model.get_layer("table").embeddings.numpy())


def test_only_gathered_tables_become_constants_and_not_past_the_size_limit(monkeypatch):
    model = embedding_model()
    constants = constants_of(serving_head(model), model)
    assert holds(constants, model.get_layer("table").embeddings.numpy())
    assert not holds(constants, model.get_layer("dense").kernel.numpy())
    assert not holds(constants, model.get_layer("dense").bias.numpy())

    monkeypatch.setattr(serving_head_module, "MAX_FROZEN_BYTES", 7 * 3 * 4 - 1)
    assert not holds(constants_of(serving_head(model), model), model.get_layer("table").embeddings.numpy())
    expected = called(model, features())
    assert np.array_equal(tf.function(serving_head(model))(features()).numpy(), expected)


def ops_run(head, model) -> list[str]:
    """The op types a first call of `head`, traced anew, runs after Grappler."""
    specs = {name: tf.TensorSpec(tensor.shape, tensor.dtype) for name, tensor in model.input.items()}
    function = tf.function(head).get_concrete_function(specs)
    return graph_ops.ops_run(function, inputs={"id": tf.constant([1, 2], tf.int64), "x": tf.ones([2, 1])})


def test_never_negative_ids_are_gathered_as_they_are_with_the_same_results():
    model = embedding_model()
    ids = {"id": tf.constant([0, 6, 3, 2, 5, 1], tf.int64), "x": features()["x"]}
    expected = called(model, ids)
    direct = serving_head(model, never_negative=[model.input["id"]])
    assert np.array_equal(tf.function(direct)(ids).numpy().view(np.uint32), expected.view(np.uint32))
    # take's mapping of negative ids (Less, AddV2, SelectV2 before the gather) is gone only where asked for; its
    # SelectV2 tells it (the loop that calls the model on batches of one size has a Less of its own)
    mapped = ops_run(serving_head(model), model)
    assert {"Less", "SelectV2"} <= set(mapped) and "GatherV2" in mapped
    unmapped = ops_run(direct, model)
    assert "GatherV2" in unmapped and "SelectV2" not in unmapped
    assert {"Less", "SelectV2"} <= set(ops_run(serving_head(model, never_negative=[model.input["x"]]), model))
    # an input the export does not vouch for keeps Keras 3's reading of negative ids
    assert np.array_equal(tf.function(serving_head(model, never_negative=[model.input["x"]]))(features()).numpy(),
                          called(model, features()))
