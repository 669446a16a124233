"""Encoded images (JPEG, PNG, GIF, BMP bytes) to fixed-size float pixels, inside the graph.

Each row is decoded by `tf.io.decode_image` (the format is read from the bytes), converted to float32
in [0, 1] (`dtype=tf.float32` divides uint8 by 255), and resized to ``size`` with bilinear
interpolation, so the output is (batch, height, width, channels) whatever the input sizes. The same
ops run at serving, on the raw bytes of a request.
"""

from __future__ import annotations

from skewless.lazy_imports import lazy_import

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")


def decode_images(value, size: list[int], channels: int):
    """(batch,) encoded images -> (batch, height, width, channels) float32 pixels in [0, 1]."""
    height, width = size

    def decode(data):
        image = tf.io.decode_image(data, channels=channels, dtype=tf.float32, expand_animations=False)
        # bilinear weights are convex, so values stay in [0, 1] (up to rounding, hence the clip)
        return tf.clip_by_value(tf.image.resize(image, [height, width]), 0.0, 1.0)

    return tf.map_fn(decode, value, fn_output_signature=tf.TensorSpec([height, width, channels], tf.float32))
