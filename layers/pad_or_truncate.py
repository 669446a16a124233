"""`PadOrTruncate`: a list of ids per row as a fixed-length row, as ``max_length`` writes it."""

from __future__ import annotations

import keras
import tensorflow as tf

from skewless.layers.backend_tensors import to_backend
from skewless.layers.raw_value_layer import RawValueLayer
from skewless.ops.lists import pad_or_truncate


@keras.saving.register_keras_serializable(package="skewless")
class PadOrTruncate(RawValueLayer):
    """Ids (a sparse or ragged list per row) -> a dense ``(batch, length)`` tensor: each row's first `length` ids,
    then `pad_value`, by the graph's own function (`skewless.ops.lists.pad_or_truncate`).

    Args:
        length: the feature's ``max_length``.
        pad_value: the feature's ``pad_value`` (None: -1 for ids).

    Examples:
        >>> import keras
        >>> import tensorflow as tf
        >>> from skewless.layers import PadOrTruncate
        >>> ids = tf.ragged.constant([[4, 1, 7, 2], [], [3]], dtype=tf.int64)
        >>> keras.ops.convert_to_numpy(PadOrTruncate(3)(ids)).tolist()
        [[4, 1, 7], [-1, -1, -1], [3, -1, -1]]
    """

    def __init__(self, length: int, pad_value=None, **kwargs):
        super().__init__(**kwargs)
        self.length = int(length)
        self.pad_value = pad_value

    def call(self, inputs):
        if isinstance(inputs, tf.RaggedTensor):
            inputs = inputs.to_sparse()
        return to_backend(pad_or_truncate(inputs, self.length, self.pad_value))

    def compute_output_spec(self, inputs):
        return keras.KerasTensor((inputs.shape[0], self.length), dtype=inputs.dtype)

    def get_config(self):
        config = super().get_config()
        config.update(length=self.length, pad_value=self.pad_value)
        return config
