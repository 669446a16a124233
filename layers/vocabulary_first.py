"""`VocabularyFirst`: Keras lookup indices renumbered the way tf.Transform numbers a vocabulary."""

from __future__ import annotations

import keras

from skewless.layers.backend_tensors import ops_for


@keras.saving.register_keras_serializable(package="skewless")
class VocabularyFirst(keras.layers.Layer):
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
        kwargs.setdefault("trainable", False)
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)
        self.vocabulary_size = int(vocabulary_size)
        self.num_oov_buckets = int(num_oov_buckets)
        self.default_value = int(default_value)
        # Inside tf.data the input is a TF tensor whatever the backend; keep it one.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        self.built = True

    def call(self, inputs):
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
