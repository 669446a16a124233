"""Variable-length values in the graph: lists as (batch, n) SparseTensors, and their fixed-length form."""

from __future__ import annotations


def pad_or_truncate(values, length: int, pad_value):
    """A (batch, n) SparseTensor -> a dense (batch, length) tensor: the first `length` values, then `pad_value`."""
    import tensorflow as tf

    ragged = tf.RaggedTensor.from_sparse(values)
    return ragged[:, :length].to_tensor(default_value=tf.cast(pad_value, values.dtype), shape=[None, length])
