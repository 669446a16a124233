"""`RawValueLayer` (layers/raw_value_layer.py): every raw-value layer of skewless.layers is one, computes what NumPy
or the graph's rule says, and rebuilds from its config. The private Keras attributes it relies on are checked by
tests/architecture/test_dependency_canaries.py."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

import skewless.layers
from skewless.layers import (Cast, Clip, FillMissing, Log1p, MissingIndicator, PadOrTruncate, PresentValues,
                             Standardize, TextTokens, VocabularyFirst, VocabularyFirstColumns)
from skewless.layers.raw_value_layer import RawValueLayer


def test_a_raw_value_layer_is_weightless_not_trainable_and_not_autocast():
    layer = RawValueLayer()
    assert (layer.trainable, layer.autocast, layer.built, layer.weights) == (False, False, True, [])
    assert RawValueLayer(trainable=True, name="kept").get_config()["trainable"] is True  # a caller's choice stays


# every raw-value layer of skewless.layers, with an input it takes and what it must give (NumPy, by hand)
CASES = {
    "cast": (Cast("int64"), np.array([1, -2], np.int32), [1, -2]),
    "clip": (Clip(-1.5, 2.0), np.array([-3.0, 0.25, 7.0]), np.clip([-3.0, 0.25, 7.0], -1.5, 2.0).tolist()),
    "fill_missing": (FillMissing(0.5), tf.SparseTensor([[0, 0], [2, 0]], [1.5, float("nan")], [3, 1]), [1.5, 0.5, 0.5]),
    "log1p": (Log1p(), np.array([0.0, 99.0]), np.log1p([0.0, 99.0]).astype(np.float32).tolist()),
    "missing_indicator": (MissingIndicator(missing_tokens=["NA"]),
                          tf.SparseTensor([[0, 0], [1, 0]], ["a", "NA"], [3, 1]), [0, 1, 1]),
    "pad_or_truncate": (PadOrTruncate(2), tf.ragged.constant([[4, 1, 7], []], tf.int64), [[4, 1], [-1, -1]]),
    "present_values": (PresentValues(missing_tokens=["NA"]),
                       tf.SparseTensor([[0, 0], [0, 1], [1, 0]], ["a", "NA", ""], [2, 2]), [[b"a"], []]),
    "standardize": (Standardize(38.5, 13.25), np.array([38.5, 51.75]),
                    ((np.float32([38.5, 51.75]) - np.float32(38.5)) / np.float32(13.25)).tolist()),
    "text_tokens": (TextTokens(strip_regex="[[:punct:]]"), ["Crème, BRÛLÉE!"], [["crème".encode(), "brûlée".encode()]]),
    "vocabulary_first": (VocabularyFirst(3, 2), np.array([0, 1, 2, 4], np.int64), [3, 4, 0, 2]),
    "vocabulary_first_columns": (VocabularyFirstColumns(3, 2, 6), np.array([[1.0, 0.0, 0.0, 2.0, 0.0]]),
                                 [[0.0, 2.0, 0.0, 1.0, 0.0, 0.0]]),
}


def _values(output):
    if isinstance(output, tf.SparseTensor):
        output = tf.RaggedTensor.from_sparse(output)
    if isinstance(output, tf.RaggedTensor):
        return output.to_list()
    return keras.ops.convert_to_numpy(output).tolist()


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_raw_value_layer_computes_and_round_trips_its_config(case):
    layer, inputs, expected = CASES[case]
    assert isinstance(layer, RawValueLayer)
    assert (layer.trainable, layer.autocast, layer.built, layer.weights) == (False, False, True, [])
    assert _values(layer(inputs)) == expected
    config = json.loads(json.dumps(layer.get_config()))  # as a .keras file holds it
    rebuilt = type(layer).from_config(config)
    assert rebuilt.get_config() == config
    assert _values(rebuilt(inputs)) == expected


def test_every_raw_value_layer_is_in_the_cases():
    exported = {value for value in vars(skewless.layers).values() if isinstance(value, type) and issubclass(value, RawValueLayer)}
    assert exported == {type(layer) for layer, _, _ in CASES.values()}
