"""docs/values.md, "Floats are float32, everywhere": tf.train.Example cannot carry float64, so a float column is
float32 in the raw spec the graph and serving parse, and int64 carries 64 bits exactly."""

import numpy as np
import tensorflow as tf

from skewless.pipelines.reading.columns import RawColumn


def test_a_float_list_holds_float32_only():
    values = tf.train.FloatList(value=[0.1, 16777217.0]).value
    assert values[0] != 0.1 and values[0] == np.float32(0.1) == 0.10000000149011612
    assert values[1] == 16777216.0
    assert tf.train.Int64List(value=[2**62 + 1]).value[0] == 2**62 + 1


def test_float_columns_are_parsed_as_float32():
    assert RawColumn("x", "float").feature_spec() == tf.io.FixedLenFeature([], tf.float32)
    assert RawColumn("x", "float", optional=True).feature_spec() == tf.io.VarLenFeature(tf.float32)
