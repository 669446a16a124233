"""`NativePreprocessor`: a run's declarative transforms as built-in Keras 3 preprocessing layers."""

from __future__ import annotations

import keras

from skewless.errors import InputError
from skewless.layers.backend_tensors import (BeyondBackendIntegers, as_tensor, as_tf, uniform_inputs,
                                             unwrapped_by_keras)
from skewless.layers.raw_value_layer import accept_raw_inputs


@keras.saving.register_keras_serializable(package="skewless")
class NativePreprocessor(keras.Model):
    """Raw features in, transformed features out, through plain Keras layers (no TF graph inside).

    Build it with `keras_preprocessor(run_dir)`, which initializes each feature's layers
    (``Normalization``, ``Discretization``, ``StringLookup`` ...) with the analyzer outputs read from
    the run's transform graph. Takes ``{raw feature: values of shape (batch,)}`` (optional features
    may be ``tf.SparseTensor``, as ``tf.io.parse_example`` gives them) and returns
    ``{transformed feature: tensor of shape (batch,)}``; keys it does not use are ignored.

    It runs on every Keras backend: on TensorFlow anywhere (eagerly, in a functional model, in
    ``tf.data``); on JAX (and, untested, PyTorch) eagerly and in ``tf.data`` pipelines, like Keras' own string
    layers, which use TensorFlow inside and cannot be traced by ``jax.jit``. Integer outputs are
    int32 on JAX unless ``jax_enable_x64`` is set; an integer beyond int32 then fails the call (an
    `InputError` naming the feature) rather than wrap to another number.

    Args:
        features: ``{name: {"transform": ..., "dtype": output dtype, "layers": [keras layers]}}``;
            each output applies its layers in order to the raw feature of the same name, or, where the
            spec has ``"inputs": [raw features]`` (a cross, a missing indicator), to those: each first
            through its ``"input_layers"`` (``{raw feature: [keras layers]}``), then all of them (a list
            when there are several) through ``"layers"``.
        unsupported: ``{name: reason}`` for the features left out (see `keras_preprocessor`).

    Examples:
        After ``skewless run configs/example.yaml -o out/example``: age is z-scored with the run's mean and
        standard deviation (run.json holds them), workclass is its line in the run's vocabulary file:

        >>> import json
        >>> import keras
        >>> import numpy as np
        >>> from skewless.layers import keras_preprocessor
        >>> preprocessor = keras_preprocessor("out/example", strict=False)
        >>> batch = {"age": np.array([25, 61]), "workclass": np.array(["Private", "Unheard-of"])}
        >>> features = preprocessor.transform_features(batch, ["age", "workclass"])
        >>> age = json.load(open("out/example/run.json"))["features"]["age"]
        >>> np.allclose(keras.ops.convert_to_numpy(features["age"]), (np.array([25, 61]) - age["mean"]) / age["std"])
        True
        >>> keras.ops.convert_to_numpy(features["workclass"]).tolist()
        [0, 7]
        >>> preprocessor.save("preprocessor.keras")      # small, self-contained, loads on any backend
        >>> import os; os.path.getsize("preprocessor.keras") < 100_000
        True
    """

    def __init__(self, features: dict, unsupported: dict | None = None, **kwargs):
        kwargs.setdefault("trainable", False)
        super().__init__(**kwargs)
        self.feature_specs = {
            name: {"transform": spec["transform"], "dtype": spec["dtype"], "inputs": list(spec.get("inputs") or [name])}
            for name, spec in features.items()
        }
        self.feature_layers = {name: list(spec["layers"]) for name, spec in features.items()}
        self.input_layers = {name: {raw: list(layers) for raw, layers in (spec.get("input_layers") or {}).items()}
                             for name, spec in features.items()}
        self.unsupported = dict(unsupported or {})
        # String inputs cannot become JAX or PyTorch tensors: take inputs as they are (the lookup
        # layers convert them as they need).
        accept_raw_inputs(self)

    def __call__(self, inputs, *args, **kwargs):
        # Checked before Keras' __call__, which would wrap the one-line error into a multi-line one.
        self._check_inputs(inputs)
        return super().__call__(uniform_inputs(inputs), *args, **kwargs)

    def call(self, inputs):
        return self.transform_features(inputs, list(self.feature_layers))

    def transform_features(self, inputs, names) -> dict:
        """The transformed features `names` only, from the raw features they need."""
        self._check_inputs(inputs, names)
        outputs = {}
        for name in names:
            try:
                outputs[name] = self._transform_feature(inputs, name)
            except BeyondBackendIntegers as error:
                raise unwrapped_by_keras(InputError(f"feature {name!r}: {error}")) from None
        return outputs

    def _transform_feature(self, inputs, name):
        values = []
        for raw in self.feature_specs[name]["inputs"]:
            value = inputs[raw]
            for layer in self.input_layers[name].get(raw, []):
                value = layer(value)
            values.append(value)
        # several inputs (a cross) go to a layer running TF inside; Keras refuses a list mixing TF and NumPy
        value = values[0] if len(values) == 1 else [as_tf(value) for value in values]
        for layer in self.feature_layers[name]:
            value = layer(value)
        return as_tensor(value)

    def compute_output_spec(self, inputs):
        return {name: keras.KerasTensor((None,), dtype=spec["dtype"]) for name, spec in self.feature_specs.items()}

    def get_config(self):
        config = super().get_config()
        serialize = keras.saving.serialize_keras_object
        features = {
            name: {**spec, "layers": [serialize(layer) for layer in self.feature_layers[name]],
                   "input_layers": {raw: [serialize(layer) for layer in layers]
                                    for raw, layers in self.input_layers[name].items()}}
            for name, spec in self.feature_specs.items()
        }
        config.update(features=features, unsupported=self.unsupported)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        deserialize = keras.saving.deserialize_keras_object
        config["features"] = {
            name: {**spec, "layers": [deserialize(layer) for layer in spec["layers"]],
                   "input_layers": {raw: [deserialize(layer) for layer in layers]
                                    for raw, layers in spec.get("input_layers", {}).items()}}
            for name, spec in config["features"].items()
        }
        return cls(**config)

    def _check_inputs(self, inputs, names=None) -> None:
        if not isinstance(inputs, dict):
            raise InputError(f"NativePreprocessor takes a dict of raw features by name, got {type(inputs).__name__}")
        for name in self.feature_layers if names is None else names:
            if name not in self.feature_layers:
                raise InputError(f"feature {name!r} is not computed by this preprocessor"
                                 f" (it computes {', '.join(sorted(self.feature_layers))})")
            for raw in self.feature_specs[name]["inputs"]:
                if raw not in inputs:
                    raise InputError(f"raw feature {raw!r} is missing from the inputs (got {sorted(inputs)})")
