"""`FillMissing`: an optional raw feature as one value per row, its default where the row has none."""

from __future__ import annotations

import keras
import tensorflow as tf

from skewless.layers.backend_tensors import as_tf, to_backend
from skewless.layers.raw_value_layer import RawValueLayer
from skewless.value_rules import is_present


@keras.saving.register_keras_serializable(package="skewless")
class FillMissing(RawValueLayer):
    """Densifies an optional feature as the job's graph does before its transform.

    A sparse (or ragged) input of shape ``(batch, n)``, as ``tf.io.parse_example`` gives a
    VarLenFeature, becomes shape ``(batch,)``: the row's value, or `default` where the row has none,
    by the same op tf.Transform's ``sparse_tensor_to_dense_with_shape(x, [None, 1], default)`` runs
    (a row with two values is an error there and here). A dense input (NumPy, pandas, a tensor) has an item in
    every row, which takes the default where it is a missing value (shape ``(batch, 1)`` is squeezed to
    ``(batch,)``), as the graph reads a dense input. A float NaN is a missing value
    as in the job (and ±inf too with ``nonfinite="missing"``, the job's ``input.nonfinite``), and so is an
    empty string or one of `missing_tokens` (the job's ``input.na_values``; `skewless.value_rules`).

    Sparse inputs are TF tensors on every backend (Keras' StringLookup and Hashing use TF the same way).

    Args:
        default: the fill value (a number, or a string for a string feature).
        nonfinite: "quarantine" (only NaN is missing) or "missing" (±inf are missing too).
        missing_tokens: text read as missing besides the empty string (whitespace around it stripped).
        cast_to: the dtype values are cast to before filling (``"float32"`` where ``fill: mean`` or
            ``median`` fills an int column with a float, as the graph does), or None.

    Examples:
        Row 1 has no value, row 3 an NA token, row 4 an empty string: all take the default.

        >>> import tensorflow as tf
        >>> from skewless.layers import FillMissing
        >>> values = tf.SparseTensor([[0, 0], [2, 0], [3, 0], [4, 0]], ["a", "c", " NA ", ""], [5, 1])
        >>> FillMissing("unknown", missing_tokens=["NA"])(values).numpy().tolist()
        [b'a', b'unknown', b'c', b'unknown', b'unknown']
        >>> FillMissing(0.0)(tf.SparseTensor([[0, 0], [1, 0]], [1.5, float("nan")], [3, 1])).numpy().tolist()
        [1.5, 0.0, 0.0]
    """

    def __init__(self, default, nonfinite: str = "quarantine", missing_tokens=(), cast_to: str | None = None,
                 **kwargs):
        super().__init__(**kwargs)
        self.default = default
        self.nonfinite = nonfinite
        self.missing_tokens = list(missing_tokens)
        self.cast_to = cast_to

    def call(self, inputs):
        if isinstance(inputs, tf.RaggedTensor):
            inputs = inputs.to_sparse()
        if isinstance(inputs, tf.SparseTensor):
            tokens = {token.encode() for token in self.missing_tokens}
            inputs = tf.sparse.retain(inputs, is_present(inputs.values, self.nonfinite, tokens))
            if self.cast_to is not None:
                inputs = tf.SparseTensor(inputs.indices, tf.cast(inputs.values, self.cast_to), inputs.dense_shape)
            one_column = tf.stack([inputs.dense_shape[0], tf.constant(1, tf.int64)])
            narrowed = tf.SparseTensor(inputs.indices, inputs.values, one_column)
            default = tf.constant(self.default, dtype=inputs.dtype)
            return to_backend(tf.squeeze(tf.sparse.to_dense(narrowed, default_value=default), axis=1))
        # dense (NumPy, pandas, tensors): every row holds a value, which may be a missing one (NaN, "", a token)
        values = as_tf(inputs)
        if len(values.shape) == 2 and values.shape[-1] == 1:
            values = values[:, 0]
        present = is_present(values, self.nonfinite, {token.encode() for token in self.missing_tokens})
        if self.cast_to is not None:
            values = tf.cast(values, self.cast_to)
        return to_backend(tf.where(present, values, tf.constant(self.default, dtype=values.dtype)))

    def compute_output_spec(self, inputs):
        return keras.KerasTensor(inputs.shape[:1], dtype=self.cast_to or inputs.dtype)

    def get_config(self):
        config = super().get_config()
        config.update(default=self.default, nonfinite=self.nonfinite, missing_tokens=self.missing_tokens,
                      cast_to=self.cast_to)
        return config
