"""`raw_inputs`: Keras inputs for a run's raw features, so the schema is written once (in the job config)."""

from __future__ import annotations

import os

import keras
import tensorflow as tf

from skewless.errors import InputError
from skewless.layers.transform_graph import FROM_RUN, find_graph_dir, label_column
from skewless.lazy_imports import lazy_import
from skewless.safe_names import keras_layer_name

# tf.Transform (seconds to import) on first use: the functions that read a graph need it, `import skewless.layers`
# alone does not
tft = lazy_import("tensorflow_transform")


def raw_inputs(
    graph_dir: str | os.PathLike, include_label: bool = False, label: str | None = FROM_RUN
) -> dict[str, keras.KerasTensor]:
    """One `keras.Input` per raw feature of the graph, keyed by its name and typed from the raw schema.

    The dict's keys are the features' names, whatever they hold; each input's own (Keras) name is
    `keras_layer_name(feature)`: the feature's name unless Keras or TensorFlow refuse its characters.

    Required (FixedLen) features are dense inputs of shape ``(None,)``; optional (VarLen) features are
    sparse inputs of shape ``(None, None)``, as ``tf.io.parse_example`` produces them; feature lists
    (SequenceExample input) ragged inputs of shape ``(None, None, None)``. The label column
    (named in the run's ``run.json`` unless `label` is given) is left out unless `include_label`.

    Examples:
        After ``skewless run configs/example.yaml -o out/example`` (``capital_gain`` and ``occupation`` have a
        default: they are optional, sparse):

        >>> import keras
        >>> from skewless.layers import TransformLayer, raw_inputs
        >>> inputs = raw_inputs("out/example")
        >>> {name: (tensor.shape, tensor.dtype, tensor.sparse) for name, tensor in sorted(inputs.items())[:3]}
        {'age': ((None,), 'int64', False), 'capital_gain': ((None, None), 'float32', True),
         'education': ((None,), 'string', False)}
        >>> features = TransformLayer("out/example")(inputs)
        >>> numeric = keras.ops.stack([features["age"], features["fnlwgt"]], axis=-1)
        >>> model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(numeric))
        >>> model.count_params()   # a weight for age, one for fnlwgt, a bias
        3
    """
    graph_root = find_graph_dir(graph_dir)
    label = label_column(graph_dir, label)
    spec = tft.TFTransformOutput(graph_root).raw_feature_spec()
    if include_label and label not in spec:
        raise InputError(f"{graph_dir}: the label column {label!r} is not a raw feature of the graph")
    inputs = {}
    for name, feature in sorted(spec.items()):
        if name == label and not include_label:
            continue
        typed = {"dtype": feature.dtype.name, "name": keras_layer_name(name)}
        if isinstance(feature, tf.io.VarLenFeature):
            inputs[name] = keras.Input(shape=(None,), sparse=True, **typed)
        elif isinstance(feature, tf.io.RaggedFeature):  # a feature list: (batch, steps, values)
            inputs[name] = keras.Input(shape=(None, None), ragged=True, **typed)
        else:
            inputs[name] = keras.Input(shape=tuple(feature.shape), **typed)
    return inputs
