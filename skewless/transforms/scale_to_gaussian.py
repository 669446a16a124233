"""`transform: scale_to_gaussian`: heavy-tailed numbers made about standard normal (`tft.scale_to_gaussian`)."""

from __future__ import annotations

from skewless.transforms.numeric import NumericTransform


class ScaleToGaussian(NumericTransform):
    name = "scale_to_gaussian"
    unit_scale = True
    shapes = False  # its batch-wise L-moments over a shape's values are untested here
    doc = ("`tft.scale_to_gaussian`: the inverse of a Tukey HH distribution fitted by L-moments, so heavy tails "
           "(delays, prices, incomes) come out about standard normal; a column without long tails is z-scored. "
           "tf.Transform estimates the L-moments within each batch (here a work unit's rows) and averages them, "
           "so another `output.shards` gives other parameters")
    native_reason = ("the inverse Tukey HH transform (a Lambert W function of each value) has no Keras layer that "
                     "computes it bit for bit")

    def scale(self, value, options: dict, key=None):
        import tensorflow_transform as tft

        return tft.scale_to_gaussian(value)


TRANSFORM = ScaleToGaussian()
