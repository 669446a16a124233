"""`RawFeatureModel`: a trained model behind its `NativePreprocessor`, raw features in, on any backend."""

from __future__ import annotations

import keras

from skewless.layers.backend_tensors import uniform_inputs
from skewless.layers.native_preprocessor import NativePreprocessor
from skewless.layers.raw_value_layer import accept_raw_inputs


@keras.saving.register_keras_serializable(package="skewless")
class RawFeatureModel(keras.Model):
    """Runs `preprocessor` on a dict of raw features, then `model` on the transformed features.

    One ``.keras`` file holds both, with no TF graph inside, and loads on every backend (after
    ``import skewless``). On TensorFlow it trains, predicts and exports like any Keras
    model. On JAX and PyTorch, Keras cannot feed strings through ``fit``/``predict`` (nor trace
    StringLookup with ``jax.jit``): train `model` on the preprocessor's outputs (e.g.
    ``dataset.map(lambda x, y: (preprocessor(x), y))``, where the JAX model is compiled as usual)
    and call this model directly, ``raw_model(batch)``, for raw-feature predictions.

    Args:
        preprocessor: the run's `NativePreprocessor` (see `keras_preprocessor`).
        model: a Keras model taking ``{transformed feature: tensor}`` (any subset, by name).

    Examples:
        After ``skewless run configs/example.yaml -o out/example``, a model of the transformed age and fnlwgt
        that takes raw rows:

        >>> import keras
        >>> import numpy as np
        >>> from skewless.layers import RawFeatureModel, keras_preprocessor
        >>> preprocessor = keras_preprocessor("out/example")
        >>> inputs = {"age": keras.Input(shape=(), name="age"), "fnlwgt": keras.Input(shape=(), name="fnlwgt")}
        >>> stacked = keras.ops.stack([inputs["age"], inputs["fnlwgt"]], axis=-1)
        >>> body = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(stacked))
        >>> raw_model = RawFeatureModel(preprocessor, body)
        >>> raw = {"age": np.array([25, 61]), "fnlwgt": np.array([150000.0, 90000.0], "float32")}
        >>> scores = keras.ops.convert_to_numpy(raw_model(raw))
        >>> transformed = preprocessor.transform_features(raw, ["age", "fnlwgt"])
        >>> bool((scores == keras.ops.convert_to_numpy(body(transformed))).all())   # the body on the transformed rows
        True
        >>> raw_model.save("model.keras")
        >>> bool((keras.ops.convert_to_numpy(keras.saving.load_model("model.keras")(raw)) == scores).all())
        True
    """

    def __init__(self, preprocessor: NativePreprocessor, model: keras.Model, **kwargs):
        super().__init__(**kwargs)
        self.preprocessor = preprocessor
        self.model = model
        # String inputs cannot become JAX or PyTorch tensors: the preprocessor takes them as they are.
        accept_raw_inputs(self)

    def __call__(self, inputs, *args, **kwargs):
        return super().__call__(uniform_inputs(inputs), *args, **kwargs)

    def call(self, inputs, training=None):
        names = _input_names(self.model)
        features = self.preprocessor.transform_features(inputs, names or list(self.preprocessor.feature_layers))
        return self.model(features, training=training)

    def get_config(self):
        config = super().get_config()
        config.update(
            preprocessor=keras.saving.serialize_keras_object(self.preprocessor),
            model=keras.saving.serialize_keras_object(self.model),
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["preprocessor"] = keras.saving.deserialize_keras_object(config["preprocessor"])
        config["model"] = keras.saving.deserialize_keras_object(config["model"])
        return cls(**config)


def _input_names(model) -> list[str] | None:
    """The transformed features a functional model takes by name (None when it does not say)."""
    try:
        structure = model.input
    except (AttributeError, ValueError):
        return None
    if isinstance(structure, dict):
        return list(structure)
    return None
