"""Per-value helpers of the graph and the layers: a raw column arrives dense, as a (batch, n) SparseTensor (a list
column) or as a (batch, steps, values) RaggedTensor (a feature list)."""

from __future__ import annotations

from skewless.lazy_imports import lazy_import

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")


def each(function, value, *args):
    """`function` applied to each value of a dense, sparse or ragged tensor."""
    if isinstance(value, tf.SparseTensor):
        return tf.sparse.map_values(function, value, *args)
    if isinstance(value, tf.RaggedTensor):
        return tf.ragged.map_flat_values(function, value, *args)
    return function(value, *args)


def as_strings(value):
    """Values as tf.Transform's vocabularies and hashes take them: strings (numbers as their decimal text)."""
    return value if value.dtype == tf.string else each(tf.strings.as_string, value)


def keys_per_value(value, key):
    """`key`, one per row (batch,), repeated for every value of the row: a tensor of the structure of `value` (a
    SparseTensor of its indices, a RaggedTensor of its splits, or dense of its shape)."""
    if isinstance(value, tf.SparseTensor):
        return tf.SparseTensor(value.indices, tf.gather(key, value.indices[:, 0]), value.dense_shape)
    if isinstance(value, tf.RaggedTensor):
        # each flat value's row: its parent's index, followed up through every ragged dimension to the batch
        nested = value.nested_value_rowids()
        rows = nested[-1]
        for parents in reversed(nested[:-1]):
            rows = tf.gather(parents, rows)
        return value.with_flat_values(tf.gather(key, rows))
    rows = tf.reshape(key, [-1] + [1] * (value.shape.rank - 1))
    return tf.broadcast_to(rows, tf.shape(value))
