"""`transform: bucketize`: bucket ids from `num_buckets` quantile boundaries over the whole dataset, or from fixed
`boundaries` (no analysis)."""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field

from skewless.lazy_imports import lazy_import
from skewless.ops.values import keys_per_value
from skewless.transforms.base import Option, not_built_by
from skewless.transforms.numeric import CLIP, CLIP_OPS, ELEMENTWISE, KEY, NumericTransform

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")
tft = lazy_import("tensorflow_transform")
keras = lazy_import("keras")
cast_layers = lazy_import("skewless.layers.cast")

NUM_BUCKETS = Option("num_buckets", int | None, Field(default=None, ge=1),
                     "how many buckets, cut at quantiles (this or `boundaries`)")
BOUNDARIES = Option("boundaries", list[float] | None, Field(default=None, min_length=1),
                    "`[b0, b1, ...]`: fixed bucket boundaries, finite and increasing (`tft.apply_buckets`, no "
                    "analysis): bucket i holds b(i-1) <= x < b(i), so len + 1 buckets")
EPSILON = Option("epsilon", float | None, Field(default=None, gt=0, lt=1),
                 "the quantiles' error tolerance: each boundary's rank within epsilon * rows of the exact one "
                 "(none: tf.Transform's min(1 / num_buckets, 0.01))")


class Bucketize(NumericTransform):
    name = "bucketize"
    doc = ("`tft.bucketize`: int64 bucket ids from quantile boundaries; with `key`, `tft.bucketize_per_key`; with "
           "`elementwise`, boundaries per position of a `shape`; with `boundaries`, `tft.apply_buckets`")
    options = (NUM_BUCKETS, BOUNDARIES, CLIP, KEY, EPSILON, ELEMENTWISE)
    ids = True
    native_ops = frozenset({"Reshape", "Shape", "UpperBound"}) | CLIP_OPS
    native_layers = 'Keras `Discretization(bin_boundaries)`, `Cast("int64")`: exactly'
    # epsilon only moves the boundaries, which the native layer reads from the graph
    native_options = ("num_buckets", "boundaries", "epsilon", "clip")
    report_options = ("num_buckets",)
    quantile_buckets = "num_buckets"
    keyed_elementwise = False

    def check(self, feature) -> str | None:
        if feature.num_buckets is None and feature.boundaries is None:
            return "transform bucketize needs num_buckets (boundaries at quantiles) or boundaries (fixed ones)"
        if feature.num_buckets is not None and feature.boundaries is not None:
            return "give either num_buckets (boundaries at quantiles) or boundaries (fixed ones), not both"
        if feature.boundaries is not None:
            return self._check_boundaries(feature) or super().check(feature)
        return super().check(feature)

    @staticmethod
    def _check_boundaries(feature) -> str | None:
        boundaries = feature.boundaries
        if not all(math.isfinite(value) for value in boundaries):
            return f"boundaries {boundaries}: every boundary must be a finite number"
        if any(low >= high for low, high in zip(boundaries, boundaries[1:])):
            return f"boundaries {boundaries}: each boundary must be above the one before (sorted, no repeats)"
        for option in ("key", "epsilon", "elementwise"):
            if getattr(feature, option) not in (None, False):
                return f"boundaries are fixed; {option} applies to quantile boundaries (num_buckets)"
        return None

    def scale(self, value, options: dict, key=None):
        if options.get("boundaries") is not None:
            # the boundaries as float32, the values' type, as tft.bucketize's own are
            return tft.apply_buckets(value, [[float(b) for b in options["boundaries"]]])
        if key is None:
            return tft.bucketize(value, options["num_buckets"], epsilon=options["epsilon"],
                                 elementwise=options.get("elementwise", False))
        # bucketize_per_key takes a key per value (a list's: a SparseTensor of the list's indices, a feature list's:
        # a RaggedTensor of its splits), and a dense value of rank 1: a shape's values are bucketized flat, each
        # with its row's key, then given the shape back
        keys = keys_per_value(value, key)
        if isinstance(value, (tf.SparseTensor, tf.RaggedTensor)) or value.shape.rank == 1:
            return tft.bucketize_per_key(value, keys, options["num_buckets"], epsilon=options["epsilon"])
        ids = tft.bucketize_per_key(tf.reshape(value, [-1]), tf.reshape(keys, [-1]), options["num_buckets"],
                                    epsilon=options["epsilon"])
        ids = tf.reshape(ids, tf.shape(value))
        ids.set_shape(value.shape)
        return ids

    def native_scale(self, plan, graph) -> str | None:
        """Discretization(bin_boundaries) counts the boundaries <= x as tf.Transform's UpperBound does."""
        boundaries = graph.constant("Reshape", 0)
        if plan.options.get("boundaries") is not None and boundaries is None and "UpperBound" in graph.op_types:
            # fixed boundaries are a constant of the graph's own, not an analyzer's: the config's, as float32
            boundaries = np.asarray(plan.options["boundaries"], np.float32)
        if boundaries is None or "UpperBound" not in graph.op_types or boundaries.dtype != np.float32:
            return not_built_by("bucketize")
        boundaries = [float(value) for value in np.asarray(boundaries).reshape(-1)]
        if boundaries != sorted(boundaries) or not all(np.isfinite(boundaries)):
            return f"its bucket boundaries {boundaries} are not finite and sorted"
        plan.layers = [
            keras.layers.Discretization(bin_boundaries=boundaries, output_mode="int",
                                        name=f"{plan.layer_name}_discretization"),
            # Discretization's indices are int32; tf.Transform's are int64.
            cast_layers.Cast("int64", name=f"{plan.layer_name}_int64"),
        ]
        spread = (boundaries[-1] - boundaries[0]) if len(boundaries) > 1 else 1.0
        plan.probe = {"points": boundaries, "scale": spread or 1.0}
        return None


TRANSFORM = Bucketize()
