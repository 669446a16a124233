"""`transform: scale_0_1`: (x - min) / (max - min) over the whole dataset (`tft.scale_to_0_1`)."""

from __future__ import annotations

import numpy as np

from skewless.lazy_imports import lazy_import
from skewless.transforms.base import not_built_by
from skewless.transforms.numeric import CLIP, CLIP_OPS, ELEMENTWISE, KEY, NumericTransform

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tft = lazy_import("tensorflow_transform")
standardize_layers = lazy_import("skewless.layers.standardize")


class Scale01(NumericTransform):
    name = "scale_0_1"
    unit_scale = True
    doc = ("`tft.scale_to_0_1`: (x - min) / (max - min); with `key`, `tft.scale_to_0_1_per_key`; with `elementwise`, "
           "per position of a `shape`")
    options = (CLIP, KEY, ELEMENTWISE)
    label_transform = True
    native_ops = frozenset({"Sub", "ZerosLike", "Less", "AddV2", "RealDiv", "Sigmoid", "SelectV2", "Mul"}) | CLIP_OPS
    native_layers = ("`Standardize(positive_zero=True)`: bit for bit (a constant feature is refused: tf.Transform's "
                     "sigmoid rounds differently per backend)")
    native_options = ("clip",)

    def scale(self, value, options: dict, key=None):
        if key is not None:
            return tft.scale_to_0_1_per_key(value, key, elementwise=options.get("elementwise", False))
        return tft.scale_to_0_1(value, elementwise=options.get("elementwise", False))

    def native_scale(self, plan, graph) -> str | None:
        return min_max_scaled(plan, graph, "scale_0_1", positive_zero=True)

    def label_statistics(self, graph) -> dict[str, float] | None:
        negated_min, maximum = graph.constant("Sub", 1), graph.constant("Less", 1)
        if negated_min is None or maximum is None:
            return None
        # the graph's own float32 steps: min = 0 - (-min)
        return {"min": float(np.float32(0) - np.float32(negated_min)), "max": float(np.float32(maximum))}

    def original_units(self, value, statistics: dict):
        # a label of one value (max = min) gives that value back
        return value * (statistics["max"] - statistics["min"]) + statistics["min"]


def min_max_scaled(plan, graph, layer: str, positive_zero: bool) -> str | None:
    """`Standardize` with the graph's min and max - min (`layer` names it), or why not.

    tf.Transform's scale_to_0_1 and scale_by_min_max compute ``(x - min) / (max - min)`` then
    ``* (high - low) + low``; `positive_zero` stands for the ``* 1 + 0`` of [0, 1], which turns -0.0 into +0.0.
    """
    negated_min, maximum = graph.constant("Sub", 1), graph.constant("Less", 1)
    if negated_min is None or maximum is None or "Sigmoid" not in graph.op_types:
        return not_built_by("scale_by_min_max")
    # The graph's own float32 steps: min = 0 - (-min), range = max - min.
    minimum = np.float32(0) - np.float32(negated_min)
    maximum = np.float32(maximum)
    if not (np.isfinite(minimum) and np.isfinite(maximum)):
        return f"its min ({minimum}) or max ({maximum}) is not finite"
    if not minimum < maximum:
        # a constant feature goes through a sigmoid in tf.Transform's min-max scaling
        return (f"min {minimum} >= max {maximum}: tf.Transform then maps values through a sigmoid, "
                "whose float rounding differs between backends")
    span = maximum - minimum
    if not np.isfinite(span):
        return f"its range max - min overflows float32 ({maximum} - {minimum})"
    plan.layers = [standardize_layers.Standardize(minimum, span, positive_zero=positive_zero,
                                                  name=f"{plan.layer_name}_{layer}")]
    plan.probe = {"points": [float(minimum), float(maximum)], "scale": float(span)}
    return None


TRANSFORM = Scale01()
