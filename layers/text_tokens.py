"""`TextTokens`: a text_vocabulary column's tokens, as the job's graph makes them."""

from __future__ import annotations

import keras

from skewless.layers.backend_tensors import as_tf
from skewless.layers.raw_value_layer import RawValueLayer
from skewless.ops.text import text_tokens
from skewless.ops.values import as_strings


@keras.saving.register_keras_serializable(package="skewless")
class TextTokens(RawValueLayer):
    """A ``text_vocabulary`` column's texts as a ``tf.SparseTensor`` of their tokens (or n-grams), in text order;
    with ``is_list`` (``list: true``), the list's values as text (integers by their decimal text), as the graph
    looks them up.

    It runs the graph's own tokenizer (`skewless.ops.text.text_tokens`: UTF-8 aware lowercasing, the
    `strip_regex` removal, a split on whitespace, ``tft.ngrams``), so the tokens are the graph's by
    construction. Keras' ``TextVectorization`` is not used: its lowercasing is ASCII only (``tf.strings.lower``
    without an encoding leaves "É" as it is, the graph gives "é") and its n-grams come in another order. A TF
    tensor on every backend, as Keras' ``StringLookup``, which takes it next, runs TensorFlow inside.

    Args:
        lowercase: the feature's `lowercase` option (UTF-8 aware).
        strip_regex: the feature's `strip_regex`: what is removed before the split on whitespace.
        ngram_range: the feature's `ngram_range`, (smallest, largest) n.
        ngram_separator: the feature's `ngram_separator`, between an n-gram's tokens.
        is_list: the column is a list of tokens already (`PresentValues` gives it).

    Examples:
        >>> import tensorflow as tf
        >>> from skewless.layers import TextTokens
        >>> tokens = TextTokens(strip_regex="[[:punct:]]")(["Crème BRÛLÉE, twice!", ""])
        >>> [[token.decode() for token in row] for row in tf.RaggedTensor.from_sparse(tokens).to_list()]
        [['crème', 'brûlée', 'twice'], []]
    """

    def __init__(self, lowercase: bool = True, strip_regex: str | None = None, ngram_range=(1, 1),
                 ngram_separator: str = " ", is_list: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.lowercase = bool(lowercase)
        self.strip_regex = strip_regex
        self.ngram_range = [int(n) for n in ngram_range]
        self.ngram_separator = ngram_separator
        self.is_list = bool(is_list)

    def call(self, inputs):
        if self.is_list:
            return as_strings(inputs)
        options = {"lowercase": self.lowercase, "strip_regex": self.strip_regex, "ngram_range": self.ngram_range,
                   "ngram_separator": self.ngram_separator}
        return text_tokens(as_tf(inputs), options)

    def compute_output_spec(self, inputs):
        return keras.KerasTensor((inputs.shape[0], None), dtype="string", sparse=not self.is_list,
                                 ragged=self.is_list)

    def get_config(self):
        config = super().get_config()
        config.update(lowercase=self.lowercase, strip_regex=self.strip_regex, ngram_range=self.ngram_range,
                      ngram_separator=self.ngram_separator, is_list=self.is_list)
        return config
