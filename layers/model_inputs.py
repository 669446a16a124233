"""`model_inputs`: a run's features as Keras inputs and one encoded float tensor, FeatureSpace style.

The encoding of each transformed feature comes from the run's transformed schema: a feature with a
categorical int domain (every vocabulary, hash, bucketize, cross and text output has one) is encoded as
`skewless.encoding_advice` advises for its bucket count, every other number is taken as it is.
"""

from __future__ import annotations

import math
import os
from typing import Mapping, Sequence

import keras
import tensorflow as tf
from tensorflow_metadata.proto.v0 import schema_pb2

from skewless.encoding_advice import EMBEDDING, ONE_HOT, advise
from skewless.errors import InputError
from skewless.layers.feature_encoder import NUMERIC, FeatureEncoder
from skewless.layers.feature_scales import feature_scales, unit_scale_features
from skewless.layers.raw_inputs import raw_inputs
from skewless.layers.transform_graph import FROM_RUN, find_graph_dir
from skewless.layers.transform_layer import TransformLayer
from skewless.lazy_imports import lazy_import
from skewless.safe_names import keras_layer_name

# tf.Transform (seconds to import) on first use: the functions that read a graph need it, `import skewless.layers`
# alone does not
tft = lazy_import("tensorflow_transform")

# A text's bag_of_words / tfidf output pairs its ids `<name>` with their weights `<name>_weights`.
WEIGHTS_SUFFIX = "_weights"


def model_inputs(
    run_dir: str | os.PathLike,
    embedding_dims: Mapping[str, int | None] | None = None,
    raw: bool = False,
    features: Sequence[str] | None = None,
    label: str | None = FROM_RUN,
) -> tuple[dict[str, keras.KerasTensor], keras.KerasTensor]:
    """Keras inputs for a run and ONE float32 tensor ``(batch, width)`` of its encoded transformed features.

    Per transformed feature (the label and what is computed from it left out), in name order:

    - categorical ids (vocabulary, hash, bucketize, cross, text ids; lists too): one-hot (multi-hot for
      a list) up to 50 ids, an embedding above (a list: the mean of its ids' embeddings, padding masked),
      sized by `skewless.encoding_advice`; a text's bag-of-words / TF-IDF ids count with their
      ``<name>_weights``;
    - other numbers: as float32 (a fixed-shape feature flattened); as they are where their transform scaled them
      (z_score, log, scale_to_gaussian, scale_0_1, scale_by_min_max, image pixels, sin/cos, missing indicators),
      else standardized with their mean and deviation over the run's first rows (`feature_scales`): epoch
      seconds, years and passthrough numbers never reach the model raw.

    Args:
        run_dir: the run directory (or its transform_graph/ with `label`).
        embedding_dims: per feature, an embedding size to use instead of the advice's, or None for a
            one-hot (multi-hot) whatever its size.
        raw: False (default): the inputs are the transformed features, as `make_dataset` reads them
            from the run's shards: train on those, and `skewless export` puts the graph in front.
            True: the inputs are the raw features (`raw_inputs`) and the model holds the run's
            `TransformLayer`: train on raw rows (`make_raw_dataset`); the `.keras` file carries the graph.
        features: the transformed features to encode (default: all). A string, a var-len float list
            that is no weights, a feature list, or ids of a fixed shape of two or more dimensions (bucketize
            of a `shape`) has no encoding: leave those out here.
        label: the raw label column; by default the one named in the run's run.json.

    Raises InputError naming a feature that is unknown, the label, or has no encoding.

    Examples:
        After ``skewless run configs/example.yaml -o out/example``: four numbers, one-hots of education (12 ids),
        hours_per_week (10 buckets), occupation (16) and workclass (8), and a 16-wide embedding of
        native_country's 64 hash buckets:

        >>> import keras
        >>> from skewless.layers import model_inputs
        >>> inputs, encoded = model_inputs("out/example")
        >>> sorted(inputs)
        ['age', 'capital_gain', 'education', 'fnlwgt', 'hours_per_week', 'native_country', 'occupation', 'workclass']
        >>> encoded.shape
        (None, 65)
        >>> 1 + 1 + 12 + 1 + 10 + 16 + 16 + 8
        65
        >>> outputs = keras.layers.Dense(1, activation="sigmoid")(keras.layers.Dense(8, activation="relu")(encoded))
        >>> model = keras.Model(inputs, outputs)   # trains on make_dataset("out/example", "train")
        >>> model.compile("adam", "binary_crossentropy")
    """
    transform = TransformLayer(run_dir, label=label)
    plan = encoding_plan(transform, embedding_dims, features)
    encoder = FeatureEncoder(plan, name="encoded_features")
    if raw:
        inputs = raw_inputs(run_dir, label=transform.label)
        return inputs, encoder(transform(inputs))
    used = sorted({entry["feature"] for entry in plan} | {entry["weights"] for entry in plan if entry.get("weights")})
    spec = transform.transformed_feature_spec
    inputs = {name: _transformed_input(name, spec[name]) for name in used}
    return inputs, encoder(inputs)


def encoding_plan(
    transform: TransformLayer,
    embedding_dims: Mapping[str, int | None] | None = None,
    features: Sequence[str] | None = None,
) -> list[dict]:
    """`FeatureEncoder`'s plan for the transformed features of `transform`'s graph (see `model_inputs`)."""
    spec = transform.transformed_feature_spec
    servable = sorted(name for name in spec if name != transform.label and name not in transform.label_outputs)
    domains = tft.TFTransformOutput(find_graph_dir(transform.graph_dir)).transformed_domains()
    ids = {
        name: domain.max + 1
        for name, domain in domains.items()
        if isinstance(domain, schema_pb2.IntDomain) and domain.is_categorical and domain.min == 0
    }
    weights = {name + WEIGHTS_SUFFIX for name in ids if _is_weights(spec.get(name + WEIGHTS_SUFFIX))}
    chosen = list(features) if features is not None else [name for name in servable if name not in weights]
    embedding_dims = dict(embedding_dims or {})
    for name in [*chosen, *embedding_dims]:
        if name not in servable:
            raise InputError(f"feature {name!r} is not a transformed feature the model can take "
                             f"(label and label outputs are left out; those are: {', '.join(servable)})")
    unknown = sorted(set(embedding_dims) - set(chosen))
    if unknown:
        raise InputError(f"embedding_dims names {unknown}, which are not among the encoded features")
    plan = []
    for name in chosen:
        if name in ids and len(getattr(spec[name], "shape", [])) > 1:
            # one-hot or embedding of each position is the model's choice: a multi-hot would lose the positions
            raise InputError(f"feature {name!r}: ids of a fixed shape {list(spec[name].shape)} have no encoding "
                             "here; leave it out (features=...) and encode it in the model")
        if name in ids:
            plan.append(_categorical(name, ids[name], embedding_dims, weights))
        else:
            plan.append({"feature": name, "encoding": NUMERIC, "width": _numeric_width(name, spec[name])})
    # a number no transform scaled (epoch seconds, a year, a passthrough count) is standardized with constants of
    # the run: raw, it would swamp the other inputs and, at 1e9, round differently with other rows in the batch
    scaled = unit_scale_features(transform.graph_dir)
    unscaled = {entry["feature"]: spec[entry["feature"]] for entry in plan
                if entry["encoding"] == NUMERIC and (scaled is None or entry["feature"] not in scaled)}
    scales = feature_scales(transform.graph_dir, unscaled)
    for entry in plan:
        if entry["feature"] in scales:
            entry["offset"], entry["scale"] = scales[entry["feature"]]
    return plan


def _categorical(name: str, ids: int, embedding_dims: Mapping, weights: set) -> dict:
    entry = {"feature": name, "ids": ids}
    if name + WEIGHTS_SUFFIX in weights:
        entry["weights"] = name + WEIGHTS_SUFFIX
    if name not in embedding_dims:
        advice = advise(ids)
        return {**entry, "encoding": advice.encoding, "width": advice.width}
    dim = embedding_dims[name]
    if dim is None:
        return {**entry, "encoding": ONE_HOT, "width": ids}
    if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1:
        raise InputError(f"embedding_dims[{name!r}] = {dim!r}: give a positive int, or None for one-hot")
    return {**entry, "encoding": EMBEDDING, "width": dim}


def _numeric_width(name: str, spec) -> int:
    if isinstance(spec, tf.io.FixedLenFeature) and spec.dtype != tf.string:
        return math.prod(spec.shape)
    kind = "a string" if spec.dtype == tf.string else (
        "a feature list" if isinstance(spec, tf.io.RaggedFeature) else "a var-len list of numbers")
    raise InputError(f"feature {name!r} is {kind} and has no fixed-width encoding; leave it out with features=[...] "
                     "(or give it max_length in the config)")


def _is_weights(spec) -> bool:
    return isinstance(spec, tf.io.VarLenFeature) and spec.dtype.is_floating


def _transformed_input(name: str, spec) -> keras.KerasTensor:
    typed = {"dtype": spec.dtype.name, "name": keras_layer_name(name)}
    if isinstance(spec, tf.io.VarLenFeature):
        return keras.Input(shape=(None,), sparse=True, **typed)
    return keras.Input(shape=tuple(spec.shape), **typed)
