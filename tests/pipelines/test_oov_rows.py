"""run.json's oov_rows per chunk (`_oov_rows`): rows, not values, with a value the vocabulary lacks: an OOV bucket's
id or, without OOV buckets, the vocabulary's unseen id where the written rows tell it apart."""

import pytest
import tensorflow as tf

from skewless.config import FeatureConfig
from skewless.pipelines.write.transform import _oov_rows


def test_rows_not_values_of_a_padded_list():
    ids = tf.constant([[0, 5, 5], [1, -1, -1], [3, 2, 1]], tf.int64)  # vocabulary of 3: 5 and 3 are OOV ids
    assert _oov_rows(ids, 3) == 2


def test_the_unseen_id_of_dense_sparse_and_encoded_ids():
    assert _oov_rows(tf.constant([0, -1, 2, -1, 4], tf.int64), 3, unseen_id=-1) == 3
    assert _oov_rows(tf.constant([0, -1, 2, -1, 4], tf.int64), 3) == 1
    lists = tf.SparseTensor([[0, 0], [0, 1], [2, 0], [3, 0]], tf.constant([1, -1, -1, 0], tf.int64), [4, 2])
    assert _oov_rows(lists, 3, unseen_id=-1) == 2
    one_hot = tf.one_hot(tf.constant([0, -1, 2, 3]), 4)  # 3 vocabulary columns, one OOV column; -1: all zeros
    assert _oov_rows(one_hot, 3, unseen_id=-1) == 2 and _oov_rows(one_hot, 3) == 1


@pytest.mark.parametrize("options, unseen", [
    ({"num_oov_buckets": 0}, -1),
    ({"num_oov_buckets": 0, "default_value": -7}, -7),
    ({"num_oov_buckets": 0, "default_value": 99}, None),  # past the vocabulary: counted as an OOV id is
    ({"num_oov_buckets": 0, "default_value": 1}, None),  # a vocabulary id: the rows cannot tell
    ({"num_oov_buckets": 2}, None),
    ({"num_oov_buckets": 0, "list": True, "max_length": 4}, None),  # -1 pads the list too
    ({"num_oov_buckets": 0, "list": True, "max_length": 4, "pad_value": -9}, -1),
    ({"num_oov_buckets": 0, "list": True, "top_k": 4, "output": "count"}, None),  # an unseen value adds no column
    ({"num_oov_buckets": 0, "top_k": 4, "output": "one_hot"}, -1),
])
def test_the_vocabularys_unseen_id(options, unseen):
    feature = FeatureConfig(transform="vocabulary", **options)
    assert feature.transform_kind.unseen_id(feature) == unseen
