"""`RawValueLayer`: the base of the layers that take raw values as they come (strings, sparse and ragged tensors, TF
tensors inside tf.data) and hold no weights, as Keras' own `DataLayer` and lookup layers do.

Keras 3 converts a layer's positional inputs to backend tensors and refuses anything else; strings, sparse and ragged
tensors are no backend tensors on JAX or PyTorch, and inside a tf.data pipeline the input is a TF tensor whatever the
backend. Keras has no public switch for either: its preprocessing layers set two private attributes of
`keras.layers.Layer` (`_convert_input_args`, `_allow_non_tensor_positional_args`), and so does `accept_raw_inputs`,
the one place skewless writes them. tests/layers/test_raw_value_layer.py checks that Keras still reads them as
relied on here, so a Keras upgrade that changes them fails that one test.
"""

from __future__ import annotations

import keras


def accept_raw_inputs(layer: keras.layers.Layer) -> None:
    """Makes `layer` take its inputs as they come (no conversion to backend tensors, non-tensors allowed
    positionally) and built already: it holds no weights to build."""
    layer._convert_input_args = False
    layer._allow_non_tensor_positional_args = True
    layer.built = True


class RawValueLayer(keras.layers.Layer):
    """A weightless layer of raw values: not trainable, no autocast of its inputs (the graph's dtypes are kept),
    inputs taken as they come (`accept_raw_inputs`), built at construction.

    A subclass sets its own options after ``super().__init__(**kwargs)`` and returns them from `get_config`; the
    keyword arguments Keras serializes (name, dtype, trainable) pass through unchanged, so saved models load as
    before.
    """

    def __init__(self, **kwargs):
        kwargs.setdefault("trainable", False)
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)
        accept_raw_inputs(self)
