"""Per transformed feature: the Keras layers that compute exactly what the graph computes.

Each declarative transform of the run's config is matched against the op pattern tf.Transform emits
for it (its `native_ops` in the registry, skewless/transforms/), and its `native` builder initializes
Keras layers with the constants read from the graph (`graph_analyzers`). Where Keras cannot reproduce
tf.Transform bit for bit the feature gets a reason instead of layers (each builder says when).

Optional features start with `FillMissing` holding the graph's fill value (a `default`, or the one its
analyzers computed for `fill: mean | median | most_frequent`), list columns with `PresentValues`; a missing
indicator is `MissingIndicator`; a cross reads its columns, each filled as its own feature fills it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import tensorflow as tf

from skewless.layers.fill_missing import FillMissing
from skewless.layers.graph_analyzers import GraphFeature
from skewless.layers.missing_indicator import MissingIndicator
from skewless.layers.present_values import PresentValues
from skewless.safe_names import keras_layer_name
from skewless.transforms import TRANSFORMS
from skewless.transforms.base import not_built_by


# The ops tf.Transform 1.21 emits for a raw input's densifying and filling (each transform's own: its
# `native_ops`); a graph with any other op upstream of a feature computes something else (a preprocessing_fn).
INPUT_OPS = {"Placeholder", "Identity", "Const", "Cast", "NoOp", "SparseToDense", "Squeeze", "StridedSlice", "Pack",
             # a float NaN (±inf with input.nonfinite: missing) takes the default: pipelines/analyze/missing.py
             "IsNan", "IsFinite", "LogicalNot", "SelectV2",
             # the job's value rules (skewless/value_rules.py): a NaN or ±inf refused, empty text and NA tokens
             # taken out of an optional string feature (tf.sparse.retain)
             "CheckNumerics", "ZerosLike", "StringStrip", "Equal", "ExpandDims", "Any", "LogicalOr", "Where",
             "Reshape", "GatherV2"}

@dataclass
class FeaturePlan:
    """One transformed feature: its Keras layers, or the reason it has none.

    `probe` holds the analyzer outputs the equivalence check draws test values from: ``points``
    (numbers where the transform changes: mean, min/max, bucket boundaries), ``scale`` (their spread),
    ``tokens`` (vocabulary entries) and ``above`` (a bound the raw values must lie above: the graph refuses the
    others, as the job quarantines them; `log`'s -1).
    """

    name: str
    transform: str
    raw_dtype: tf.DType
    optional: bool
    dtype: str
    layers: list | None = None
    reason: str | None = None
    probe: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)  # the feature's config options by field name, defaults included
    inputs: list[str] | None = None  # the raw features it reads when not its own (a cross's columns)
    input_layers: dict = field(default_factory=dict)  # {raw feature: layers} applied to each of `inputs` first

    @property
    def layer_name(self) -> str:
        """The prefix of this feature's layer names: Keras refuses some characters a feature name may hold."""
        return keras_layer_name(self.name)


def plan_feature(name: str, transform: str, graph: GraphFeature, raw_spec,
                 options: dict | None = None) -> FeaturePlan:
    """The layers for one declared feature (`transform` from the config, `options` its options by field
    name), checked against the graph."""
    raw_dtype = raw_spec.dtype if raw_spec is not None else None  # None: a new output (a cross)
    optional = isinstance(raw_spec, tf.io.VarLenFeature)
    plan = FeaturePlan(name, transform, raw_dtype, optional, graph.dtype, options=dict(options or {}))
    kind = TRANSFORMS[transform]
    if kind.native_ops is None:  # whatever the graph holds, the transform itself is the reason
        return _refuse(plan, kind.native_reason or f"transform {transform} has no exact Keras equivalent in skewless yet")
    column = plan.options.get("column") or name  # the raw column it transforms (`column:`, else its own)
    expected = {column} if not kind.new_output else set(kind.reads(SimpleNamespace(**plan.options)))
    if graph.raw_inputs != expected:
        return _refuse(plan, f"the graph computes it from {sorted(graph.raw_inputs)}, not from {column!r} alone")
    if column != name:
        plan.inputs = [column]
    foreign = graph.op_types - INPUT_OPS - kind.native_ops
    if foreign:
        applied = ", ".join(sorted(foreign))
        return _refuse(plan, f"the graph applies {applied}, which tf.Transform's {transform} does not")
    prefix = []
    if plan.options.get("is_list"):
        # a list is not filled: the graph takes its missing items out, and an absent list is an empty one
        if graph.defaults:
            return _refuse(plan, "the graph fills the list's missing values, which tf.Transform's lists never do")
        prefix = [PresentValues(_nonfinite(graph), graph.missing_tokens, name=f"{plan.layer_name}_present_values")]
    elif optional:
        if len(graph.defaults) != 1:
            return _refuse(plan, "the graph does not fill its missing values with one default")
        fill, reason = fill_missing_layer(name, graph, graph.defaults[0], graph.fill_dtypes[0], raw_dtype)
        if reason is not None:
            return _refuse(plan, reason)
        prefix = [fill]
    reason = kind.native(plan, graph)
    if reason is not None:
        return _refuse(plan, reason)
    plan.layers = prefix + plan.layers
    return plan


def fill_missing_layer(name: str, graph: GraphFeature, default, fill_dtype: str, raw_dtype: tf.DType):
    """(`FillMissing` for raw feature `name` with the graph's fill value, None), or (None, why not)."""
    if default is None:
        return None, "the graph computes the fill value of its missing values from the row (not a constant)"
    cast_to = fill_dtype if fill_dtype != raw_dtype.name else None
    value = default.decode("utf-8") if isinstance(default, bytes) else default
    return FillMissing(value, _nonfinite(graph), missing_tokens=graph.missing_tokens, cast_to=cast_to,
                       name=f"{keras_layer_name(name)}_fill_missing"), None


def plan_missing_indicator(name: str, source: str, graph: GraphFeature, raw_spec) -> FeaturePlan:
    """`MissingIndicator` for `name`, the indicator the config's ``missing_indicator: true`` adds to `source`."""
    plan = FeaturePlan(name, "missing_indicator", raw_spec.dtype, True, graph.dtype, inputs=[source])
    if graph.raw_inputs != {source}:
        return _refuse(plan, f"the graph computes it from {sorted(graph.raw_inputs)}, not from {source!r} alone")
    foreign = graph.op_types - INPUT_OPS - {"OnesLike", "Sub"}
    if foreign or graph.defaults != [0] or graph.dtype != "int64":
        return _refuse(plan, not_built_by("missing indicator"))
    plan.layers = [MissingIndicator(_nonfinite(graph), graph.missing_tokens, name=f"{keras_layer_name(name)}_indicator")]
    return plan


def refused(name: str, transform: str, graph: GraphFeature, raw_spec, reason: str | None) -> FeaturePlan:
    """A feature with no Keras layers, for `reason`."""
    raw_dtype = raw_spec.dtype if raw_spec is not None else None
    optional = isinstance(raw_spec, tf.io.VarLenFeature)
    reason = reason or f"transform {transform} has no exact Keras equivalent in skewless yet"
    return _refuse(FeaturePlan(name, transform, raw_dtype, optional, graph.dtype), reason)


def _nonfinite(graph: GraphFeature) -> str:
    """The graph's ``input.nonfinite``: "missing" where it reads ±inf as missing values (its IsFinite op)."""
    return "missing" if "IsFinite" in graph.op_types else "quarantine"


def _refuse(plan: FeaturePlan, reason: str) -> FeaturePlan:
    plan.layers, plan.reason = None, reason
    return plan
