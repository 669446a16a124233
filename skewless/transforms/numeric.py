"""What the numeric transforms share: float32 values, clipped to `clip` when the config asks, and for those that
take `key`, statistics per value of another column."""

from __future__ import annotations

from pydantic import Field

from skewless.errors import ConfigError
from skewless.lazy_imports import lazy_import
from skewless.ops.values import as_strings, each
from skewless.transforms.base import Option, Transform, not_built_by

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")
clip_layers = lazy_import("skewless.layers.clip")

# the ops tf.clip_by_value emits: `clip` in the graph
CLIP_OPS = frozenset({"Minimum", "Maximum"})

CLIP = Option("clip", list[float] | None, Field(default=None, min_length=2, max_length=2),
              "`[lo, hi]`: values are clipped to it before the transform")
# One config key, two meanings: a column for the per-key statistics, two numbers for hash (hash.py)
KEY = Option("key", str | list[int] | None, Field(default=None),
             "a raw int or string column of one value per row: the statistics per value of it (`tft.*_per_key`; "
             "with `list`, `sequence` or `shape`, every value of a row takes the row's key; a value whose key the analysis did "
             "not see: z_score leaves it unscaled, the scales take its sigmoid, bucketize gives -1)")
ELEMENTWISE = Option("elementwise", bool, Field(default=False),
                     "with `shape`: the statistics per position of the shape, not over all its values "
                     "(tf.Transform's `elementwise=True`)")


class NumericTransform(Transform):
    """A transform of numbers: the raw values as float32, clipped, then `scale` (tf.Transform)."""

    options = (CLIP,)
    needs = "number"
    shapes = True
    # whether tf.Transform's per-key mapper computes statistics per position of a shape (`elementwise` with `key`)
    keyed_elementwise = True

    def check(self, feature) -> str | None:
        if feature.clip is not None and feature.clip[0] > feature.clip[1]:
            return f"clip [{feature.clip[0]:g}, {feature.clip[1]:g}]: the low end is above the high end"
        if KEY in self.options and feature.key is not None:
            if not isinstance(feature.key, str):
                return f"key of transform {self.name} names a column (key: COLUMN); two numbers key a hash"
            if feature.elementwise and not self.keyed_elementwise:
                return (f"elementwise: true with key: tf.Transform's per-key {self.name} has no statistics per "
                        "position (z_score, scale_0_1 and scale_by_min_max have)")
        if ELEMENTWISE in self.options and feature.elementwise and feature.shape is None:
            return "elementwise: true needs a fixed shape (shape: [d0, ...]): its statistics are per position"
        return None

    def reads(self, feature) -> list[str]:
        return [feature.key] if KEY in self.options and feature.key is not None else []

    def check_columns(self, name: str, feature, kinds: dict[str, str]) -> None:
        super().check_columns(name, feature, kinds)
        for key in self.reads(feature):
            if kinds[key] == "float":
                raise ConfigError(f"features.{name}.key: {key} holds floats; per-key statistics group by integers "
                                  "or strings (bucketize it, or key by a categorical column)")

    def transform(self, value, options: dict, vocabulary=None, columns=None):
        value = each(tf.cast, value, tf.float32)
        if options.get("clip") is not None:
            low, high = options["clip"]
            value = each(tf.clip_by_value, value, low, high)
        if options.get("key") is None:
            return self.scale(value, options)
        # tf.Transform's per-key analyzers take string keys: an integer key groups by its decimal text
        key = as_strings(columns[options["key"]])
        if isinstance(value, tf.Tensor) and value.shape.rank > 2 and not options.get("elementwise"):
            # a shape of two or more dimensions: tf.Transform's per-key mean and variance of a dense value sum
            # its second axis only (a (batch, d0, d1) z_score came out of the wrong shape), so every per-key
            # mapper gets a row's values in one (batch, d0 * d1) axis, then the shape back
            flat = tf.reshape(value, [-1, value.shape[1:].num_elements()])
            scaled = tf.reshape(self.scale(flat, options, key), tf.shape(value))
            scaled.set_shape(value.shape)
            return scaled
        return self.scale(value, options, key)

    def scale(self, value, options: dict, key=None):
        """The tf.Transform call on the float32 (clipped) values; `key`: the rows' string keys (batch,), or None.
        A list's value is a (batch, n) SparseTensor, a feature list's a (batch, steps, values) RaggedTensor, a
        shape's a dense (batch, d0, ...) tensor: tf.Transform's per-key mappers take each value's key from its row
        (the index on axis 0)."""
        raise NotImplementedError

    def native(self, plan, graph) -> str | None:
        """`native_scale`'s layers, after `Clip` when the config clips (the graph's clip_by_value)."""
        clip = plan.options.get("clip")
        if clip is None and CLIP_OPS & graph.op_types:
            return not_built_by(self.name)
        reason = self.native_scale(plan, graph)
        if reason is None and clip is not None:
            plan.layers = [clip_layers.Clip(*clip, name=f"{plan.layer_name}_clip"), *plan.layers]
            plan.probe = {**plan.probe, "points": [*plan.probe.get("points", []), *clip]}
        return reason

    def native_scale(self, plan, graph) -> str | None:
        """Sets `plan.layers` for `scale` on float32 values (read from the graph), or returns why not."""
        return self.native_reason
