"""`transform: quantile_clip`: values clipped to the dataset's [q, 1 - q] quantiles.

The example of docs/design.md, "Adding a transform": this module is all there is to it (plus its line in
the registry, its Keras layer layers/clip.py and tests/transforms/test_quantile_clip.py).
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from skewless.lazy_imports import lazy_import
from skewless.ops.values import each
from skewless.transforms.base import Option, not_built_by
from skewless.transforms.numeric import NumericTransform

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")
tft = lazy_import("tensorflow_transform")
clip_layers = lazy_import("skewless.layers.clip")

# tf.Transform's quantiles are approximate: each boundary's rank is within EPSILON * rows of the exact one
EPSILON = 0.001

QUANTILE = Option("quantile", float, Field(default=0.01, gt=0, lt=0.5),
                  "q, 1/n for an integer n: clip to the [q, 1 - q] quantiles")


class QuantileClip(NumericTransform):
    name = "quantile_clip"
    doc = (f"float32 values clipped to the dataset's [q, 1 - q] quantiles (`tft.quantiles`, epsilon {EPSILON}), "
           "e.g. to tame outliers")
    options = (QUANTILE,)
    lists = False
    shapes = False
    native_ops = frozenset({"Reshape", "StridedSlice", "Minimum", "Maximum"})
    native_layers = '`Clip(low, high)`: exactly'
    native_options = ("quantile",)

    def check(self, feature) -> str | None:
        buckets = round(1 / feature.quantile)
        if abs(buckets * feature.quantile - 1) > 1e-9:
            return f"quantile {feature.quantile:g} must be 1/n for an integer n (0.01, 0.05, 0.1, 0.25, ...)"
        return None

    def scale(self, value, options: dict, key=None):
        # the quantiles at 1/n, 2/n, ..., (n-1)/n: the first and the last are q and 1 - q
        boundaries = tf.reshape(tft.quantiles(value, round(1 / options["quantile"]), EPSILON), [-1])
        return each(tf.clip_by_value, value, boundaries[0], boundaries[-1])

    def native(self, plan, graph) -> str | None:
        """`Clip` with the first and last of the boundaries the graph holds."""
        boundaries = graph.constant("Reshape", 0)
        if boundaries is None or not {"Minimum", "Maximum"} <= graph.op_types:
            return not_built_by("quantiles")
        boundaries = np.asarray(boundaries, np.float32).reshape(-1)
        low, high = boundaries[0], boundaries[-1]
        if not (np.isfinite(low) and np.isfinite(high) and low <= high):
            return f"its quantiles [{low}, {high}] are not finite and ordered"
        plan.layers = [clip_layers.Clip(low, high, name=f"{plan.layer_name}_quantile_clip")]
        plan.probe = {"points": [float(low), float(high)], "scale": float(high - low) or 1.0}
        return None


TRANSFORM = QuantileClip()
