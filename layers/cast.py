"""`Cast`: a tensor cast to a dtype, on every backend and in tf.data."""

from __future__ import annotations

import keras

from skewless.layers.backend_tensors import ops_for
from skewless.layers.raw_value_layer import RawValueLayer


@keras.saving.register_keras_serializable(package="skewless")
class Cast(RawValueLayer):
    """Casts its input to `to_dtype` (Keras' Discretization, for one, always returns int32 indices).

    A TF input (a ``tf.data`` pipeline on any backend) is cast with TF, others with ``keras.ops``.
    On JAX without ``jax_enable_x64`` an int64 cast gives int32.

    Args:
        to_dtype: the dtype name, e.g. ``"int64"``.

    Examples:
        >>> import keras
        >>> import numpy as np
        >>> from skewless.layers import Cast
        >>> keras.ops.convert_to_numpy(Cast("int64")(np.array([1, 2], dtype="int32"))).dtype
        dtype('int64')
        >>> keras.ops.convert_to_numpy(Cast("float32")(np.array([3, -7]))).tolist()
        [3.0, -7.0]
    """

    def __init__(self, to_dtype: str, **kwargs):
        super().__init__(**kwargs)
        self.to_dtype = to_dtype

    def call(self, inputs):
        return ops_for(inputs).cast(inputs, self.to_dtype)

    def compute_output_spec(self, inputs):
        return keras.KerasTensor(inputs.shape, dtype=self.to_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(to_dtype=self.to_dtype)
        return config
