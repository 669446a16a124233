"""Text as the graph tokenizes it (`transform: text_vocabulary`): lowercased, stripped, split, n-grams."""

from __future__ import annotations

from skewless.lazy_imports import lazy_import

# on first use: loading a config imports this module (through the transforms' registry) without TensorFlow
tf = lazy_import("tensorflow")
tft = lazy_import("tensorflow_transform")


def text_tokens(value, options: dict):
    """(batch,) texts -> a SparseTensor (batch, n) of tokens or n-grams, in text order."""
    text = value
    if options["lowercase"]:
        text = tf.strings.lower(text, encoding="utf-8")
    if options["strip_regex"]:
        text = tf.strings.regex_replace(text, options["strip_regex"], "")
    words = tf.strings.split(text).to_sparse()
    low, high = options["ngram_range"]
    if (low, high) == (1, 1):
        return words
    return tft.ngrams(words, (low, high), options["ngram_separator"])
