"""`RawValueLayer` and the private Keras attributes it relies on (layers/raw_value_layer.py).

Keras 3 has no public switch for a layer that takes strings, sparse or ragged tensors positionally and unconverted;
its own preprocessing layers set `_convert_input_args` and `_allow_non_tensor_positional_args`, and skewless does
too, in `accept_raw_inputs` alone. The first tests check that Keras still has these attributes and still reads them
as skewless needs, so a Keras upgrade that changes them fails here, by name, rather than somewhere in serving. The
last ones check every raw-value layer of skewless.layers against its own config.
"""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

import skewless.layers
from skewless.layers import (Cast, Clip, FillMissing, Log1p, MissingIndicator, PadOrTruncate, PresentValues,
                             Standardize, TextTokens, VocabularyFirst, VocabularyFirstColumns)
from skewless.layers.raw_value_layer import RawValueLayer, accept_raw_inputs


class _Echo(keras.layers.Layer):
    """Keeps what its call received; `build` fails, so a call that builds it says so."""

    def build(self, input_shape):
        raise AssertionError("build() ran")

    def call(self, inputs):
        self.received = inputs
        return keras.ops.zeros(())


def _built(layer):
    """`layer` built as Keras builds a layer without `build` (so the call reaches the conversion, not build())."""
    layer.built = True
    return layer


def test_keras_layers_still_have_the_private_switches():
    layer = keras.layers.Layer()
    assert layer._convert_input_args is True, "keras.layers.Layer no longer sets _convert_input_args = True"
    assert layer._allow_non_tensor_positional_args is False, (
        "keras.layers.Layer no longer sets _allow_non_tensor_positional_args = False")


def test_without_the_switches_keras_converts_inputs_and_refuses_non_tensors():
    # what accept_raw_inputs turns off: if Keras stopped doing this by default, the switches would be dead
    with pytest.raises(ValueError, match="Only input tensors may be passed as positional arguments"):
        _built(_Echo())(["a", "b"])
    echo = _built(_Echo(dtype="float32"))
    echo(np.array([1.5, 2.5], np.float64))
    assert not isinstance(echo.received, np.ndarray)
    assert keras.backend.standardize_dtype(echo.received.dtype) == "float32"


def test_accept_raw_inputs_passes_inputs_as_they_come_and_never_builds():
    echo = _Echo(dtype="float32")
    accept_raw_inputs(echo)
    echo(["a", "b"])
    assert echo.received == ["a", "b"]  # Python strings, not refused
    numbers = np.array([1.5, 2.5], np.float64)
    echo(numbers)
    assert echo.received is numbers  # neither converted nor cast to the layer's float32
    ragged = tf.ragged.constant([["x"], []])
    echo(ragged)
    assert echo.received is ragged
    assert echo.built


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
