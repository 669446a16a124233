"""Variable-length values in the graph: lists as (batch, n) SparseTensors, and their fixed-length form."""

from __future__ import annotations

from skewless.lazy_imports import lazy_import

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")


def pad_or_truncate(values, length: int, pad_value=None):
    """A (batch, n) SparseTensor -> a dense (batch, length) tensor: the first `length` values, then padding.

    `pad_value` defaults to -1 for ids (int64: no id is negative), 0 for floats and "" for strings.
    """
    if values.dtype == tf.string:
        pad_value = "" if pad_value is None else str(pad_value)
    elif pad_value is None:
        pad_value = -1 if values.dtype.is_integer else 0.0
    ragged = tf.RaggedTensor.from_sparse(values)
    return ragged[:, :length].to_tensor(default_value=tf.cast(pad_value, values.dtype), shape=[None, length])
