"""canonicalize: a SavedModel traced after more or less other tracing in the process gets the same bytes,
and computes what TensorFlow's own file computes."""

import shutil

import numpy as np
import tensorflow as tf

from skewless.pipelines.analyze.canonical_graph import canonicalize, renumbered


def save_model(path, vocabulary_file):
    """A module with what tf.Transform graphs hold: a vocabulary table, a branch (cond functions), a map_fn
    (a while loop, whose unused inputs are named after its cond function), captured constants small and large
    (captured by counter-numbered names)."""
    small = tf.constant([1.0, 2.0, 3.0])
    large = tf.range(200, dtype=tf.float32)
    initializer = tf.lookup.TextFileInitializer(
        vocabulary_file, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER
    )

    class Module(tf.Module):
        def __init__(self):
            self.table = tf.lookup.StaticHashTable(initializer, -1)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.float32)])
        def __call__(self, words, x):
            y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * small[0], lambda: x - large[5])
            mapped = tf.map_fn(lambda value: value * 2.0, x)
            return {"id": self.table.lookup(words), "y": y + small[2], "z": tf.reduce_sum(large) + mapped}

    module = Module()
    tf.saved_model.save(module, str(path), signatures=module.__call__)


def test_renumbered_keeps_uniquified_runs_and_ranks_counter_values():
    names = ["inputs", "inputs_1", "inputs_2", "x_2358", "x_17", "arg_0", "arg_5", "plain", "lead_07"]
    assert renumbered(names) == {
        "inputs_1": "inputs_1", "inputs_2": "inputs_2", "x_17": "x_1", "x_2358": "x_2", "arg_0": "arg_0", "arg_5": "arg_1",
    }


def test_same_bytes_whatever_the_process_traced_before(tmp_path):
    vocabulary = tmp_path / "vocabulary.txt"
    vocabulary.write_text("the\ncat\nsat\n")
    save_model(tmp_path / "first", str(vocabulary))
    tf.function(lambda x: x + 1).get_concrete_function(tf.TensorSpec([], tf.float32))  # advances the counters
    save_model(tmp_path / "second", str(vocabulary))
    shutil.copytree(tmp_path / "first", tmp_path / "written")  # as TensorFlow wrote it, for the values
    first, second = (tmp_path / "first" / "saved_model.pb"), (tmp_path / "second" / "saved_model.pb")
    assert first.read_bytes() != second.read_bytes()

    canonicalize(str(tmp_path / "first"))
    canonicalize(str(tmp_path / "second"))
    assert first.read_bytes() == second.read_bytes()
    assert not (tmp_path / "first" / "fingerprint.pb").exists()
    once = first.read_bytes()
    canonicalize(str(tmp_path / "first"))
    assert first.read_bytes() == once

    words = tf.constant(["cat", "dog", "the"])
    for x in (tf.constant([1.0, 2.0, 3.0]), tf.constant([-1.0, -2.0, 0.5])):  # both branches of the cond
        expected = tf.saved_model.load(str(tmp_path / "written")).signatures["serving_default"](words=words, x=x)
        got = tf.saved_model.load(str(tmp_path / "first")).signatures["serving_default"](words=words, x=x)
        assert sorted(got) == sorted(expected) == ["id", "y", "z"]
        for name in expected:
            np.testing.assert_array_equal(got[name].numpy(), expected[name].numpy(), err_msg=name)
