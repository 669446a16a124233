"""in_fixed_size_calls: a row's outputs are the same bits whatever the batch it comes in, dense, sparse and ragged
inputs alike, where the model called on the batch as it is rounds its rows otherwise."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from skewless.layers.fixed_size_calls import ROWS, in_fixed_size_calls

SIZES = [0, 1, 2, 5, ROWS - 1, ROWS, ROWS + 1, 2 * ROWS, 7 * ROWS + 3, 300]


def _head(width: int, units: int):
    keras.utils.set_random_seed(1)
    inputs = keras.Input((width,))
    hidden = keras.layers.Dense(units, activation="relu")(inputs)
    hidden = keras.layers.Dense(units, activation="tanh")(hidden)
    return keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(hidden))


@pytest.fixture(scope="module", params=[(40, 16), (1000, 256)], ids=["small head", "large head"])
def head(request):
    return _head(*request.param)


@pytest.fixture(scope="module")
def rows(head):
    return np.random.default_rng(3).normal(size=(300, head.input.shape[-1])).astype("float32")


def test_each_row_alone_gives_its_bits_in_any_batch(head, rows):
    served = tf.function(lambda x: in_fixed_size_calls(lambda batch: head(batch, training=False), x))
    alone = np.concatenate([served(rows[index:index + 1]).numpy() for index in range(len(rows))])
    np.testing.assert_allclose(alone, head.predict(rows, verbose=0), rtol=0, atol=1e-6)
    for size in SIZES:
        batched = served(rows[:size]).numpy()
        assert batched.shape == (size, 1)
        np.testing.assert_array_equal(batched.view(np.uint32), alone[:size].view(np.uint32), err_msg=f"{size} rows")
    # the model called on the batch as it is would not keep the promise (the reason for the fixed size)
    assert any((head(rows[:size], training=False).numpy() != alone[:size]).any() for size in (1, 2, 3, 7, 300))


def test_sparse_and_ragged_inputs_are_filled_and_cut_as_dense_ones():
    """Each row's sum of its list (ragged) and of its sparse entries, against NumPy's, at every batch size."""
    rng = np.random.default_rng(5)
    lists = [rng.integers(0, 9, rng.integers(0, 4)).tolist() for _ in range(180)]

    def call(inputs):
        ragged, sparse, dense = inputs
        return {"ragged": tf.reduce_sum(ragged, axis=1), "sparse": tf.sparse.reduce_sum(sparse, axis=1),
                "dense": dense * 2, "rows": tf.fill(tf.shape(dense)[:1], tf.shape(dense)[0])}

    served = tf.function(lambda inputs: in_fixed_size_calls(call, inputs), reduce_retracing=True)
    for size in SIZES[:-1]:
        part = lists[:size]
        ragged = tf.ragged.constant(part, dtype=tf.int64, ragged_rank=1) if part else \
            tf.RaggedTensor.from_row_lengths(tf.zeros([0], tf.int64), tf.zeros([0], tf.int64))
        sparse = ragged.to_sparse()
        sparse = tf.SparseTensor(sparse.indices, sparse.values, [size, 4])
        dense = tf.range(size, dtype=tf.int64)
        out = served((ragged, sparse, dense))
        expected = np.array([sum(values) for values in part], dtype=np.int64)
        np.testing.assert_array_equal(out["ragged"].numpy(), expected, err_msg=f"{size} rows")
        np.testing.assert_array_equal(out["sparse"].numpy(), expected, err_msg=f"{size} rows")
        np.testing.assert_array_equal(out["dense"].numpy(), np.arange(size) * 2)
        # every call the model saw held ROWS rows (an empty batch: one call of none)
        assert set(out["rows"].numpy().tolist()) <= {ROWS}, size


def test_outputs_that_are_not_dense_come_from_one_filled_call():
    calls = []

    def call(values):
        if tf.executing_eagerly():  # not the trace that tells the outputs' kinds
            calls.append(values.shape)
        return tf.RaggedTensor.from_tensor(values[:, tf.newaxis])

    rows = tf.constant(np.arange(30, dtype=np.float32))
    out = in_fixed_size_calls(call, rows)
    assert isinstance(out, tf.RaggedTensor) and out.flat_values.numpy().tolist() == list(range(30))
    assert calls == [tf.TensorShape([2 * ROWS])]
