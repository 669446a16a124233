"""`transform: z_score`: (x - mean) / standard deviation, both over the whole dataset (`tft.scale_to_z_score`)."""

from __future__ import annotations

import numpy as np

from skewless.lazy_imports import lazy_import
from skewless.transforms.base import not_built_by
from skewless.transforms.numeric import CLIP, CLIP_OPS, ELEMENTWISE, KEY, NumericTransform

FLOAT32_MAX = float(np.finfo(np.float32).max)
# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tft = lazy_import("tensorflow_transform")
standardize_layers = lazy_import("skewless.layers.standardize")


class ZScore(NumericTransform):
    name = "z_score"
    unit_scale = True
    doc = ("`tft.scale_to_z_score`: (x - mean) / standard deviation (x - mean when the deviation is 0); with `key`, "
           "`tft.scale_to_z_score_per_key`; with `elementwise`, per position of a `shape`")
    options = (CLIP, KEY, ELEMENTWISE)
    label_transform = True
    native_ops = frozenset({"Sub", "Sqrt", "NotEqual", "ZerosLike", "AddV2", "RealDiv", "SelectV2"}) | CLIP_OPS
    native_layers = '`Standardize` (skewless, `keras.ops`): bit for bit'
    native_options = ("clip",)

    def scale(self, value, options: dict, key=None):
        if key is not None:
            return tft.scale_to_z_score_per_key(value, key, elementwise=options.get("elementwise", False))
        return tft.scale_to_z_score(value, elementwise=options.get("elementwise", False))

    def native_scale(self, plan, graph) -> str | None:
        return standardized(plan, graph, "z_score")

    def float32_risk(self, feature, statistics: dict) -> bool:
        # tf.Transform sums squared deviations in float32 by batch: values whose squares summed over the rows come
        # near float32's largest overflow there (measured: a deviation of 2e18 over 400 rows), well before the
        # variance itself would
        std, count = statistics.get("std"), statistics.get("count") or 0
        return std is not None and std * std * max(count, 1) > FLOAT32_MAX * 1e-3

    def float32_problem(self, graph_feature) -> str | None:
        variance = graph_feature.constant("Sqrt", 0)
        if variance is None or (np.isfinite(np.float32(variance)) and np.float32(variance) < FLOAT32_MAX):
            return None
        return (f"its variance overflowed float32 in tf.Transform's analyzer (the graph holds {np.float32(variance)}, "
                "so every z-score would be divided by a wrong deviation); clip the feature's values "
                "(`clip: [low, high]`) or rescale them before the job")

    def label_statistics(self, graph) -> dict[str, float] | None:
        return mean_and_deviation(graph)

    def original_units(self, value, statistics: dict):
        return undo_z_score(value, statistics)


def mean_and_deviation(graph) -> dict[str, float] | None:
    """{"mean", "std"} of a z-scored output, as the graph's float32 constants hold them (None if not there)."""
    mean, variance = graph.constant("Sub", 1), graph.constant("Sqrt", 0)
    if mean is None or variance is None:
        return None
    return {"mean": float(np.float32(mean)), "std": float(np.sqrt(np.float32(variance)))}


def undo_z_score(value, statistics: dict):
    """z-scores back to values; a deviation of 0 left `x - mean` undivided."""
    std = statistics["std"] if statistics["std"] != 0 else 1.0
    return value * std + statistics["mean"]


def standardized(plan, graph, layer: str) -> str | None:
    """`Standardize` layers with the graph's mean and deviation (`layer` names them), or why not.

    Standardize keeps the graph's float32 rounding on every backend; Keras' Normalization does not (XLA
    turns its division into a multiplication by a reciprocal, and it divides by max(std, epsilon)).
    """
    mean, variance = graph.constant("Sub", 1), graph.constant("Sqrt", 0)
    if mean is None or variance is None or not {"RealDiv", "SelectV2"} <= graph.op_types:
        return not_built_by("scale_to_z_score")
    mean, deviation = np.float32(mean), np.sqrt(np.float32(variance))
    if not (np.isfinite(mean) and np.isfinite(deviation)):
        return f"its mean ({mean}) or standard deviation ({deviation}) is not finite"
    # A deviation of 0 leaves x - mean undivided in tf.Transform; dividing by 1 is the same.
    scale = deviation if deviation != 0 else np.float32(1)
    plan.layers = [standardize_layers.Standardize(mean, scale, name=f"{plan.layer_name}_{layer}")]
    plan.probe = {"points": [float(mean)], "scale": float(scale)}
    return None


TRANSFORM = ZScore()
