"""`transform: log`: log1p, then the z-score of that over the whole dataset."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from skewless.lazy_imports import lazy_import
from skewless.ops.values import each
from skewless.transforms.base import not_built_by
from skewless.transforms.numeric import NumericTransform
from skewless.transforms.z_score import TRANSFORM as Z_SCORE
from skewless.transforms.z_score import mean_and_deviation, standardized, undo_z_score

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")
tft = lazy_import("tensorflow_transform")
log1p_layers = lazy_import("skewless.layers.log1p")


class Log(NumericTransform):
    name = "log"
    unit_scale = True
    doc = "log1p then `tft.scale_to_z_score`; values must be above -1 (`clip` them)"
    label_transform = True
    native_ops = Z_SCORE.native_ops | {"Log1p"}
    native_layers = "`Log1p` (float64, TensorFlow's kernel on every backend), `Standardize`: bit for bit"
    native_options = ("clip",)

    def raw_above(self, feature) -> float | None:
        # log1p is finite above -1 only; a clip above -1 makes every value fit (a label has no clip: the job asks
        # this for `label.transform: log` too, and serving checks the same bound: one rule)
        clip = getattr(feature, "clip", None)
        return -1.0 if clip is None or clip[0] <= -1 else None

    def scale(self, value, options: dict, key=None):
        # float32 log1p gives values an ulp apart depending on where a row sits in the batch (SIMD lanes
        # against the scalar tail), so serving one row would skew; float64 rounded to float32 does not
        def log1p(x):
            return tf.cast(tf.math.log1p(tf.cast(x, tf.float64)), tf.float32)

        return tft.scale_to_z_score(each(log1p, value))

    def label_statistics(self, graph) -> dict[str, float] | None:
        return mean_and_deviation(graph)  # of log1p(x)

    def original_units(self, value, statistics: dict):
        return tf.math.expm1(undo_z_score(value, statistics))


    def native_scale(self, plan, graph) -> str | None:
        """`Log1p` (float64 inside, TensorFlow's kernel on every backend) then `Standardize`."""
        if "Log1p" not in graph.op_types:
            return not_built_by("log1p")
        reason = standardized(plan, graph, "z_score")
        if reason is None:
            plan.layers = [log1p_layers.Log1p(name=f"{plan.layer_name}_log1p"), *plan.layers]
            # the probes are raw values: around the values whose log1p is the mean
            mean = plan.probe["points"][0]
            plan.probe = {"points": [0.0, float(np.expm1(mean))], "scale": float(np.expm1(mean)) or 1.0}
            bound = self.raw_above(SimpleNamespace(**plan.options))
            if bound is not None:  # values at or below it are refused by the graph (as the job quarantines them)
                plan.probe["above"] = bound
        return reason


TRANSFORM = Log()
