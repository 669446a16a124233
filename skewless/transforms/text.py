"""`transform: text_vocabulary`: text to token ids, bags of words and TF-IDF, inside the graph.

A text is lowercased (`tf.strings.lower`, UTF-8 aware), stripped of what ``strip_regex`` matches (RE2;
ASCII punctuation by default, removed as Keras' TextVectorization removes it), split on whitespace,
and optionally turned into n-grams (`tft.ngrams`, ``ngram_range``). A tf.Transform vocabulary over
all the tokens (``top_k``, ``frequency_threshold``, ``num_oov_buckets``; unseen tokens hash into the
OOV buckets) maps them to ids. ``output`` says what is written:

- ``ids``: the token ids in text order, a variable-length int64 list (``max_length`` pads with
  ``pad_value``, default -1, or truncates, giving a fixed length);
- ``bag_of_words``: the distinct ids of each text (ascending) and, as ``<name>_weights``, their
  counts (float32), the pair `tf.nn.embedding_lookup_sparse` takes as ids and weights;
- ``tfidf``: the same ids with `tft.tfidf` weights (term frequency times smoothed inverse document
  frequency; the document frequencies are analyzer results over the whole dataset).
"""

from __future__ import annotations

import logging
import re

from skewless.lazy_imports import lazy_import
from skewless.ops.lists import pad_or_truncate
from skewless.transforms.categorical import vocabulary_ids, with_buckets

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")
tft = lazy_import("tensorflow_transform")


def _not_tfidf_retracing_warning(record: logging.LogRecord) -> bool:
    """False for tf.Transform's "Analyzer (tfidf/...) node's cache key varies on repeated tracing", which every
    run with a TF-IDF feature logged, though nothing varies.

    `tft.tfidf` takes the vocabulary size, here the vocabulary analyzer's deferred result (no size is known
    before the analysis). tf.Transform fingerprints each analyzer by the graph paths into it and leaves out
    paths through an analyzer's result; in its final trace that result is a constant, so the document-frequency
    sum analyzer gains a path and the fingerprints differ. The analyzers run in a fixed order, the case the
    warning itself calls safe. Dropped at import, so also in the Beam worker that unpickles preprocessing_fn
    and traces the final graph; any other analyzer's warning is kept.
    """
    return not _TFIDF_RETRACING.match(record.getMessage())


# the name scope of the n-th tft.tfidf call: tfidf/, tfidf_1/, ...
_TFIDF_RETRACING = re.compile(r"Analyzer \(([^()]*/)?tfidf(_\d+)?/[^()]*\) node's cache key varies on repeated tracing")


logging.getLogger("absl").addFilter(_not_tfidf_retracing_warning)


def text_features(name: str, tokens, vocabulary, options: dict) -> dict:
    """The transformed features of a text column from its `text_tokens` and the deferred path of their
    vocabulary: {name: ids} and, for a bag of words, {name_weights: ...}."""
    ids = vocabulary_ids(tft.apply_vocabulary(tokens, vocabulary, num_oov_buckets=options["num_oov_buckets"]))
    num_buckets = tft.get_num_buckets_for_transformed_feature(ids)
    if options["output"] == "ids":
        if options["max_length"] is not None:
            return {name: with_buckets(pad_or_truncate(ids, options["max_length"], options["pad_value"]), num_buckets)}
        return {name: ids}
    if options["num_oov_buckets"] == 0:
        # a token the vocabulary lacks has id -1 without OOV buckets: no bucket, so no count, and no part of
        # the text's length in TF-IDF (bincount refuses negative ids)
        ids = tf.sparse.retain(ids, ids.values >= 0)
    if options["output"] == "tfidf":
        # tft.tfidf squeezes its per-term document counts: with fewer than two buckets (an empty or one-token
        # vocabulary without OOV buckets) that vector becomes a scalar and the graph cannot be built. Weights are
        # per term id, so a bucket no id reaches changes none of them.
        distinct, weights = tft.tfidf(ids, tf.maximum(num_buckets, 2), smooth=options["smooth"])
        return {name: with_buckets(distinct, num_buckets), f"{name}_weights": weights}
    counts = tf.sparse.bincount(ids, axis=-1)  # (batch, vocabulary) counts, ids ascending within a row
    return {name: with_buckets(_per_row(counts, counts.indices[:, 1]), num_buckets),
            f"{name}_weights": _per_row(counts, tf.cast(counts.values, tf.float32))}


def _per_row(matrix, values):
    """`values` (one per entry of a (batch, vocabulary) SparseTensor) as a (batch, n) list per row."""
    ragged = tf.RaggedTensor.from_value_rowids(values, matrix.indices[:, 0], nrows=matrix.dense_shape[0])
    return ragged.to_sparse()
