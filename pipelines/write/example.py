"""`output.format: example`: a shard's record is a tf.train.Example of the row's transformed features.

A feature list (the output of a `sequence: true` feature) is written as tf.Transform's transformed spec describes
it: all values of the row (``name$ragged_values``) and each step's length (``name$row_lengths_1``), which
`parse_example` with that spec reads back as the same ragged tensor.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import tensorflow as tf

from skewless.pipelines.write.example_encoder import Records, encode_examples
from skewless.pipelines.write.format import OutputFormat
from skewless.sequence_specs import is_transformed_feature_list


class ExampleFormat(OutputFormat):
    def encode(self, batch: pa.RecordBatch, transformed_spec: dict) -> Records:
        return encode_examples(feature_lists_as_example_features(batch, transformed_spec))

    def parser(self, run_dir: str, spec: dict):
        return lambda serialized: tf.io.parse_example(serialized, spec)


def feature_lists_as_example_features(batch: pa.RecordBatch, spec: dict) -> pa.RecordBatch:
    """Feature-list columns (list<list>) -> the two list columns of their tf.train.Example form in the
    transformed spec: all values of the row (``name$ragged_values``) and each step's length (``name$row_lengths_1``)."""
    arrays, names = [], []
    for name in batch.schema.names:
        column = batch.column(name)
        if not is_transformed_feature_list(spec[name]):
            arrays.append(column)
            names.append(name)
            continue
        outer = column.offsets.to_numpy().astype(np.int64)
        steps = column.values.slice(outer[0], outer[-1] - outer[0])
        inner = steps.offsets.to_numpy().astype(np.int64)
        values = steps.values.slice(inner[0], inner[-1] - inner[0])
        inner -= inner[0]
        arrays.append(pa.LargeListArray.from_arrays(pa.array(inner[outer - outer[0]]), values))
        arrays.append(pa.LargeListArray.from_arrays(pa.array(outer - outer[0]), pa.array(np.diff(inner))))
        names += [spec[name].value_key, spec[name].partitions[0].key]
    return pa.RecordBatch.from_arrays(arrays, names)


FORMAT = ExampleFormat()
