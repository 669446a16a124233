"""Per-key statistics looked up in O(keys + values) memory while a job traces its graph (issue 41 item 11).

tf.Transform's per-key mappers (`scale_to_z_score_per_key`, `scale_to_0_1_per_key`, `scale_by_min_max_per_key`,
`bucketize_per_key`) find each value's key among the analyzed keys with `tf_utils.lookup_key`, which broadcasts
both into a (keys x values) matrix of strings: 100,000 keys against a batch of 16,384 values is 1.6 billion
elements, and a run of 200,000 rows peaked at 20 GB and failed. `lookup_key` here gives the same indices by
sorting the keys' 64-bit hashes once and binary-searching each value's hash, then comparing the strings found (a
value whose hash matches no key, or matches one that is another string, is -1, as tf.Transform's is). Two keys
of one hash (odds about keys^2 / 2^64) are told apart by checking the next key of the sorted order too.

The replacement is installed for the length of a job (`installed`), as the job's other swaps of library
functions are (pipelines/runner/shared_patch.py), so the graph it writes holds these ops; serving runs that
graph and needs nothing of this module.
"""

from __future__ import annotations

import tensorflow as tf
from tensorflow_transform import tf_utils

from skewless.pipelines.runner.shared_patch import SharedPatch

_HASH_BUCKETS = (1 << 63) - 1  # to_hash_bucket_fast's FarmHash64, kept whole as an int64


def lookup_key(query: tf.Tensor, key_vocab: tf.Tensor) -> tf.Tensor:
    """The position of each element of `query` in `key_vocab` (unique keys), -1 where it is none of them: what
    `tf_utils.lookup_key` returns, in memory linear in the keys and the values."""
    with tf.name_scope("skewless_lookup_key"):
        flat, key_vocab = tf.reshape(query, [-1]), tf.reshape(key_vocab, [-1])

        def lookup():
            hashed_vocab, hashed_query = _comparable(key_vocab), _comparable(flat)
            order = tf.argsort(hashed_vocab, stable=True)
            sorted_hashes = tf.gather(hashed_vocab, order)
            last = tf.size(order) - 1
            first = tf.minimum(tf.searchsorted(sorted_hashes, hashed_query, side="left"), last)
            second = tf.minimum(first + 1, last)
            found = tf.fill(tf.shape(flat), tf.constant(-1, tf.int64))
            for candidate in (second, first):  # the first match wins: checked last
                index = tf.cast(tf.gather(order, candidate), tf.int64)
                found = tf.where(tf.equal(tf.gather(key_vocab, index), flat), index, found)
            return found

        result = tf.cond(tf.equal(tf.size(key_vocab), 0), lambda: tf.fill(tf.shape(flat), tf.constant(-1, tf.int64)),
                         lookup)
        result = tf.reshape(result, tf.shape(query))
        result.set_shape(query.shape)
        return result


def _comparable(values: tf.Tensor) -> tf.Tensor:
    """Numbers to sort and search by: a string's 64-bit hash, a number itself."""
    return tf.strings.to_hash_bucket_fast(values, _HASH_BUCKETS) if values.dtype == tf.string else values


_PATCH = SharedPatch([(tf_utils, "lookup_key", lookup_key)])


def installed():
    """A context in which tf.Transform's per-key mappers use `lookup_key`."""
    return _PATCH.installed()
