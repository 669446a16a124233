"""`transform: scale_by_min_max`: the dataset's [min, max] mapped onto `range` (`tft.scale_by_min_max`)."""

from __future__ import annotations

from pydantic import Field

from skewless.lazy_imports import lazy_import
from skewless.transforms.base import Option
from skewless.transforms.numeric import CLIP, ELEMENTWISE, KEY, NumericTransform
from skewless.transforms.scale_0_1 import TRANSFORM as SCALE_0_1
from skewless.transforms.scale_0_1 import min_max_scaled

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tft = lazy_import("tensorflow_transform")
keras = lazy_import("keras")

RANGE = Option("output_range", list[float] | None, Field(default=None, min_length=2, max_length=2, alias="range"),
               "`[lo, hi]`: the output range (none: `[0, 1]`)")


class ScaleByMinMax(NumericTransform):
    name = "scale_by_min_max"
    unit_scale = True
    doc = ("`tft.scale_by_min_max`: the dataset's [min, max] mapped onto `range`; with `key`, "
           "`tft.scale_by_min_max_per_key`; with `elementwise`, per position of a `shape`")
    options = (CLIP, RANGE, KEY, ELEMENTWISE)
    native_ops = SCALE_0_1.native_ops
    native_layers = ("`Standardize`, Keras `Rescaling(high - low, low)`: bit for bit, the graph's two float32 "
                     "roundings (a constant feature is refused, as for `scale_0_1`)")
    native_options = ("clip", "output_range")

    def check(self, feature) -> str | None:
        problem = super().check(feature)
        low_high = feature.output_range
        if problem is None and low_high is not None and low_high[0] >= low_high[1]:
            problem = f"range [{low_high[0]:g}, {low_high[1]:g}] must be increasing"
        return problem

    def scale(self, value, options: dict, key=None):
        low, high = options["output_range"] or (0.0, 1.0)
        if key is None:
            return tft.scale_by_min_max(value, output_min=low, output_max=high,
                                        elementwise=options.get("elementwise", False))
        return tft.scale_by_min_max_per_key(value, key, output_min=low, output_max=high,
                                            elementwise=options.get("elementwise", False))


    def native_scale(self, plan, graph) -> str | None:
        """`Standardize` as for scale_0_1, then Keras' `Rescaling`: ``* (high - low) + low`` as the graph
        multiplies and adds (two float32 roundings; the float32 of Python's high - low)."""
        low, high = plan.options.get("output_range") or (0.0, 1.0)
        reason = min_max_scaled(plan, graph, "scale_by_min_max", positive_zero=False)
        if reason is None:
            plan.layers.append(keras.layers.Rescaling(scale=float(high) - float(low), offset=float(low),
                                                      dtype="float32", name=f"{plan.layer_name}_range"))
        return reason


TRANSFORM = ScaleByMinMax()
