"""`transform: scale_to_gaussian`: heavy-tailed numbers made about standard normal (`tft.scale_to_gaussian`)."""

from __future__ import annotations

from skewless.lazy_imports import lazy_import
from skewless.transforms.numeric import NumericTransform

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")
tft = lazy_import("tensorflow_transform")


class ScaleToGaussian(NumericTransform):
    name = "scale_to_gaussian"
    unit_scale = True
    shapes = False  # its batch-wise L-moments over a shape's values are untested here
    doc = ("`tft.scale_to_gaussian`: the inverse of a Tukey HH distribution fitted by L-moments, so heavy tails "
           "(delays, prices, incomes) come out about standard normal; a column without long tails is z-scored. "
           "tf.Transform estimates the L-moments within each batch and averages them; the job feeds it the rows in "
           "input order in batches of 65,536, whatever the format or `output.shards`, so the parameters depend on "
           "the rows and their order only")
    native_reason = ("the inverse Tukey HH transform (a Lambert W function of each value) has no Keras layer that "
                     "computes it bit for bit")

    def scale(self, value, options: dict, key=None):
        # float64, then float32: the inverse Tukey HH transform in float32 gives values an ulp apart depending on
        # where a row sits in the batch (SIMD lanes against the scalar tail), so a row served alone, or written
        # from another work unit, would differ; rounded from float64 it does not
        return tf.cast(tft.scale_to_gaussian(tf.cast(value, tf.float64)), tf.float32)


TRANSFORM = ScaleToGaussian()
