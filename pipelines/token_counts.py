"""A `tft.vocabulary` whose tokens are counted inside the graph, a batch at a time (the `fill:
most_frequent` of pipelines/missing.py; the config's vocabularies share one analyzer instead,
pipelines/vocabularies.py).

Without weights, `tft.vocabulary` hands every token of every row to Beam as an element of its own
(`_flatten_value_to_list`) and counts them with `Count.PerElement`: 8 vocabulary columns over 1M rows
are 8M Python-level elements, most of the analysis pass. With a weight per token, tf.Transform
reduces each batch in the graph first (`unique_with_counts` and a segment sum), so Beam sees one
element per distinct token per batch. A weight of 1 per token makes the weighted count the plain
count, exactly (a batch's sum is an exact float32 below 2**24 tokens and Beam adds the batches in
float64), so the vocabulary's entries, order, `top_k` and `frequency_threshold` are unchanged.
"""

from __future__ import annotations


def unit_weights(tokens):
    """A weight of 1.0 per token of `tokens` (dense, sparse or ragged), flat like tf.Transform reads them."""
    import tensorflow as tf

    if isinstance(tokens, tf.SparseTensor):
        tokens = tokens.values
    elif isinstance(tokens, tf.RaggedTensor):
        tokens = tokens.flat_values
    return tf.ones_like(tf.reshape(tokens, [-1]), dtype=tf.float32)


def vocabulary(tokens, **options):
    """`tft.vocabulary` of `tokens`, counted a batch at a time in the graph."""
    import tensorflow_transform as tft

    return tft.vocabulary(tokens, weights=unit_weights(tokens), **options)

