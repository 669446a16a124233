"""Categorical outputs carry their bucket count in the transformed schema.

tf.Transform records an `int_domain` (min 0, max buckets - 1, `is_categorical`) only for the direct
outputs of its vocabulary and bucketize mappers; hashes, crosses, padded lists and bags of words are
new tensors without one. Recording it for each lets a model size an embedding from the graph
(`TFTransformOutput.num_buckets_for_transformed_feature`).
"""

from __future__ import annotations


def with_buckets(ids, num_buckets):
    """`ids` (an int64 Tensor, SparseTensor or RaggedTensor), recorded as ids in [0, `num_buckets`).

    `num_buckets` is an int or a scalar tensor (a vocabulary's size is known only after analysis).
    Padding of fixed-length lists (-1 by default) lies outside the domain on purpose: it is no id.
    """
    import tensorflow as tf
    from tensorflow_transform import schema_inference, tf_utils

    schema_inference.set_tensor_schema_override(
        tf_utils.get_values(ids), tf.constant(0, tf.int64), tf.cast(num_buckets, tf.int64) - 1)
    return ids
