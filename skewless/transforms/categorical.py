"""Categorical outputs carry their bucket count in the transformed schema.

tf.Transform records an `int_domain` (min 0, max buckets - 1, `is_categorical`) only for the direct
outputs of its vocabulary and bucketize mappers; hashes, crosses, padded lists and bags of words are
new tensors without one. Recording it for each lets a model size an embedding from the graph
(`TFTransformOutput.num_buckets_for_transformed_feature`).

A vocabulary without OOV buckets gives a value it lacks `default_value` (-1 by default), and tf.Transform
widens the domain to take it: min -1, which `num_buckets_for_transformed_feature` refuses. That id is no
bucket (as padding is none): the domain here stays [0, buckets), and the model masks -1.
"""

from __future__ import annotations

from skewless.lazy_imports import lazy_import

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")
tft = lazy_import("tensorflow_transform")
schema_inference = lazy_import("tensorflow_transform.schema_inference")
tf_utils = lazy_import("tensorflow_transform.tf_utils")


def with_buckets(ids, num_buckets):
    """`ids` (an int64 Tensor, SparseTensor or RaggedTensor), recorded as ids in [0, `num_buckets`).

    `num_buckets` is an int or a scalar tensor (a vocabulary's size is known only after analysis).
    Padding of fixed-length lists (-1 by default) lies outside the domain on purpose: it is no id.
    """
    schema_inference.set_tensor_schema_override(
        tf_utils.get_values(ids), tf.constant(0, tf.int64), tf.cast(num_buckets, tf.int64) - 1)
    return ids


def vocabulary_ids(ids):
    """`ids` from `tft.apply_vocabulary`, recorded as ids from 0: its domain's max + 1 buckets (the vocabulary's
    size, its OOV buckets, and a `default_value` past them), a negative default value left outside."""
    return with_buckets(ids, tft.get_num_buckets_for_transformed_feature(ids))
