"""`Standardize`: ``(x - center) / scale`` rounded exactly as tf.Transform's graph rounds it."""

from __future__ import annotations

import keras
import tensorflow as tf

from skewless.layers.backend_tensors import is_tf
from skewless.layers.raw_value_layer import RawValueLayer
from skewless.lazy_imports import lazy_import

# on first use: only on the JAX backend, where Keras has loaded jax already
jax = lazy_import("jax")


@keras.saving.register_keras_serializable(package="skewless")
class Standardize(RawValueLayer):
    """Computes ``(float32(x) - center) / scale`` in float32 with a true division, on every backend.

    This is ``tft.scale_to_z_score`` (center = mean, scale = standard deviation) and
    ``tft.scale_to_0_1`` (center = min, scale = max - min) bit for bit. Keras' ``Normalization``
    is not: XLA (the JAX backend) rewrites a division by a broadcast scalar into a multiplication
    by its reciprocal, one unit in the last place off for about half of all inputs, and
    ``Normalization`` divides by ``max(sqrt(variance), epsilon)``. Here the JAX path divides by a
    full tensor hidden from that rewrite by ``jax.lax.optimization_barrier``; TF (also inside
    ``tf.data`` on any backend) divides by the scalar as the tf.Transform graph does.

    Args:
        center: subtracted first (a float32 value).
        scale: the divisor (a float32 value, not 0).
        positive_zero: map -0.0 to +0.0, as the ``* 1 + 0`` that ends ``tft.scale_to_0_1`` does.

    Examples:
        >>> import keras
        >>> import numpy as np
        >>> from skewless.layers import Standardize
        >>> scaled = Standardize(center=38.5, scale=13.25)(np.array([38.5, 51.75, 25]))
        >>> keras.ops.convert_to_numpy(scaled)
        array([ 0.      ,  1.      , -1.018868], dtype=float32)

        Bit for bit tf.Transform's float32 ``(x - mean) / std``:

        >>> bool((keras.ops.convert_to_numpy(scaled) == (np.float32([38.5, 51.75, 25]) - np.float32(38.5))
        ...       / np.float32(13.25)).all())
        True
    """

    def __init__(self, center: float, scale: float, positive_zero: bool = False, **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        self.center = float(center)
        self.scale = float(scale)
        self.positive_zero = bool(positive_zero)

    def call(self, inputs):
        if is_tf(inputs) or keras.backend.backend() == "tensorflow":
            scaled = (tf.cast(inputs, tf.float32) - self.center) / self.scale
            return tf.where(tf.equal(scaled, 0), tf.zeros_like(scaled), scaled) if self.positive_zero else scaled
        # convert_to_tensor converts int64 NumPy values to float32 directly (JAX would first truncate to int32).
        centered = keras.ops.convert_to_tensor(inputs, dtype="float32") - self.center
        divisor = keras.ops.full_like(centered, self.scale)
        if keras.backend.backend() == "jax":
            divisor = jax.lax.optimization_barrier(divisor)
        scaled = centered / divisor
        return keras.ops.where(scaled == 0, 0.0, scaled) if self.positive_zero else scaled

    def compute_output_spec(self, inputs):
        return keras.KerasTensor(inputs.shape, dtype="float32")

    def get_config(self):
        config = super().get_config()
        config.update(center=self.center, scale=self.scale, positive_zero=self.positive_zero)
        return config
