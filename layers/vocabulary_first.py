"""`VocabularyFirst` and `VocabularyFirstColumns`: Keras lookup indices (or encoded columns) renumbered the way
tf.Transform numbers a vocabulary."""

from __future__ import annotations

import keras
import tensorflow as tf

from skewless.layers.backend_tensors import as_tf, ops_for, to_backend
from skewless.layers.raw_value_layer import RawValueLayer


@keras.saving.register_keras_serializable(package="skewless")
class VocabularyFirst(RawValueLayer):
    """Moves the OOV indices of a `StringLookup` / `IntegerLookup` after the vocabulary.

    Keras numbers the ``num_oov_indices`` OOV buckets first (``0 .. k-1``) and the vocabulary after
    them (``k .. k+n-1``); ``tft.compute_and_apply_vocabulary`` numbers the vocabulary first
    (``0 .. n-1``) and its OOV buckets after it (``n .. n+k-1``), both hashing an unseen value into
    bucket ``FarmHash64(value) % k``. This layer maps the first numbering onto the second. With
    ``num_oov_buckets=0`` tf.Transform gives unseen values its ``default_value`` (-1 unless the config
    names one): the lookup then has one OOV index (``num_oov_indices=1``) and this layer maps it there.

    Args:
        vocabulary_size: ``n``, the number of vocabulary entries.
        num_oov_buckets: ``k``, tf.Transform's OOV bucket count (the lookup has ``max(k, 1)``).
        default_value: the id of an unseen value when ``k`` is 0.

    Examples:
        "b" is line 1 of the vocabulary file; "zzz" is unseen: one of the two OOV buckets after the vocabulary,
        the one tf.Transform's lookup gives it.

        >>> import keras
        >>> import tensorflow as tf
        >>> from skewless.layers import VocabularyFirst
        >>> lookup = keras.layers.StringLookup(vocabulary=["a", "b", "c"], num_oov_indices=2)
        >>> ids = VocabularyFirst(vocabulary_size=3, num_oov_buckets=2)(lookup(["b", "zzz"]))
        >>> keras.ops.convert_to_numpy(ids).tolist()
        [1, 3]
        >>> table = tf.lookup.StaticVocabularyTable(
        ...     tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], tf.range(3, dtype=tf.int64)), num_oov_buckets=2)
        >>> table.lookup(tf.constant(["b", "zzz"])).numpy().tolist()   # tf.Transform's lookup
        [1, 3]
    """

    def __init__(self, vocabulary_size: int, num_oov_buckets: int, default_value: int = -1, **kwargs):
        super().__init__(**kwargs)
        self.vocabulary_size = int(vocabulary_size)
        self.num_oov_buckets = int(num_oov_buckets)
        self.default_value = int(default_value)

    def call(self, inputs):
        # a list's ids (a text's tokens): the same renumbering of its values
        if isinstance(inputs, tf.SparseTensor):
            return tf.SparseTensor(inputs.indices, self.call(inputs.values), inputs.dense_shape)
        if isinstance(inputs, tf.RaggedTensor):
            return inputs.with_flat_values(self.call(inputs.flat_values))
        if self.num_oov_buckets == 0:
            if self.default_value == -1:  # the OOV index 0 minus 1
                return inputs - 1
            ops = ops_for(inputs)
            shifted = inputs - 1
            return ops.where(inputs == 0, ops.zeros_like(shifted) + self.default_value, shifted)
        oov = self.num_oov_buckets
        return ops_for(inputs).where(inputs < oov, inputs + self.vocabulary_size, inputs - oov)

    def compute_output_spec(self, inputs):
        return keras.KerasTensor(inputs.shape, dtype=inputs.dtype)

    def get_config(self):
        config = super().get_config()
        config.update(vocabulary_size=self.vocabulary_size, num_oov_buckets=self.num_oov_buckets,
                      default_value=self.default_value)
        return config


@keras.saving.register_keras_serializable(package="skewless")
class VocabularyFirstColumns(RawValueLayer):
    """Moves the OOV columns of an encoding `StringLookup` / `IntegerLookup` after the vocabulary's.

    What `VocabularyFirst` does to ids, this does to a lookup's ``multi_hot`` or ``count`` columns (its
    ``output_mode``): Keras' columns are ``[OOV 0..k-1, vocabulary 0..n-1]``, tf.Transform's (output
    ``multi_hot`` / ``count`` of skewless/transforms/encoded.py) are ``[vocabulary, OOV, zeros up to width]``,
    float32. With ``num_oov_buckets=0`` the lookup's one OOV column holds the unseen values, which the graph
    gives id `default_value`: their column, or none when it lies outside ``[0, width)`` (-1). Only whole
    numbers are moved, added (``count``) or maxed (``multi_hot``): exact on every backend.

    Args:
        vocabulary_size: ``n``, the number of vocabulary entries.
        num_oov_buckets: ``k``, tf.Transform's OOV bucket count (the lookup has ``max(k, 1)``).
        width: the graph's number of columns (``top_k + num_oov_buckets``).
        default_value: the id of an unseen value when ``k`` is 0.
        output_mode: "multi_hot" or "count", as the lookup's.

    Examples:
        Row 0 holds "b" twice and the unseen "zzz" (which both hash into OOV bucket 0), row 1 is an empty list;
        3 vocabulary columns, 2 OOV, 1 of padding (the data had fewer than top_k values):

        >>> import keras
        >>> import tensorflow as tf
        >>> from skewless.layers import VocabularyFirstColumns
        >>> lookup = keras.layers.StringLookup(vocabulary=["a", "b", "c"], num_oov_indices=2, output_mode="count")
        >>> counts = lookup(tf.ragged.constant([["b", "zzz", "b"], []]))
        >>> columns = VocabularyFirstColumns(vocabulary_size=3, num_oov_buckets=2, width=6)(counts)
        >>> keras.ops.convert_to_numpy(columns).tolist()
        [[0.0, 2.0, 0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]
        >>> table = tf.lookup.StaticVocabularyTable(
        ...     tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], tf.range(3, dtype=tf.int64)), num_oov_buckets=2)
        >>> tf.math.bincount(table.lookup(tf.constant(["b", "zzz", "b"])), minlength=6).numpy().tolist()  # tf.Transform
        [0, 2, 0, 1, 0, 0]
    """

    def __init__(self, vocabulary_size: int, num_oov_buckets: int, width: int, default_value: int = -1,
                 output_mode: str = "count", **kwargs):
        super().__init__(**kwargs)
        self.vocabulary_size = int(vocabulary_size)
        self.num_oov_buckets = int(num_oov_buckets)
        self.width = int(width)
        self.default_value = int(default_value)
        self.output_mode = output_mode
        if self.width < self.vocabulary_size + self.num_oov_buckets:
            raise ValueError(f"width {width} is less than {vocabulary_size} vocabulary and {num_oov_buckets} OOV "
                             "columns")

    def call(self, inputs):
        columns = tf.cast(as_tf(inputs), tf.float32)
        size, oov, lookup_oov = self.vocabulary_size, self.num_oov_buckets, max(self.num_oov_buckets, 1)
        padding = tf.zeros(tf.stack([tf.shape(columns)[0], self.width - size - oov]), tf.float32)
        result = tf.concat([columns[:, lookup_oov:lookup_oov + size], columns[:, :oov], padding], axis=1)
        if oov == 0 and 0 <= self.default_value < self.width:
            unseen = columns[:, :1] * tf.one_hot(self.default_value, self.width)
            result = result + unseen if self.output_mode == "count" else tf.maximum(result, unseen)
        return to_backend(result)

    def compute_output_spec(self, inputs):
        return keras.KerasTensor((inputs.shape[0], self.width), dtype="float32")

    def get_config(self):
        config = super().get_config()
        config.update(vocabulary_size=self.vocabulary_size, num_oov_buckets=self.num_oov_buckets, width=self.width,
                      default_value=self.default_value, output_mode=self.output_mode)
        return config
