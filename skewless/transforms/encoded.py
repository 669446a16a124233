"""`output: one_hot | multi_hot | count` of `vocabulary` and `hash`: ids encoded as Keras' `CategoryEncoding` does.

One float32 column per id, `width` of them (a vocabulary: `top_k + num_oov_buckets`; a hash: `hash_buckets`):
`one_hot` puts 1 in the row's id column; `multi_hot` 1 in the column of each id of a list row, `count` how often
each id occurs in it. Column i is id i, so the columns follow the ids: a vocabulary's values first (most frequent
or most informative first), then its OOV buckets, then, when the data had fewer than `top_k` values, columns no id
reaches (always 0), as `StringLookup(pad_to_max_tokens=True)` pads. An unseen value without OOV buckets gets
its `default_value` id's column, and with none (-1), or one outside the width, a row of zeros.

The width must be a number before the analysis: tf.Transform writes a fixed-size feature only for a shape it
knows when it traces the graph, and a vocabulary's size is known only after it, so a vocabulary needs `top_k`.
The shared `output` option (text_vocabulary's too) holds every transform's values; each refuses the others.
"""

from __future__ import annotations

from typing import Literal

from skewless.lazy_imports import lazy_import

# on first use: loading a config reads this registry without TensorFlow; a builder loads what it calls
tf = lazy_import("tensorflow")
keras = lazy_import("keras")

ENCODINGS = ("one_hot", "multi_hot", "count")
# why the native preprocessor refuses an output of var-len lists
VAR_LEN_OUTPUT = "which the native preprocessor does not give (one dense tensor per feature)"
# the `output` field every transform taking it shares (a config field has one type): ids, and text_vocabulary's
# bags and vocabulary's and hash's encodings
OUTPUT_VALUES = Literal["ids", "bag_of_words", "tfidf", "one_hot", "multi_hot", "count"]


def check_encoding(feature, allowed: tuple[str, ...]) -> str | None:
    """What is wrong with `feature.output` for a transform taking `allowed` values, or None."""
    if feature.output not in allowed:
        return f"output {feature.output} does not apply to transform {feature.transform} ({' | '.join(allowed)})"
    if feature.output not in ENCODINGS:
        return None
    if feature.sequence:
        return f"output {feature.output} encodes one row's ids; a feature list (sequence: true) has steps"
    if feature.output == "one_hot" and feature.is_list:
        return "output one_hot takes one value per row; a list takes multi_hot or count"
    if feature.max_length is not None:
        return f"max_length pads ids; output {feature.output} is a fixed width already"
    return None


def encode(ids, width: int, mode: str):
    """`ids` (int64: one per row, or a sparse/ragged list per row) as float32 columns `[batch, width]`."""
    if isinstance(ids, tf.SparseTensor):
        ids = tf.RaggedTensor.from_sparse(ids)
    if not isinstance(ids, tf.RaggedTensor):
        # tf.one_hot gives a row of zeros for an id outside [0, width): -1 included
        hot = tf.one_hot(ids, width, dtype=tf.float32)
        return tf.reshape(hot, [-1, width])
    # -1 pads the shorter lists and has no column
    counts = tf.reduce_sum(tf.one_hot(ids.to_tensor(default_value=-1), width, dtype=tf.float32), axis=1)
    counts = tf.reshape(counts, [-1, width])
    return counts if mode == "count" else tf.minimum(counts, 1.0)


def native_encoding(plan, graph) -> str | None:
    """Appends Keras' `CategoryEncoding` to `plan.layers` (the ids of one value per row) when the graph one-hot
    encodes them; the reason it cannot otherwise. One id per row is encoded alike by `one_hot`, `multi_hot` and
    `count`: `CategoryEncoding(output_mode="one_hot")` gives tf.one_hot's rows, an id of -1 all zeros on every
    backend. Lists take `list_width` instead."""
    if not graph.one_hot_depths:
        return None
    if len(graph.one_hot_depths) != 1 or graph.one_hot_depths[0] is None:
        return "the graph encodes its ids otherwise than output: one_hot does"
    plan.layers = [*plan.layers, keras.layers.CategoryEncoding(
        num_tokens=int(graph.one_hot_depths[0]), output_mode="one_hot", name=f"{plan.layer_name}_encoding")]
    return None


def list_width(plan, graph) -> tuple[int | None, str | None]:
    """(the number of columns, None) for a list column the graph encodes as its `output: multi_hot | count`
    says, whose lookup or hashing layer then encodes it (``output_mode``); (None, why not) otherwise."""
    output = plan.options.get("output")
    if output not in ("multi_hot", "count"):
        return None, f"a list's ids are a var-len output, {VAR_LEN_OUTPUT}: output multi_hot or count is built"
    if len(graph.one_hot_depths) != 1 or graph.one_hot_depths[0] is None:
        return None, f"the graph encodes its ids otherwise than output: {output} does"
    return int(graph.one_hot_depths[0]), None
