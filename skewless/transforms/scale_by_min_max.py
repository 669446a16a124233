"""`transform: scale_by_min_max`: the dataset's [min, max] mapped onto `range` (`tft.scale_by_min_max`)."""

from __future__ import annotations

from pydantic import Field

from skewless.transforms.base import Option
from skewless.transforms.numeric import CLIP, KEY, NumericTransform

RANGE = Option("output_range", list[float] | None, Field(default=None, min_length=2, max_length=2, alias="range"),
               "`[lo, hi]`: the output range (none: `[0, 1]`)")


class ScaleByMinMax(NumericTransform):
    name = "scale_by_min_max"
    doc = "`tft.scale_by_min_max`: the dataset's [min, max] mapped onto `range`; with `key`, `tft.scale_by_min_max_per_key`"
    options = (CLIP, RANGE, KEY)

    def check(self, feature) -> str | None:
        problem = super().check(feature)
        low_high = feature.output_range
        if problem is None and low_high is not None and low_high[0] >= low_high[1]:
            problem = f"range [{low_high[0]:g}, {low_high[1]:g}] must be increasing"
        return problem

    def scale(self, value, options: dict, key=None):
        import tensorflow_transform as tft

        low, high = options["output_range"] or (0.0, 1.0)
        if key is None:
            return tft.scale_by_min_max(value, output_min=low, output_max=high)
        return tft.scale_by_min_max_per_key(value, key, output_min=low, output_max=high)


TRANSFORM = ScaleByMinMax()
