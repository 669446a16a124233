"""Issue 40, goal 5: serving_default appends a padding record chosen at export time to every request (instead of
the request's first row once more), and keeps each promise of the export: a row served alone gives its bits in a
batch, an empty request gives empty outputs, a bad record is named by its batch position. Where the graph refuses
every padding row, or an output's length depends on the batch, the request is parsed as it is."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow_metadata.proto.v0 import statistics_pb2

from skewless.layers import TransformLayer, export_serving_model, model_inputs, serialize_raw_examples
from skewless.layers import export as export_module
from skewless.layers.padded_request import MAX_TEXT_BYTES, padding_rows
from skewless.pipelines.reading.synthetic_rows import synthetic_rows
from skewless.statistics_files import feature_name, read_statistics


@pytest.fixture(scope="module")
def dense_model(example_run):
    keras.utils.set_random_seed(5)
    inputs, encoded = model_inputs(example_run.output_dir)
    hidden = keras.layers.Dense(16, activation="relu")(encoded)
    return keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(hidden))


@pytest.fixture(scope="module")
def served(example_run, dense_model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("padded") / "export"
    return tf.saved_model.load(str(export_serving_model(example_run.output_dir, dense_model, folder)))


@pytest.fixture(scope="module")
def records(example_run):
    spec = TransformLayer(example_run.output_dir).raw_feature_spec
    rows = [row for _, table in synthetic_rows(11, 0, 60) for row in table.to_pylist()]
    return serialize_raw_examples([{k: v for k, v in row.items() if k != "label"} for row in rows],
                                  {name: s for name, s in spec.items() if name != "label"})


def _serve(loaded, records):
    return loaded.signatures["serving_default"](examples=tf.constant(records, tf.string))["output_0"].numpy()


def _string_constants(loaded) -> list[bytes]:
    """Every one-element string constant of serving_default's graph and the functions it calls."""
    graph_def = loaded.signatures["serving_default"].graph.as_graph_def()
    nodes = list(graph_def.node) + [node for function in graph_def.library.function for node in function.node_def]
    return [node.attr["value"].tensor.string_val[0] for node in nodes
            if node.op == "Const" and node.attr["dtype"].type == tf.string.as_datatype_enum
            and len(node.attr["value"].tensor.string_val) == 1]


def _padding_examples(loaded) -> list[tf.train.Example]:
    found = []
    for value in _string_constants(loaded):
        try:
            example = tf.train.Example.FromString(value)
        except Exception:  # noqa: BLE001 - most string constants are no Example
            continue
        if len(example.features.feature) > 1:
            found.append(example)
    return found


def test_the_padding_record_holds_the_required_features_at_their_typical_values(example_run, served):
    """The graph holds one padding record: each required raw feature at its median (a number, an int rounded) or
    most frequent value (text) in the run's train statistics, the optional features absent."""
    (example,) = _padding_examples(served)
    spec = TransformLayer(example_run.output_dir).raw_feature_spec
    required = {name for name, s in spec.items()
                if name != "label" and isinstance(s, tf.io.FixedLenFeature) and s.default_value is None}
    assert set(example.features.feature) == required
    statistics = {feature_name(f): f for f in read_statistics(example_run.output_dir, "train").features}
    for name in required:
        feature, stats = example.features.feature[name], statistics[name]
        if spec[name].dtype == tf.string:
            assert feature.bytes_list.value == [stats.string_stats.top_values[0].value.encode()], name
        elif spec[name].dtype.is_floating:
            assert feature.float_list.value == [pytest.approx(stats.num_stats.median, rel=1e-6)], name
        else:
            assert feature.int64_list.value == [round(stats.num_stats.median)], name


def test_a_row_alone_gives_its_bits_in_a_batch(served, records):
    batched = _serve(served, records)
    for index in range(len(records)):
        np.testing.assert_array_equal(_serve(served, records[index:index + 1])[0], batched[index],
                                      err_msg=f"row {index}")
    np.testing.assert_array_equal(_serve(served, records[::-1])[::-1], batched)
    assert batched.shape == (len(records), 1)


def test_the_padding_row_changes_no_output(served, dense_model, example_run, records):
    """The outputs are the model's own on the graph's output (no row of the padding among them)."""
    from skewless.layers.export import parse_raw_examples

    layer = TransformLayer(example_run.output_dir)
    spec = {name: s for name, s in layer.raw_feature_spec.items() if name != "label"}
    transformed = layer(parse_raw_examples(tf.constant(records), spec))
    fed = export_module._feed(dense_model, transformed)  # the export's own casts and trailing axes
    np.testing.assert_allclose(_serve(served, records), dense_model.predict(fed, verbose=0), rtol=0, atol=1e-6)


def test_an_empty_request_gives_empty_outputs(served):
    assert _serve(served, []).shape == (0, 1)


def test_a_bad_record_is_named_by_its_batch_position(served, records):
    with pytest.raises(tf.errors.InvalidArgumentError, match="example id: batch position 1"):
        _serve(served, [records[0], b"not a record \x01", records[1]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="example id: batch position 0"):
        _serve(served, [b"not a record \x01"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="is required but could not be found"):
        _serve(served, [records[0], tf.train.Example().SerializeToString()])


def test_a_refused_padding_row_falls_back_to_the_request_as_it_is(example_run, dense_model, records, tmp_path,
                                                                   monkeypatch):
    """Where the graph refuses every padding row (here one missing a required feature), serving_default parses
    the request as it is: no padding record in the graph, the same outputs, the same promises."""
    required = padding_rows(TransformLayer(example_run.output_dir).raw_feature_spec, {}, None)[0]
    dropped = sorted(required)[0]
    monkeypatch.setattr(export_module, "padding_rows",
                        lambda *args: [{name: value for name, value in required.items() if name != dropped}])
    loaded = tf.saved_model.load(str(export_serving_model(example_run.output_dir, dense_model, tmp_path / "first")))
    assert _padding_examples(loaded) == []
    batched = _serve(loaded, records)
    np.testing.assert_array_equal(_serve(loaded, records[2:3])[0], batched[2])
    assert _serve(loaded, []).shape == (0, 1)


def _spec():
    return {"n": tf.io.FixedLenFeature([], tf.int64), "x": tf.io.FixedLenFeature([3], tf.float32),
            "s": tf.io.FixedLenFeature([], tf.string), "d": tf.io.FixedLenFeature([], tf.int64, default_value=4),
            "o": tf.io.VarLenFeature(tf.string)}


def _statistics(**medians_and_tops):
    dataset = statistics_pb2.DatasetFeatureStatistics()
    for name, value in medians_and_tops.items():
        feature = dataset.features.add()
        feature.path.step.append(name)
        if isinstance(value, str):
            feature.string_stats.top_values.add(value=value, frequency=3)
        else:
            feature.num_stats.median = value
    return dataset


def test_padding_rows_take_the_statistics_then_zeros():
    fixed = {"out": tf.io.FixedLenFeature([], tf.float32)}
    rows = padding_rows(_spec(), fixed, _statistics(n=41.6, x=2.5, s="Private", o="ignored"))
    assert rows == [{"n": 42, "x": [2.5, 2.5, 2.5], "s": "Private"}, {"n": 0, "x": [0.0, 0.0, 0.0], "s": "0"}]
    # without statistics the two candidates are one
    assert padding_rows(_spec(), fixed, None) == [{"n": 0, "x": [0.0, 0.0, 0.0], "s": "0"}]


def test_a_long_most_frequent_value_is_not_a_padding_value():
    """Each request parses and transforms the padding record: an image or a document as its value would cost
    every call more than the padding saves."""
    fixed = {"out": tf.io.FixedLenFeature([], tf.float32)}
    rows = padding_rows(_spec(), fixed, _statistics(n=1.0, s="x" * (MAX_TEXT_BYTES + 1)))
    assert rows[0]["s"] == "0"
    assert padding_rows(_spec(), fixed, _statistics(s="é" * (MAX_TEXT_BYTES // 2)))[0]["s"] == "é" * (MAX_TEXT_BYTES // 2)


def test_statistics_of_another_kind_or_out_of_range_give_zeros():
    """A median that is no int64 value (NaN, past the range) and statistics of the other kind than the feature's
    dtype are not padding values: the zero stands."""
    fixed = {"out": tf.io.FixedLenFeature([], tf.float32)}
    rows = padding_rows(_spec(), fixed, _statistics(n=float("nan"), x=float("inf"), s=3.0))
    assert rows == [{"n": 0, "x": [0.0, 0.0, 0.0], "s": "0"}]
    assert padding_rows(_spec(), fixed, _statistics(n=1e30, x="text"))[0] == {"n": 0, "x": [0.0, 0.0, 0.0], "s": "0"}


@pytest.mark.parametrize("transformed", [
    {"out": tf.io.VarLenFeature(tf.int64)},
    {"out": tf.io.RaggedFeature(tf.int64, value_key="out")},
])
def test_no_padding_row_where_an_output_has_no_fixed_length(transformed):
    assert padding_rows(_spec(), transformed, None) == []


def test_no_padding_row_for_sequence_examples():
    spec = dict(_spec(), steps=tf.io.RaggedFeature(tf.float32, value_key="steps"))
    assert padding_rows(spec, {"out": tf.io.FixedLenFeature([], tf.float32)}, None) == []
