"""The tf.Transform `preprocessing_fn` built from the config's declarative transforms.

Every transform is a tf.Transform call, so its statistics come from tf.Transform analyzers over the
whole dataset and the same graph runs at serving time. A user `preprocessing_fn` (``module:function``)
is called with the raw features and the declarative outputs; what it returns is added to (or
replaces) them.
"""

from __future__ import annotations

import importlib
from typing import Callable

from skewless.config import JobConfig
from skewless.errors import ConfigError
from skewless.pipelines.columns import RawColumn


def vocabulary_filename(feature: str) -> str:
    """The asset name of a feature's vocabulary inside the graph (TFTransformOutput.vocabulary_file_by_name)."""
    return f"vocab_{feature}"


def load_user_fn(reference: str) -> Callable:
    """Imports `module.path:function`, and nothing but the module the config names."""
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(f"preprocessing_fn {reference!r}: cannot import {module_name}: {error}") from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise ConfigError(f"preprocessing_fn {reference!r}: {module_name} has no function {attribute}")
    return function


def build_preprocessing_fn(config: JobConfig, columns: list[RawColumn]) -> Callable:
    """Returns the preprocessing_fn for tf.Transform; it closes over plain data only, so it pickles."""
    by_name = {column.name: column for column in columns}
    features = {name: feature.model_dump() for name, feature in config.features.items()}
    label = config.label.model_dump() if config.label else None
    user_fn = config.preprocessing_fn

    def preprocessing_fn(inputs):
        import tensorflow as tf
        import tensorflow_transform as tft

        outputs = {}
        for name, options in features.items():
            value = _dense(inputs[name], by_name[name], options["default"])
            outputs[name] = _apply(tf, tft, name, value, options, by_name[name].kind)
        if label is not None:
            column = by_name[label["column"]]
            value = _dense(inputs[column.name], column, None)
            outputs[column.name] = _label(tf, tft, column.name, value, label)
        if user_fn is not None:
            extra = load_user_fn(user_fn)(dict(inputs), dict(outputs))
            if not isinstance(extra, dict):
                raise ConfigError(f"preprocessing_fn {user_fn!r} must return a dict of tensors")
            outputs.update(extra)
        return outputs

    return preprocessing_fn


def _dense(value, column: RawColumn, default):
    """A raw feature as a dense (batch,) tensor; missing values of an optional column take the default."""
    import tensorflow as tf
    import tensorflow_transform as tft

    if not isinstance(value, tf.SparseTensor):
        return value
    if default is None:
        default = {"int": 0, "float": 0.0, "bytes": ""}[column.kind]
    if column.kind == "bytes":
        default = str(default).encode()
    dense = tft.sparse_tensor_to_dense_with_shape(value, [None, 1], default_value=default)
    return tf.squeeze(dense, axis=1)


def _apply(tf, tft, name: str, value, options: dict, kind: str):
    transform = options["transform"]
    if transform == "passthrough":
        return value
    if transform in ("z_score", "scale_0_1", "bucketize"):
        if kind == "bytes":
            raise ConfigError(f"features.{name}: transform {transform} needs a numeric column, {name} holds strings")
        value = tf.cast(value, tf.float32)
        if transform == "z_score":
            return tft.scale_to_z_score(value)
        if transform == "scale_0_1":
            return tft.scale_to_0_1(value)
        return tft.bucketize(value, options["num_buckets"])
    if kind != "bytes":
        value = tf.strings.as_string(value)
    if transform == "vocabulary":
        return tft.compute_and_apply_vocabulary(
            value,
            top_k=options["top_k"],
            frequency_threshold=options["frequency_threshold"],
            num_oov_buckets=options["num_oov_buckets"],
            vocab_filename=vocabulary_filename(name),
        )
    return tft.hash_strings(value, options["hash_buckets"])


def _label(tf, tft, name: str, value, label: dict):
    if label["map"] is not None:
        if value.dtype != tf.string:
            value = tf.strings.as_string(value)
        keys = tf.constant(list(label["map"]))
        ids = tf.constant(list(label["map"].values()), dtype=tf.int64)
        # -1 marks a label the map does not know; the job quarantines such rows before they get here
        matches = tf.equal(tf.expand_dims(value, 1), tf.expand_dims(keys, 0))
        return tf.where(tf.reduce_any(matches, axis=1), tf.gather(ids, tf.argmax(tf.cast(matches, tf.int64), axis=1)),
                        tf.constant(-1, tf.int64))
    if label["transform"] == "vocabulary":
        if value.dtype != tf.string:
            value = tf.strings.as_string(value)
        return tft.compute_and_apply_vocabulary(value, num_oov_buckets=0, vocab_filename=vocabulary_filename(name))
    return value
