"""`PresentValues`: a list column's values per row, without the items the graph reads as missing."""

from __future__ import annotations

import keras
import tensorflow as tf

from skewless.layers.backend_tensors import as_tf
from skewless.layers.raw_value_layer import RawValueLayer
from skewless.value_rules import is_present


@keras.saving.register_keras_serializable(package="skewless")
class PresentValues(RawValueLayer):
    """A ``list: true`` column as a ``tf.RaggedTensor`` of the values its transform sees.

    The job's graph takes the missing items out of a list before transforming it (`skewless.value_rules`:
    an empty string or one of `missing_tokens`, a float NaN, and ±inf with ``nonfinite="missing"``); this
    layer does the same with the same function. A sparse input of shape ``(batch, n)``, as
    ``tf.io.parse_example`` gives a VarLenFeature, or a ragged one keeps its rows (an absent list is an empty
    row); a dense one is a list of one value per row. The result is a TF tensor on every backend: Keras'
    ``StringLookup``, ``IntegerLookup`` and ``Hashing``, which take it next, run TensorFlow inside.

    Args:
        nonfinite: "quarantine" (only NaN is missing) or "missing" (±inf are missing too).
        missing_tokens: text read as missing besides the empty string (whitespace around it stripped).

    Examples:
        Row 0 holds "a", an empty string and an NA token; row 1 has no list; row 2 holds "b" twice:

        >>> import tensorflow as tf
        >>> from skewless.layers import PresentValues
        >>> lists = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [2, 0], [2, 1]], ["a", "", " NA", "b", "b"], [3, 3])
        >>> PresentValues(missing_tokens=["NA"])(lists).to_list()
        [[b'a'], [], [b'b', b'b']]
    """

    def __init__(self, nonfinite: str = "quarantine", missing_tokens=(), **kwargs):
        super().__init__(**kwargs)
        self.nonfinite = nonfinite
        self.missing_tokens = list(missing_tokens)

    def call(self, inputs):
        if isinstance(inputs, tf.SparseTensor):
            lists = tf.RaggedTensor.from_sparse(inputs)
        elif isinstance(inputs, tf.RaggedTensor):
            lists = inputs
        else:
            values = as_tf(inputs)
            lists = tf.RaggedTensor.from_tensor(values if values.shape.rank == 2 else values[:, tf.newaxis])
        tokens = {token.encode() for token in self.missing_tokens}
        present = is_present(lists.flat_values, self.nonfinite, tokens)
        return tf.ragged.boolean_mask(lists, lists.with_flat_values(present))

    def compute_output_spec(self, inputs):
        return keras.KerasTensor((inputs.shape[0], None), dtype=inputs.dtype, ragged=True)

    def get_config(self):
        config = super().get_config()
        config.update(nonfinite=self.nonfinite, missing_tokens=self.missing_tokens)
        return config
