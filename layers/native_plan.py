"""Per transformed feature: the built-in Keras layers that compute exactly what the graph computes.

Each declarative transform of the run's config is matched against the op pattern tf.Transform
emits for it, and the Keras layers are initialized with the constants read from the graph
(`graph_analyzers`). Where Keras cannot reproduce tf.Transform bit for bit the feature gets a reason
instead of layers:

- ``z_score`` and ``scale_0_1``: `Standardize` computes ``(x - mean) / std`` and
  ``(x - min) / (max - min)`` with the graph's float32 rounding on every backend (Keras'
  ``Normalization`` does not: XLA turns its division into a multiplication by a reciprocal, and it
  divides by ``max(std, epsilon)``). A deviation of 0 leaves ``x - mean`` as tf.Transform does. A
  constant feature (``min >= max``) goes through a sigmoid in ``scale_to_0_1``, whose rounding
  differs between backends: not supported.
- ``bucketize``: ``Discretization(bin_boundaries)`` counts the boundaries ``<= x`` as tf.Transform's
  ``UpperBound`` does (then `Cast` to int64, its dtype).
- ``vocabulary``: ``StringLookup`` / ``IntegerLookup`` (OOV values hashed by FarmHash64 as
  tf.Transform does) then `VocabularyFirst` (tf.Transform's index order). A vocabulary of float
  values is not supported (tf.Transform looks up their ``as_string`` text).
- ``hash``: ``Hashing(num_bins)`` hashes strings, and integers' decimal text, with FarmHash64 as
  ``tft.hash_strings`` does; floats are not supported (Keras truncates them to integers first).
- ``passthrough``: the raw value.

Optional features start with `FillMissing` holding the graph's default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import keras
import numpy as np
import tensorflow as tf

from skewless.layers.cast import Cast
from skewless.layers.fill_missing import FillMissing
from skewless.layers.graph_analyzers import GraphFeature
from skewless.layers.standardize import Standardize
from skewless.layers.vocabulary_first import VocabularyFirst
from skewless.safe_names import keras_layer_name


# The ops tf.Transform 1.21 emits for each declarative transform (after the raw input's densifying);
# a graph with any other op upstream of a feature computes something else (a preprocessing_fn).
INPUT_OPS = {"Placeholder", "Identity", "Const", "Cast", "NoOp", "SparseToDense", "Squeeze", "StridedSlice", "Pack",
             # a float NaN (±inf with input.nonfinite: missing) takes the default: pipelines/missing.py
             "IsNan", "IsFinite", "LogicalNot", "SelectV2"}
TRANSFORM_OPS = {
    "z_score": {"Sub", "Sqrt", "NotEqual", "ZerosLike", "AddV2", "RealDiv", "SelectV2"},
    "scale_0_1": {"Sub", "ZerosLike", "Less", "AddV2", "RealDiv", "Sigmoid", "SelectV2", "Mul"},
    "bucketize": {"Reshape", "Shape", "UpperBound"},
    "vocabulary": {"AsString", "LookupTableFindV2", "LookupTableSizeV2", "NotEqual", "StringToHashBucketFast", "AddV2",
                   "SelectV2"},
    "hash": {"AsString", "StringToHashBucketFast"},
    "passthrough": set(),
}


@dataclass
class FeaturePlan:
    """One transformed feature: its Keras layers, or the reason it has none.

    `probe` holds the analyzer outputs the equivalence check draws test values from: ``points``
    (numbers where the transform changes: mean, min/max, bucket boundaries), ``scale`` (their spread)
    and ``tokens`` (vocabulary entries).
    """

    name: str
    transform: str
    raw_dtype: tf.DType
    optional: bool
    dtype: str
    layers: list | None = None
    reason: str | None = None
    probe: dict = field(default_factory=dict)

    @property
    def layer_name(self) -> str:
        """The prefix of this feature's layer names: Keras refuses some characters a feature name may hold."""
        return keras_layer_name(self.name)


def plan_feature(name: str, transform: str, graph: GraphFeature, raw_spec) -> FeaturePlan:
    """The layers for one declared feature (`transform` from the config), checked against the graph."""
    raw_dtype = raw_spec.dtype
    optional = isinstance(raw_spec, tf.io.VarLenFeature)
    plan = FeaturePlan(name, transform, raw_dtype, optional, graph.dtype)
    if graph.raw_inputs != {name}:
        return _refuse(plan, f"the graph computes it from {sorted(graph.raw_inputs)}, not from {name!r} alone")
    builder = _BUILDERS.get(transform)
    if builder is None:
        return _refuse(plan, f"transform {transform} has no exact Keras equivalent in skewless yet")
    foreign = graph.op_types - INPUT_OPS - TRANSFORM_OPS[transform]
    if foreign:
        applied = ", ".join(sorted(foreign))
        return _refuse(plan, f"the graph applies {applied}, which tf.Transform's {transform} does not")
    prefix = []
    if optional:
        if len(graph.defaults) != 1:
            return _refuse(plan, "the graph does not fill its missing values with one default")
        default = graph.defaults[0]
        if default is None:
            return _refuse(plan, "the graph computes the fill value of its missing values (not a constant default)")
        nonfinite = "missing" if "IsFinite" in graph.op_types else "quarantine"
        prefix = [FillMissing(default.decode("utf-8") if isinstance(default, bytes) else default, nonfinite,
                              name=f"{keras_layer_name(name)}_fill_missing")]
    reason = builder(plan, graph)
    if reason is not None:
        return _refuse(plan, reason)
    plan.layers = prefix + plan.layers
    return plan


def refused(name: str, transform: str, graph: GraphFeature, raw_spec, reason: str) -> FeaturePlan:
    """A feature with no Keras layers, for `reason`."""
    raw_dtype = raw_spec.dtype if raw_spec is not None else None
    optional = isinstance(raw_spec, tf.io.VarLenFeature)
    return _refuse(FeaturePlan(name, transform, raw_dtype, optional, graph.dtype), reason)


def _refuse(plan: FeaturePlan, reason: str) -> FeaturePlan:
    plan.layers, plan.reason = None, reason
    return plan


def _not_built_by(transform: str) -> str:
    return f"the graph does not compute it as tf.Transform's {transform} does (changed by a preprocessing_fn?)"


def _z_score(plan: FeaturePlan, graph: GraphFeature) -> str | None:
    mean, variance = graph.constant("Sub", 1), graph.constant("Sqrt", 0)
    if mean is None or variance is None or not {"RealDiv", "SelectV2"} <= graph.op_types:
        return _not_built_by("scale_to_z_score")
    mean, deviation = np.float32(mean), np.sqrt(np.float32(variance))
    if not (np.isfinite(mean) and np.isfinite(deviation)):
        return f"its mean ({mean}) or standard deviation ({deviation}) is not finite"
    # A deviation of 0 leaves x - mean undivided in tf.Transform; dividing by 1 is the same.
    scale = deviation if deviation != 0 else np.float32(1)
    plan.layers = [Standardize(mean, scale, name=f"{plan.layer_name}_z_score")]
    plan.probe = {"points": [float(mean)], "scale": float(scale)}
    return None


def _scale_0_1(plan: FeaturePlan, graph: GraphFeature) -> str | None:
    negated_min, maximum = graph.constant("Sub", 1), graph.constant("Less", 1)
    if negated_min is None or maximum is None or "Sigmoid" not in graph.op_types:
        return _not_built_by("scale_to_0_1")
    # The graph's own float32 steps: min = 0 - (-min), range = max - min.
    minimum = np.float32(0) - np.float32(negated_min)
    maximum = np.float32(maximum)
    if not (np.isfinite(minimum) and np.isfinite(maximum)):
        return f"its min ({minimum}) or max ({maximum}) is not finite"
    if not minimum < maximum:
        return (f"min {minimum} >= max {maximum}: tf.Transform then maps values through a sigmoid, "
                "whose float rounding differs between backends")
    span = maximum - minimum
    if not np.isfinite(span):
        return f"its range max - min overflows float32 ({maximum} - {minimum})"
    plan.layers = [Standardize(minimum, span, positive_zero=True, name=f"{plan.layer_name}_scale_0_1")]
    plan.probe = {"points": [float(minimum), float(maximum)], "scale": float(span)}
    return None


def _bucketize(plan: FeaturePlan, graph: GraphFeature) -> str | None:
    boundaries = graph.constant("Reshape", 0)
    if boundaries is None or "UpperBound" not in graph.op_types or boundaries.dtype != np.float32:
        return _not_built_by("bucketize")
    boundaries = [float(value) for value in np.asarray(boundaries).reshape(-1)]
    if boundaries != sorted(boundaries) or not all(np.isfinite(boundaries)):
        return f"its bucket boundaries {boundaries} are not finite and sorted"
    plan.layers = [
        keras.layers.Discretization(bin_boundaries=boundaries, output_mode="int",
                                    name=f"{plan.layer_name}_discretization"),
        # Discretization's indices are int32; tf.Transform's are int64.
        Cast("int64", name=f"{plan.layer_name}_int64"),
    ]
    spread = (boundaries[-1] - boundaries[0]) if len(boundaries) > 1 else 1.0
    plan.probe = {"points": boundaries, "scale": spread or 1.0}
    return None


def _vocabulary(plan: FeaturePlan, graph: GraphFeature) -> str | None:
    if len(graph.tables) != 1:
        return _not_built_by("compute_and_apply_vocabulary")
    keys, ids = graph.tables[0]
    if not np.array_equal(ids, np.arange(len(keys))):
        return "its lookup table does not number the vocabulary 0..n-1"
    if len(graph.hash_buckets) > 1:
        return _not_built_by("compute_and_apply_vocabulary")
    num_oov = graph.hash_buckets[0] if graph.hash_buckets else 0
    lookup_oov = max(num_oov, 1)
    if plan.raw_dtype == tf.string:
        try:
            vocabulary = [key.decode("utf-8") for key in keys]
        except UnicodeDecodeError:
            return "its vocabulary has entries that are not UTF-8 (Keras StringLookup stores text)"
        lookup = keras.layers.StringLookup(
            vocabulary=vocabulary, num_oov_indices=lookup_oov, oov_token=_unused_token(vocabulary, "[UNK]"),
            output_mode="int", name=f"{plan.layer_name}_lookup")
    elif plan.raw_dtype.is_integer:
        try:
            vocabulary = [int(key) for key in keys]
        except ValueError:
            return "its vocabulary of an integer feature has entries that are not integers"
        lookup = keras.layers.IntegerLookup(
            vocabulary=vocabulary, num_oov_indices=lookup_oov, oov_token=_unused_token(vocabulary, -1),
            oov_method="farmhash", output_mode="int", name=f"{plan.layer_name}_lookup")
    else:
        return "a vocabulary of float values: tf.Transform looks up their as_string text, which no Keras lookup does"
    plan.layers = [lookup, VocabularyFirst(len(vocabulary), num_oov, name=f"{plan.layer_name}_vocabulary_first")]
    plan.probe = {"tokens": vocabulary}
    return None


def _hash(plan: FeaturePlan, graph: GraphFeature) -> str | None:
    if len(graph.hash_buckets) != 1:
        return _not_built_by("hash_strings")
    if plan.raw_dtype.is_floating:
        return "hashing float values: Keras Hashing truncates them to integers, tf.Transform hashes their text"
    plan.layers = [keras.layers.Hashing(num_bins=graph.hash_buckets[0], name=f"{plan.layer_name}_hashing")]
    return None


def _passthrough(plan: FeaturePlan, graph: GraphFeature) -> str | None:
    plan.layers = []
    plan.probe = {"points": [0.0], "scale": 1.0}
    return None


def _unused_token(vocabulary: list, preferred):
    """An OOV token Keras will not mistake for the vocabulary's own first entries.

    Keras drops leading vocabulary entries equal to its OOV token (it takes them for its own).
    """
    token = preferred
    while token in vocabulary[:1]:
        token = token + "_" if isinstance(token, str) else token - 1
    return token


_BUILDERS = {
    "z_score": _z_score,
    "scale_0_1": _scale_0_1,
    "bucketize": _bucketize,
    "vocabulary": _vocabulary,
    "hash": _hash,
    "passthrough": _passthrough,
}
