"""`Log1p`: ``log(1 + x)`` in float64, rounded to float32, as the job's ``transform: log`` computes it."""

from __future__ import annotations

import keras
import tensorflow as tf

from skewless.layers.backend_tensors import to_backend
from skewless.layers.raw_value_layer import RawValueLayer


@keras.saving.register_keras_serializable(package="skewless")
class Log1p(RawValueLayer):
    """Casts its input to float32 then float64, takes ``log1p`` with TensorFlow's kernel, rounds to float32.

    The first cast is the job's: numeric transforms take their raw values as float32.

    The graph of ``transform: log`` computes in float64 because float32 ``log1p`` rounds a value
    differently depending on where it sits in the batch (SIMD lanes against the scalar tail). The
    float64 result rounded to float32 is what the graph writes; another library's ``log1p`` (XLA's
    on JAX) may round the last float64 bit differently, which the float32 rounding can expose, so
    this layer runs TensorFlow's kernel on every backend, as Keras' own string layers run TF inside.

    Examples:
        >>> import keras
        >>> import numpy as np
        >>> from skewless.layers import Log1p
        >>> logged = keras.ops.convert_to_numpy(Log1p()(np.array([0.0, 1.0, 99.0])))
        >>> logged.tolist() == np.log1p(np.array([0.0, 1.0, 99.0])).astype(np.float32).tolist()
        True
        >>> logged.tolist()
        [0.0, 0.6931471824645996, 4.605170249938965]
    """

    def __init__(self, **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)

    def call(self, inputs):
        if not isinstance(inputs, tf.Tensor):
            inputs = tf.convert_to_tensor(keras.ops.convert_to_numpy(inputs))
        return to_backend(tf.cast(tf.math.log1p(tf.cast(tf.cast(inputs, tf.float32), tf.float64)), tf.float32))

    def compute_output_spec(self, inputs):
        return keras.KerasTensor(inputs.shape, dtype="float32")
