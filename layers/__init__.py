"""Keras 3 layers and export that reuse the tf.Transform graph; imports TensorFlow and Keras, never Apache Beam."""

from skewless.layers.export import (
    export_serving_model,
    read_spec_file,
    serialize_raw_examples,
    transform_raw_rows,
    transform_raw_rows_exported,
)
from skewless.layers.raw_inputs import raw_inputs
from skewless.layers.transform_layer import TransformLayer

__all__ = [
    "TransformLayer",
    "export_serving_model",
    "raw_inputs",
    "read_spec_file",
    "serialize_raw_examples",
    "transform_raw_rows",
    "transform_raw_rows_exported",
]
