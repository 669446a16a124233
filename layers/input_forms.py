"""The forms a user may pass the same raw rows in: what `check_preprocessor` feeds the native layers.

A serving request parses into sparse optional features (`raw_feature_batch`); a user calling the preprocessor
passes dense NumPy arrays or pandas columns, where a missing value is an item of its own (NaN, ``""``, an NA
token), tensors, or ragged lists. The native layers must give the graph's values for each form.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import tensorflow as tf

SPARSE = "sparse tensors"
RAGGED = "ragged tensors"
NUMPY = "dense NumPy arrays"
PANDAS = "pandas columns"
TENSORS = "dense tensors"


def input_forms(rows: list, raw_spec: dict, parsed: dict) -> dict[str, dict]:
    """{form: the rows as a preprocessor's input in that form}. `parsed` is the rows as a serving request parses
    them (`raw_feature_batch`). An optional feature becomes dense where each row holds at most one value and a
    missing one can be written as an item: NaN for floats, ``""`` for text (an int has no such item: it stays
    sparse); a list stays sparse (ragged in the ragged form)."""
    ragged = {name: tf.RaggedTensor.from_sparse(value) if isinstance(value, tf.SparseTensor) else value
              for name, value in parsed.items()}
    dense = {name: _dense(name, spec, rows, parsed[name]) for name, spec in raw_spec.items()}
    as_text = {name: [item.decode() if isinstance(item, bytes) else item for item in value]
               if isinstance(value, np.ndarray) and value.dtype == object else value for name, value in dense.items()}
    return {
        SPARSE: parsed,
        RAGGED: ragged,
        NUMPY: dense,
        # a pandas column holds one item a row: a fixed shape's (batch, *shape) array is passed as it is
        PANDAS: {name: pd.Series(value) if isinstance(value, list) or getattr(value, "ndim", 0) == 1 else value
                 for name, value in as_text.items()},
        TENSORS: {name: tf.constant(value) if isinstance(value, np.ndarray) else value
                  for name, value in dense.items()},
    }


def _dense(name: str, spec, rows: list, parsed):
    """One item per row, a missing value written as one, or `parsed` as it is where that cannot be."""
    if not isinstance(spec, tf.io.VarLenFeature):
        return parsed
    values = [row.get(name) for row in rows]
    if any(isinstance(value, (list, tuple)) for value in values):
        return parsed
    if spec.dtype == tf.string:
        return np.array([b"" if value is None else value for value in values], dtype=object)
    if spec.dtype.is_floating:
        return np.array([np.nan if value is None else value for value in values], dtype=spec.dtype.as_numpy_dtype)
    if any(value is None for value in values):
        return parsed
    return np.array(values, dtype=spec.dtype.as_numpy_dtype)
