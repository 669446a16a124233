"""Keras 3 layers and export that reuse the tf.Transform graph; imports TensorFlow and Keras, never Apache Beam."""

from skewless.runtime import import_tensorflow_quietly

# before the first `import tensorflow` below: the Python API prints no TensorFlow start-up lines, as the CLI
import_tensorflow_quietly()

from skewless.layers.cast import Cast
from skewless.layers.clip import Clip
from skewless.layers.export import (
    export_serving_model,
    parse_raw_examples,
    read_spec_file,
    serialize_raw_examples,
    transform_raw_rows,
    transform_raw_rows_dense,
    transform_raw_rows_exported,
)
from skewless.layers.feature_encoder import FeatureEncoder
from skewless.layers.fill_missing import FillMissing
from skewless.layers.log1p import Log1p
from skewless.layers.missing_indicator import MissingIndicator
from skewless.layers.keras_preprocessor import (
    NativeFeatureCheck,
    PreprocessorCheck,
    check_preprocessor,
    export_keras_preprocessor,
    keras_preprocessor,
    raw_feature_batch,
)
from skewless.layers.model_inputs import encoding_plan, model_inputs
from skewless.layers.native_preprocessor import NativePreprocessor
from skewless.layers.pad_or_truncate import PadOrTruncate
from skewless.layers.present_values import PresentValues
from skewless.layers.raw_feature_model import RawFeatureModel
from skewless.layers.raw_inputs import raw_inputs
from skewless.layers.standardize import Standardize
from skewless.layers.text_tokens import TextTokens
from skewless.layers.transform_layer import TransformLayer
from skewless.layers.vocabulary_first import VocabularyFirst, VocabularyFirstColumns
from skewless.safe_names import keras_layer_name, signature_argument_name

__all__ = [
    "Cast",
    "Clip",
    "FeatureEncoder",
    "FillMissing",
    "Log1p",
    "MissingIndicator",
    "NativeFeatureCheck",
    "NativePreprocessor",
    "PadOrTruncate",
    "PreprocessorCheck",
    "PresentValues",
    "RawFeatureModel",
    "Standardize",
    "TextTokens",
    "TransformLayer",
    "VocabularyFirst",
    "VocabularyFirstColumns",
    "check_preprocessor",
    "encoding_plan",
    "export_keras_preprocessor",
    "export_serving_model",
    "keras_layer_name",
    "keras_preprocessor",
    "model_inputs",
    "parse_raw_examples",
    "raw_feature_batch",
    "raw_inputs",
    "read_spec_file",
    "serialize_raw_examples",
    "signature_argument_name",
    "transform_raw_rows",
    "transform_raw_rows_dense",
    "transform_raw_rows_exported",
]
