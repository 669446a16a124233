"""`transform: scale_0_1`: (x - min) / (max - min) over the whole dataset (`tft.scale_to_0_1`)."""

from __future__ import annotations

from skewless.transforms.base import not_built_by
from skewless.transforms.numeric import CLIP, KEY, NumericTransform


class Scale01(NumericTransform):
    name = "scale_0_1"
    doc = "`tft.scale_to_0_1`: (x - min) / (max - min); with `key`, `tft.scale_to_0_1_per_key`"
    options = (CLIP, KEY)
    label_transform = True
    native_ops = frozenset({"Sub", "ZerosLike", "Less", "AddV2", "RealDiv", "Sigmoid", "SelectV2", "Mul"})

    def scale(self, value, options: dict, key=None):
        import tensorflow_transform as tft

        return tft.scale_to_0_1(value) if key is None else tft.scale_to_0_1_per_key(value, key)

    def native(self, plan, graph) -> str | None:
        import numpy as np

        from skewless.layers.standardize import Standardize

        negated_min, maximum = graph.constant("Sub", 1), graph.constant("Less", 1)
        if negated_min is None or maximum is None or "Sigmoid" not in graph.op_types:
            return not_built_by("scale_to_0_1")
        # The graph's own float32 steps: min = 0 - (-min), range = max - min.
        minimum = np.float32(0) - np.float32(negated_min)
        maximum = np.float32(maximum)
        if not (np.isfinite(minimum) and np.isfinite(maximum)):
            return f"its min ({minimum}) or max ({maximum}) is not finite"
        if not minimum < maximum:
            # a constant feature goes through a sigmoid in scale_to_0_1
            return (f"min {minimum} >= max {maximum}: tf.Transform then maps values through a sigmoid, "
                    "whose float rounding differs between backends")
        span = maximum - minimum
        if not np.isfinite(span):
            return f"its range max - min overflows float32 ({maximum} - {minimum})"
        plan.layers = [Standardize(minimum, span, positive_zero=True, name=f"{plan.layer_name}_scale_0_1")]
        plan.probe = {"points": [float(minimum), float(maximum)], "scale": float(span)}
        return None

    def label_statistics(self, graph) -> dict[str, float] | None:
        import numpy as np

        negated_min, maximum = graph.constant("Sub", 1), graph.constant("Less", 1)
        if negated_min is None or maximum is None:
            return None
        # the graph's own float32 steps: min = 0 - (-min)
        return {"min": float(np.float32(0) - np.float32(negated_min)), "max": float(np.float32(maximum))}

    def original_units(self, value, statistics: dict):
        # a label of one value (max = min) gives that value back
        return value * (statistics["max"] - statistics["min"]) + statistics["min"]


TRANSFORM = Scale01()
