"""`Clip`: float32 values clipped to [low, high], as ``tf.clip_by_value`` in the graph clips them."""

from __future__ import annotations

import keras
import tensorflow as tf

from skewless.layers.backend_tensors import is_tf
from skewless.layers.raw_value_layer import RawValueLayer


@keras.saving.register_keras_serializable(package="skewless")
class Clip(RawValueLayer):
    """Casts its input to float32 and clips it to ``[low, high]`` (min and max: exact on every backend).

    This is ``transform: quantile_clip`` with the two quantiles the graph holds, and a numeric
    transform's ``clip: [low, high]`` (the graph's ``tf.clip_by_value`` first). A TF input (a
    ``tf.data`` pipeline on any backend) is clipped with TF, others with ``keras.ops``.

    Args:
        low: the lower bound (a float32 value).
        high: the upper bound (a float32 value, >= low).

    Examples:
        >>> import keras
        >>> import numpy as np
        >>> from skewless.layers import Clip
        >>> keras.ops.convert_to_numpy(Clip(low=-1.5, high=2.0)(np.array([-3, 0.25, 7]))).tolist()
        [-1.5, 0.25, 2.0]
    """

    def __init__(self, low: float, high: float, **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        self.low = float(low)
        self.high = float(high)

    def call(self, inputs):
        if is_tf(inputs) or keras.backend.backend() == "tensorflow":
            return tf.clip_by_value(tf.cast(inputs, tf.float32), self.low, self.high)
        # convert_to_tensor converts int64 NumPy values to float32 directly (JAX would first truncate to int32).
        return keras.ops.clip(keras.ops.convert_to_tensor(inputs, dtype="float32"), self.low, self.high)

    def compute_output_spec(self, inputs):
        return keras.KerasTensor(inputs.shape, dtype="float32")

    def get_config(self):
        config = super().get_config()
        config.update(low=self.low, high=self.high)
        return config
