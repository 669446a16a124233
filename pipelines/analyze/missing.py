"""Missing values inside the graph: a fixed `default`, or a `fill` computed by tf.Transform analyzers.

An optional raw column arrives as a SparseTensor of shape (batch, 1) holding 0 or 1 value per row
(a `VarLenFeature`). These functions give it one value per row, in the graph, so that serving fills
a missing value exactly as the batch job did:

- ``default: v``: v;
- ``fill: mean``: `tft.mean` of the present values;
- ``fill: median``: the middle boundary of `tft.quantiles` (2 buckets, ``MEDIAN_EPSILON``: within
  0.1% of rank of the exact median);
- ``fill: most_frequent``: the top entry of a tf.Transform vocabulary (``top_k=1``, pipelines/analyze/vocabularies.py;
  ties go to the larger value in byte order, as `tft.vocabulary` sorts); numbers are counted by their exact bits.

Mean and median of an int column are floats, so such a column continues as float32.

A float NaN is a missing value here too (serving gets tf.Examples the job never checked), and so are
±inf with ``input.nonfinite: missing``: the batch job has already taken them out of its rows
(schemas/row_checks.py), so both paths fill the same rows.
"""

from __future__ import annotations

import tensorflow as tf
import tensorflow_transform as tft
from tensorflow_transform import analyzers as tft_analyzers

from skewless.pipelines.analyze.distinct_limits import DistinctLimit
from skewless.pipelines.analyze.vocabularies import VocabularySpec, shared_vocabularies
from skewless.pipelines.reading.columns import RawColumn
from skewless.safe_names import most_frequent_filename
from skewless.value_rules import is_value

MEDIAN_EPSILON = 0.001
_ZERO = {"int": 0, "float": 0.0, "bytes": ""}


def fill_missing(value, column: RawColumn, options: dict, nonfinite: str = "quarantine",
                 limit: DistinctLimit | None = None):
    """A raw feature as a dense (batch,) tensor; a list column stays sparse (it may hold any count of values).

    `nonfinite` is the job's ``input.nonfinite``: with "missing", ±inf are filled as NaN is. `limit`: the most
    distinct values a `most_frequent` fill may count (analysis.max_vocabulary).
    """
    if not isinstance(value, tf.SparseTensor) or options.get("is_list"):
        return value
    fill = options.get("fill")
    if fill in ("mean", "median"):
        value = tf.SparseTensor(value.indices, tf.cast(value.values, tf.float32), value.dense_shape)
        if fill == "mean":
            fill_value = tft.mean(value)
        else:
            boundaries = tft.quantiles(value.values, num_buckets=2, epsilon=MEDIAN_EPSILON)
            fill_value = tf.reshape(boundaries, [-1])[0]
    elif fill == "most_frequent":
        fill_value = _most_frequent(tf, tft, value, column, limit)
    else:
        default = options.get("default")
        fill_value = _ZERO[column.kind] if default is None else default
        if column.kind == "bytes":
            fill_value = str(fill_value).encode()
    dense = tf.squeeze(tft.sparse_tensor_to_dense_with_shape(value, [None, 1], default_value=fill_value), axis=1)
    if not dense.dtype.is_floating:
        return dense
    return tf.where(is_value(dense, nonfinite), dense, tf.cast(fill_value, dense.dtype))


def missing_indicator(value, nonfinite: str = "quarantine"):
    """1 where the row of an optional (sparse) raw feature has no value (or NaN), else 0 (int64, shape (batch,))."""
    present = tf.ones_like(value.indices[:, 0])
    if value.values.dtype.is_floating:
        present = tf.cast(is_value(value.values, nonfinite), tf.int64)
    present = tf.SparseTensor(value.indices, present, value.dense_shape)
    dense = tft.sparse_tensor_to_dense_with_shape(present, [None, 1], default_value=0)
    return 1 - tf.squeeze(dense, axis=1)


def _most_frequent(tf, tft, value, column: RawColumn, limit: DistinctLimit | None):
    """The most frequent present value, read from a top_k=1 vocabulary asset (its first line)."""
    values = value.values
    if column.kind == "float":
        keys = tf.strings.as_string(tf.bitcast(values, tf.int32))  # exact: the bits, not a rounded decimal
    elif column.kind == "int":
        keys = tf.strings.as_string(values)
    else:
        keys = values
    name = most_frequent_filename(column.name)
    path = shared_vocabularies({name: keys}, [VocabularySpec(name, top_k=1, limit=limit)])[name]
    token = tf.strings.split(tf.io.read_file(path), "\n", maxsplit=1)[0]
    # no value at all in the data: tf.Transform writes an empty vocabulary as one dummy token of its own, and
    # the fill is then "" or 0, as for a column without `fill`
    _, dummy = tft_analyzers.get_empy_vocabulary_dummy_value(tf.string)
    empty = tf.logical_or(tf.equal(token, dummy), tf.equal(tf.strings.length(token), 0))
    if column.kind == "bytes":
        return tf.where(empty, "", token)
    token = tf.where(empty, "0", token)
    if column.kind == "int":
        return tf.strings.to_number(token, tf.int64)
    return tf.bitcast(tf.strings.to_number(token, tf.int32), tf.float32)
