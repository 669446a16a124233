"""`MissingIndicator`: 1 where a row of an optional raw feature has no value, else 0 (``missing_indicator: true``)."""

from __future__ import annotations

import keras
import tensorflow as tf

from skewless.layers.backend_tensors import as_tf, to_backend
from skewless.layers.raw_value_layer import RawValueLayer
from skewless.value_rules import is_present


@keras.saving.register_keras_serializable(package="skewless")
class MissingIndicator(RawValueLayer):
    """The int64 indicator the job writes as ``<feature>_missing`` beside an optional feature.

    A sparse (or ragged) input of shape ``(batch, n)``, as ``tf.io.parse_example`` gives a
    VarLenFeature, gives 1 for a row without a value and 0 for a row with one. As in the job's
    graph (skewless/pipelines/missing.py) a float NaN is missing (±inf too with
    ``nonfinite="missing"``), and so is an empty string or one of `missing_tokens`. A dense input (NumPy,
    pandas, a tensor) has an item in every row: 0, or 1 where that item is a missing value.

    Args:
        nonfinite: "quarantine" (only NaN is missing) or "missing" (±inf are missing too).
        missing_tokens: text read as missing besides the empty string (whitespace around it stripped).

    Examples:
        Row 0 holds 1.5, row 1 no value, row 2 a NaN:

        >>> import keras
        >>> import tensorflow as tf
        >>> from skewless.layers import MissingIndicator
        >>> values = tf.SparseTensor([[0, 0], [2, 0]], [1.5, float("nan")], [3, 1])
        >>> keras.ops.convert_to_numpy(MissingIndicator()(values)).tolist()
        [0, 1, 1]

        Text: the empty string and a declared token are missing, row 3 has no value:

        >>> texts = tf.SparseTensor([[0, 0], [1, 0], [2, 0]], [b"a", b"NA", b""], [4, 1])
        >>> keras.ops.convert_to_numpy(MissingIndicator(missing_tokens=["NA"])(texts)).tolist()
        [0, 1, 1, 1]
    """

    def __init__(self, nonfinite: str = "quarantine", missing_tokens=(), **kwargs):
        super().__init__(**kwargs)
        self.nonfinite = nonfinite
        self.missing_tokens = list(missing_tokens)

    def call(self, inputs):
        if isinstance(inputs, tf.RaggedTensor):
            inputs = inputs.to_sparse()
        if isinstance(inputs, tf.SparseTensor):
            present = is_present(inputs.values, self.nonfinite, {token.encode() for token in self.missing_tokens})
            one_column = tf.stack([inputs.dense_shape[0], tf.constant(1, tf.int64)])
            kept = tf.sparse.retain(tf.SparseTensor(inputs.indices, tf.ones_like(inputs.indices[:, 0]), one_column),
                                    present)
            return to_backend(1 - tf.squeeze(tf.sparse.to_dense(kept), axis=1))
        values = as_tf(inputs)
        if len(values.shape) == 2 and values.shape[-1] == 1:
            values = values[:, 0]
        present = is_present(values, self.nonfinite, {token.encode() for token in self.missing_tokens})
        return to_backend(tf.cast(tf.logical_not(present), tf.int64))

    def compute_output_spec(self, inputs):
        return keras.KerasTensor(inputs.shape[:1], dtype="int64")

    def get_config(self):
        config = super().get_config()
        config.update(nonfinite=self.nonfinite, missing_tokens=self.missing_tokens)
        return config
