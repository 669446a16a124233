"""The record the serving export appends to every request, so that the request is never empty.

`padding_rows` builds the record when the model is exported, a constant of the graph: each required feature's
median or most frequent value in the run's statistics (optional features left out), or else zeros; the export
keeps the first that its own serving function accepts (the graph refuses what the job quarantines: a padding
record it refused would fail every request). `serving_default` appends it to every request and drops that row's
outputs (`[:-1]`, constant bounds). A request is then never empty, so the parse needs no defaults computed for an
empty one: fewer nodes per call (docs/performance.md, "a padding record instead of the request's first row").

There is no padding record where a row's values could change the shape of another's outputs: a transformed
feature of variable length (a list, text tokens, a feature list) is padded to the longest in the batch, which a
constant record could lengthen. There the request is parsed as it is. Either way each row's outputs are its own:
the graph computes row by row, and the model is called on batches of one size (`layers/fixed_size_calls.py`).
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np
import tensorflow as tf

from skewless.sequence_specs import split_raw_spec
from skewless.statistics_files import feature_name


# Every request parses and transforms the padding record: a most frequent value longer than this (an image, a
# document) would cost each call more than the padding saves, so its feature takes the zero instead.
MAX_TEXT_BYTES = 64
INT64_LIMIT = 2.0**62  # a median past it is no padding value of an int64 feature (rounding could overflow)


def padding_rows(serving_spec: Mapping, transformed_spec: Mapping, statistics) -> list[dict]:
    """Raw rows to try as the padding record, best first; none where the request must be parsed as it is (see
    the module docstring). The export keeps the first its serving function accepts.

    `serving_spec` is the raw spec the export parses (no label); `transformed_spec` the transformed features it
    can serve; `statistics` the run's DatasetFeatureStatistics of a split, or None. A row holds the required
    features only: an optional one is left out, as missing.
    """
    if split_raw_spec(dict(serving_spec))[1]:
        return []  # feature lists: ragged outputs, and a SequenceExample record
    if not all(isinstance(spec, tf.io.FixedLenFeature) for spec in transformed_spec.values()):
        return []
    required = {name: spec for name, spec in serving_spec.items()
                if isinstance(spec, tf.io.FixedLenFeature) and spec.default_value is None}
    rows = [_filled(_typical_values(required, statistics), required), _filled(_zeros(required), required)]
    return [row for index, row in enumerate(rows) if row not in rows[:index]]


def _typical_values(required: Mapping, statistics) -> dict:
    """Each required feature's median (numbers: finite, an int's within int64) or most frequent value (text, up to
    MAX_TEXT_BYTES) in `statistics`, zero where the statistics have none of its kind."""
    found = {}
    for feature in statistics.features if statistics is not None else ():
        name = feature_name(feature)
        spec = required.get(name)
        if spec is None:
            continue
        kind = feature.WhichOneof("stats")
        if kind == "num_stats" and spec.dtype != tf.string:
            median = feature.num_stats.median
            if math.isfinite(median) and (spec.dtype.is_floating or abs(median) < INT64_LIMIT):
                found[name] = median
        elif kind == "string_stats" and spec.dtype == tf.string and feature.string_stats.top_values:
            value = feature.string_stats.top_values[0].value
            if len(value.encode()) <= MAX_TEXT_BYTES:
                found[name] = value
    return {**_zeros(required), **found}


def _zeros(required: Mapping) -> dict:
    # text "0" rather than "": the graph refuses empty text in a required feature
    return {name: "0" if spec.dtype == tf.string else 0 for name, spec in required.items()}


def _filled(values: Mapping, required: Mapping) -> dict:
    """Each value as its feature's dtype (an int rounded), repeated over a feature of fixed shape."""
    row = {}
    for name, spec in required.items():
        value = values[name]
        if spec.dtype.is_integer:
            value = int(round(float(value)))
        elif spec.dtype.is_floating:
            value = float(value)
        row[name] = [value] * int(np.prod(spec.shape)) if list(spec.shape) else value
    return row


def padded_with_record(predict, examples, record: bytes):
    """`predict(examples)` computed with `record` appended, that row's outputs dropped."""
    more = tf.concat([examples, tf.constant([record])], axis=0)
    return tf.nest.map_structure(lambda values: values[:-1], predict(more))
