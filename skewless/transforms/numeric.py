"""What the numeric transforms share: float32 values, clipped to `clip` when the config asks."""

from __future__ import annotations

from pydantic import Field

from skewless.transforms.base import Option, Transform
from skewless.transforms.values import each

CLIP = Option("clip", list[float] | None, Field(default=None, min_length=2, max_length=2),
              "`[lo, hi]`: values are clipped to it before the transform")


class NumericTransform(Transform):
    """A transform of numbers: the raw values as float32, clipped, then `scale` (tf.Transform)."""

    options = (CLIP,)
    needs = "number"

    def check(self, feature) -> str | None:
        if feature.clip is not None and feature.clip[0] > feature.clip[1]:
            return f"clip [{feature.clip[0]:g}, {feature.clip[1]:g}]: the low end is above the high end"
        return None

    def transform(self, value, options: dict, vocabulary=None):
        import tensorflow as tf

        value = each(tf.cast, value, tf.float32)
        if options.get("clip") is not None:
            low, high = options["clip"]
            value = each(tf.clip_by_value, value, low, high)
        return self.scale(value, options)

    def scale(self, value, options: dict):
        """The tf.Transform call on the float32 (clipped) values."""
        raise NotImplementedError
