"""`FeatureEncoder`: transformed features -> one float32 matrix a Dense layer can take."""

from __future__ import annotations

import keras
import tensorflow as tf

from skewless.encoding_advice import EMBEDDING, ONE_HOT
from skewless.errors import InputError
from skewless.safe_names import keras_layer_name

NUMERIC = "numeric"


@keras.saving.register_keras_serializable(package="skewless")
class FeatureEncoder(keras.layers.Layer):
    """Encodes a dict of transformed features and concatenates them, in `plan` order, into one float32 tensor.

    Each entry of `plan` is a dict: ``feature`` (its name), ``encoding`` and ``width`` (its columns):

    - ``numeric``: the values as float32, flattened to ``width`` columns; with ``offset`` and ``scale``,
      ``(value - offset) / scale`` computed in float64 first (`model_inputs` standardizes unscaled numbers so);
    - ``one_hot``: ids in ``[0, ids)`` as a one-hot of ``ids`` columns; a list of ids (sparse, ragged or
      padded dense) as a multi-hot; ids outside ``[0, ids)``, such as the -1 padding, are no column;
    - ``embedding``: ids looked up in an embedding of ``width`` dimensions; a list of ids gives the mean
      of its ids' embeddings (padding masked, an empty list gives zeros).

    With ``weights`` (the name of a float feature aligned with the ids, as a text's ``bag_of_words`` or
    ``tfidf`` ``<name>_weights``), each id counts with its weight: a one-hot column holds the id's
    weight, an embedding is the weighted mean (``tf.nn.embedding_lookup_sparse``'s "mean" combiner).

    `skewless.layers.model_inputs` builds the plan from a run's transformed schema and the encoding
    advice; build one by hand to encode features your own way. Runs on the TensorFlow backend (it
    takes the sparse and ragged tensors of var-len features).

    Examples:
        >>> import keras
        >>> import numpy as np
        >>> from skewless.layers import FeatureEncoder
        >>> encoder = FeatureEncoder([
        ...     {"feature": "age", "encoding": "numeric", "width": 1},
        ...     {"feature": "workclass", "encoding": "one_hot", "width": 4, "ids": 4},
        ...     {"feature": "country", "encoding": "embedding", "width": 3, "ids": 64},
        ... ])
        >>> encoded = keras.ops.convert_to_numpy(encoder({
        ...     "age": np.array([0.5, -1.0], "float32"), "workclass": np.array([2, 0]), "country": np.array([63, 7])}))
        >>> encoded.shape
        (2, 8)
        >>> encoded[:, :5].tolist()   # age, then workclass one-hot
        [[0.5, 0.0, 0.0, 1.0, 0.0], [-1.0, 1.0, 0.0, 0.0, 0.0]]

        The last 3 columns are rows 63 and 7 of the embedding's weights:

        >>> weights = keras.ops.convert_to_numpy(encoder.weights[0])
        >>> weights.shape, bool((encoded[:, 5:] == weights[[63, 7]]).all())
        ((64, 3), True)
    """

    def __init__(self, plan, **kwargs):
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)
        self.plan = [dict(entry) for entry in plan]
        for entry in self.plan:
            if entry["encoding"] not in (NUMERIC, ONE_HOT, EMBEDDING):
                raise InputError(f"feature {entry['feature']!r}: unknown encoding {entry['encoding']!r} "
                                 f"(numeric, one_hot, embedding)")
        self.embeddings = {
            entry["feature"]: keras.layers.Embedding(
                entry["ids"], entry["width"], name=f"embedding_{keras_layer_name(entry['feature'])}")
            for entry in self.plan if entry["encoding"] == EMBEDDING
        }
        for embedding in self.embeddings.values():
            embedding.build((None, None))
        self.built = True

    @property
    def width(self) -> int:
        """Columns of the encoded tensor."""
        return sum(entry["width"] for entry in self.plan)

    def __call__(self, features, *args, **kwargs):
        # Checked before Keras' __call__, which would wrap the one-line error into a multi-line one.
        self._check_inputs(features)
        return super().__call__(features, *args, **kwargs)

    def call(self, features):
        return tf.concat([self._encode(entry, features) for entry in self.plan], axis=-1)

    def compute_output_spec(self, features):
        return keras.KerasTensor((None, self.width), dtype="float32")

    def _check_inputs(self, features) -> None:
        if not isinstance(features, dict):
            raise InputError(f"FeatureEncoder takes a dict of features by name, got {type(features).__name__}")
        needed = [entry["feature"] for entry in self.plan]
        needed += [entry["weights"] for entry in self.plan if entry.get("weights")]
        missing = [name for name in needed if name not in features]
        if missing:
            raise InputError(f"FeatureEncoder: features {missing} are missing from its inputs (got {sorted(features)})")

    def get_config(self):
        return {**super().get_config(), "plan": [dict(entry) for entry in self.plan]}

    def _encode(self, entry: dict, features: dict):
        value = features[entry["feature"]]
        if entry["encoding"] == NUMERIC:
            value = _dense(value, 0)
            if "offset" in entry:
                # float64: an epoch second is exact there, and each value is scaled alone (batch-mates do not count)
                value = (tf.cast(value, tf.float64) - entry["offset"]) / entry["scale"]
            return tf.reshape(tf.cast(value, tf.float32), [-1, entry["width"]])
        ids = tf.cast(_id_lists(value), tf.int64)
        present = tf.logical_and(ids >= 0, ids < entry["ids"])
        # Sums over a row's list run in float64, where a few float32 terms add exactly: the padding a batch's longest
        # list gives the others would otherwise change the order of the additions, and a row's last bits with it.
        if entry.get("weights"):
            weights = tf.cast(_id_lists(features[entry["weights"]], 0), tf.float64)
            weights = tf.where(present, weights, 0.0)
        else:
            weights = tf.cast(present, tf.float64)
        if entry["encoding"] == ONE_HOT:
            # tf.one_hot gives a row of zeros for an id outside [0, depth): padding adds nothing.
            columns = tf.reduce_sum(tf.one_hot(ids, entry["ids"], dtype=tf.float64) * weights[..., tf.newaxis], axis=1)
            # Without weights a list is a multi-hot: an id repeated in one row is still one.
            return tf.cast(columns if entry.get("weights") else tf.minimum(columns, 1.0), tf.float32)
        vectors = tf.cast(self.embeddings[entry["feature"]](tf.where(present, ids, 0)), tf.float64)
        total = tf.reduce_sum(vectors * weights[..., tf.newaxis], axis=1)
        return tf.cast(tf.math.divide_no_nan(total, tf.reduce_sum(weights, axis=1, keepdims=True)), tf.float32)


def _id_lists(value, padding=-1):
    """Ids (or their weights) as a dense (batch, length) tensor, `padding` after each row's values."""
    value = _dense(value, padding)
    return value[:, tf.newaxis] if value.shape.rank == 1 else value


def _dense(value, padding):
    if isinstance(value, tf.SparseTensor):
        return tf.sparse.to_dense(value, default_value=tf.cast(padding, value.dtype))
    if isinstance(value, tf.RaggedTensor):
        return value.to_tensor(default_value=tf.cast(padding, value.dtype))
    return tf.convert_to_tensor(value)
