"""The value rules in the graph: which raw values are missing and which are refused, as the batch job decides.

The batch job judges rows before the graph sees them (`schemas/row_checks.py`); serving hands the graph raw
tf.train.Examples nobody checked. The job's `preprocessing_fn` therefore starts every raw feature with
`checked_raw_value`, so that `serving_default`, `predict_raw`, `transform_features` and the `TransformLayer`
follow the same rules (docs/values.md):

- text that is missing in the job (empty, or an NA token of ``input.na_values``) is taken out of an
  optional feature or a list (whose other values close up), which the graph then fills or leaves out as it
  does an absent value; in a required feature it fails the request with an InvalidArgumentError naming the feature;
- a float NaN in a required feature, and ±inf anywhere unless ``input.nonfinite: missing``, fail the
  request likewise (NaN in an optional feature is filled by `pipelines.analyze.missing.fill_missing`).

In the batch job none of these fire: such rows are quarantined, or their values are already missing.
TensorFlow is imported here at module level: only the graph's builders and the Keras layers import this
module, never the CLI's start-up.
"""

from __future__ import annotations

import tensorflow as tf

# The name of the constant holding a feature's NA tokens in the graph, which the native Keras layers read back
TOKENS_NAME = "skewless_missing_tokens"
# The name scope of a list's closing up (`_without_holes`): the native layers' check of a graph's ops leaves its
# ops out (PresentValues closes a list up by building its rows)
CLOSE_UP_SCOPE = "skewless_close_up"


def is_missing_text(values: tf.Tensor, tokens) -> tf.Tensor:
    """Which string values are missing: empty, or one of `tokens` once surrounding whitespace is stripped
    (`schemas.row_checks.missing_text` in the job)."""
    missing = tf.equal(values, b"")
    if tokens:
        tokens = tf.constant(sorted(tokens), tf.string, name=TOKENS_NAME)
        stripped = tf.strings.strip(values)
        missing = tf.logical_or(missing, tf.reduce_any(tf.equal(tf.expand_dims(stripped, -1), tokens), axis=-1))
    return missing


def checked_raw_value(value, name: str, nonfinite: str, tokens=frozenset(), is_list: bool = False):
    """A raw feature (dense: required; sparse: optional, or a list when `is_list`) with the job's value rules
    applied; a list also loses its float items that are missing (NaN, and ±inf with `nonfinite` "missing")."""
    if isinstance(value, tf.RaggedTensor):  # a feature list: missing items leave its steps, as in the job
        values = value.flat_values
        if values.dtype == tf.string:
            present = tf.logical_not(is_missing_text(values, tokens))
        elif values.dtype.is_floating:
            if nonfinite != "missing":
                value = value.with_flat_values(_refuse_infinite(values, name))
            present = is_value(values, nonfinite)
        else:
            return value
        return tf.ragged.boolean_mask(value, value.with_flat_values(present))
    sparse = isinstance(value, tf.SparseTensor)
    values = value.values if sparse else value
    if values.dtype == tf.string:
        missing = is_missing_text(values, tokens)
        if sparse:
            kept = tf.sparse.retain(value, tf.logical_not(missing))
            return _without_holes(kept) if is_list else kept
        check = tf.debugging.Assert(tf.logical_not(tf.reduce_any(missing)),
                                    [f"raw feature {name!r}: a required value is missing (empty or an NA token)"])
        with tf.control_dependencies([check]):
            return tf.identity(value)
    if not values.dtype.is_floating:
        return value
    if not sparse:
        return tf.debugging.check_numerics(
            value, f"raw feature {name!r}: a required value is missing (NaN) or not finite")
    if is_list:
        present = is_value(values, nonfinite)
        if nonfinite != "missing":
            values = _refuse_infinite(values, name)
        return _without_holes(tf.sparse.retain(tf.SparseTensor(value.indices, values, value.dense_shape), present))
    if nonfinite == "missing":
        return value
    return tf.SparseTensor(value.indices, _refuse_infinite(values, name), value.dense_shape)


def refuse_outside_domain(value, name: str, low=None, high=None, allowed=None):
    """`value` (dense, sparse or ragged) as it is, failing the request with an InvalidArgumentError naming the
    feature when a value lies below `low`, above `high` or is not one of the strings `allowed`: the job quarantines
    such rows (a schema's int, float or string domain; `log`'s values at or below -1). NaN is judged apart."""
    values = value.flat_values if isinstance(value, tf.RaggedTensor) else (
        value.values if isinstance(value, tf.SparseTensor) else value)
    outside = tf.zeros_like(values, tf.bool)
    bounds = []
    if values.dtype == tf.string:
        if allowed is not None:
            listed = tf.constant(sorted(allowed), tf.string)
            outside = tf.logical_not(tf.reduce_any(tf.equal(tf.expand_dims(values, -1), listed), axis=-1))
            bounds.append(f"one of {len(allowed)} values")
    else:
        # compared in float64: a float column's domain bound is a float64, its values float32, as the job compares
        exact = tf.cast(values, tf.float64) if values.dtype.is_floating else values
        if low is not None:
            outside = tf.logical_or(outside, exact < tf.constant(low, exact.dtype))
            bounds.append(f"at least {low}")
        if high is not None:
            outside = tf.logical_or(outside, exact > tf.constant(high, exact.dtype))
            bounds.append(f"at most {high}")
    if not bounds:
        return value
    return refuse_where(value, outside, f"raw feature {name!r}: a value is outside its domain "
                                        f"({' and '.join(bounds)}), which the job quarantines; got")


def refuse_where(value, refused: tf.Tensor, message: str, raw=None):
    """`value` as it is, once an assertion that no flat value is `refused` holds; else the request fails with
    an InvalidArgumentError of `message` and the first refused values (of `raw`, the values `value` was computed
    from, when given). The assertion is a control dependency, so the native layers' reading of the graph's ops
    (graph_analyzers) does not see it as the transform's."""
    values = value.flat_values if isinstance(value, tf.RaggedTensor) else (
        value.values if isinstance(value, tf.SparseTensor) else value)
    shown = tf.boolean_mask(tf.reshape(values if raw is None else raw, [-1]), tf.reshape(refused, [-1]))[:3]
    check = tf.debugging.Assert(tf.logical_not(tf.reduce_any(refused)), [message, shown])
    with tf.control_dependencies([check]):
        checked = tf.identity(values)
    if isinstance(value, tf.RaggedTensor):
        return value.with_flat_values(checked)
    if isinstance(value, tf.SparseTensor):
        return tf.SparseTensor(value.indices, checked, value.dense_shape)
    return checked


def _without_holes(lists: tf.SparseTensor) -> tf.SparseTensor:
    """A list column's values after tf.sparse.retain, renumbered 0.. within each row: retain keeps the positions,
    so a missing item before a value left a hole that densifying filled with a made-up value (and that
    RaggedTensor.from_sparse refuses), where the job's reader drops the item."""
    with tf.name_scope(CLOSE_UP_SCOPE):
        rows = tf.RaggedTensor.from_value_rowids(lists.values, lists.indices[:, 0], nrows=lists.dense_shape[0])
        return tf.SparseTensor(rows.to_sparse().indices, lists.values, lists.dense_shape)


def is_value(values: tf.Tensor, nonfinite: str) -> tf.Tensor:
    """Which floats are values: not NaN, and finite too when ±inf are missing values (`nonfinite` "missing")."""
    return tf.math.is_finite(values) if nonfinite == "missing" else tf.logical_not(tf.math.is_nan(values))


def is_present(values: tf.Tensor, nonfinite: str, tokens=frozenset()) -> tf.Tensor:
    """Which values of any type are values: text not missing (`is_missing_text`), floats `is_value`, the rest all."""
    if values.dtype == tf.string:
        return tf.logical_not(is_missing_text(values, tokens))
    if values.dtype.is_floating:
        return is_value(values, nonfinite)
    return tf.ones_like(values, tf.bool)


def _refuse_infinite(values: tf.Tensor, name: str) -> tf.Tensor:
    """`values` as they are, failing on ±inf as the job quarantines them (NaN is a missing value, left to the
    caller)."""
    nan = tf.math.is_nan(values)
    checked = tf.debugging.check_numerics(tf.where(nan, tf.zeros_like(values), values),
                                          f"raw feature {name!r}: a value is not finite")
    return tf.where(nan, values, checked)
