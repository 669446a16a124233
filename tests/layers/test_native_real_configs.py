"""The native preprocessor on the transforms real configs use (issue 31): clip, log, scale_by_min_max with a
range, fill: median / most_frequent, missing indicators and a cross, each equal to the graph (TF backend;
JAX: test_keras_preprocessor_jax.py), and the refusals naming the option as a config writes it."""

import json

import keras
import numpy as np
import tensorflow as tf
from example_job import NATIVE_FEATURES, ODD_ROWS, REPO, example_rows

from skewless.config import FeatureConfig
from skewless.layers import (
    FillMissing,
    Log1p,
    MissingIndicator,
    NativePreprocessor,
    TransformLayer,
    check_preprocessor,
    keras_preprocessor,
    raw_feature_batch,
    transform_raw_rows,
)
from skewless.layers.keras_preprocessor import unhandled_options
from skewless.transforms import TRANSFORMS, portable_table

OUTPUTS = [*NATIVE_FEATURES, "capital_gain_missing", "occupation_missing"]


def test_every_real_config_transform_equals_the_graph(native_run):
    check = check_preprocessor(native_run.output_dir, rows=example_rows(1000) + ODD_ROWS, sample=1500)

    assert sorted(f.name for f in check.features) == sorted(OUTPUTS)
    assert check.not_exact() == {}
    for feature in check.features:
        assert (feature.status, feature.differences, feature.rows) == ("exact", 0, 1000 + len(ODD_ROWS) + 1500)


def test_fills_of_ints_floats_and_strings_with_infinities_missing_equal_the_graph(gaps_job):
    from example_job import GAPS_FEATURES

    result, rows = gaps_job
    check = check_preprocessor(result.output_dir, rows=rows, sample=1500)

    outputs = [*GAPS_FEATURES, "x_missing", "f_missing"]
    assert sorted(f.name for f in check.features) == sorted(outputs)
    assert check.not_exact() == {}
    preprocessor = keras_preprocessor(result.output_dir)
    k = preprocessor.feature_layers["k"][0]
    present = [row["k"] for row in rows if row["k"] is not None]
    assert k.cast_to == "float32" and np.float32(k.default) == np.float32(np.mean(present, dtype=np.float64))
    f = preprocessor.feature_layers["f"][0]
    assert (f.default, f.nonfinite) == (2.25, "missing")


def test_layers_hold_the_configs_values(native_run):
    """The layers against NumPy: the clip bounds, the median fill, the most frequent occupation, the range."""
    preprocessor = keras_preprocessor(native_run.output_dir)
    layers = preprocessor.feature_layers

    assert [type(layer).__name__ for layer in layers["age"]] == ["Clip", "Log1p", "Standardize"]
    assert (layers["age"][0].low, layers["age"][0].high) == (18.0, 80.0)
    assert [type(layer).__name__ for layer in layers["hours_per_week"]] == ["Standardize", "Rescaling"]
    assert layers["hours_per_week"][1].scale == 0.7 - 0.1 and layers["hours_per_week"][1].offset == 0.1
    assert isinstance(layers["capital_gain_missing"][0], MissingIndicator)
    assert preprocessor.feature_specs["workclass_x_occupation"]["inputs"] == ["workclass", "occupation"]
    assert isinstance(layers["workclass_x_occupation"][0], keras.layers.HashedCrossing)


def test_fills_are_the_data_median_and_most_frequent(native_run):
    from collections import Counter

    from skewless.pipelines.reading.synthetic_rows import synthetic_rows

    rows = [row for _, table in synthetic_rows(7, 0, 1500) for row in table.to_pylist()]
    preprocessor = keras_preprocessor(native_run.output_dir)
    gain = preprocessor.feature_layers["capital_gain"][0]
    occupation = preprocessor.feature_layers["occupation"][0]
    assert isinstance(gain, FillMissing) and isinstance(occupation, FillMissing)

    present = np.array([row["capital_gain"] for row in rows if row["capital_gain"] is not None], np.float32)
    present = present[~np.isnan(present)]
    # tft.quantiles' median: within 0.1% of rank of the exact one
    rank = np.searchsorted(np.sort(present), np.float32(gain.default), side="right") / len(present)
    assert abs(rank - 0.5) <= 0.01 or np.float32(gain.default) == np.median(present)
    counts = Counter(row["occupation"] for row in rows if row["occupation"] not in (None, ""))
    top = max(counts.values())
    assert occupation.default == max(value.decode() for value, count in counts.items() if count == top)


def test_outputs_equal_numpy_for_log_range_and_indicators(native_run):
    run_dir = native_run.output_dir
    rows = example_rows(600) + ODD_ROWS
    graph = TransformLayer(run_dir)
    spec = {name: value for name, value in graph.raw_feature_spec.items() if name != graph.label}
    preprocessor = keras_preprocessor(run_dir)
    out = {name: np.asarray(value) for name, value in preprocessor(raw_feature_batch(rows, spec)).items()}

    age = preprocessor.feature_layers["age"][2]
    logged = np.log1p(np.clip(np.array([row["age"] for row in rows], np.float32), 18, 80).astype(np.float64))
    expected = (logged.astype(np.float32) - np.float32(age.center)) / np.float32(age.scale)
    np.testing.assert_array_equal(out["age"].view(np.uint32), expected.view(np.uint32))

    hours = preprocessor.feature_layers["hours_per_week"][0]
    scaled = (np.array([row["hours_per_week"] for row in rows], np.float32) - np.float32(hours.center)) / np.float32(
        hours.scale)
    expected = scaled * np.float32(0.7 - 0.1) + np.float32(0.1)
    np.testing.assert_array_equal(out["hours_per_week"].view(np.uint32), expected.view(np.uint32))

    missing = [int(row["capital_gain"] is None or np.isnan(row["capital_gain"])) for row in rows]
    np.testing.assert_array_equal(out["capital_gain_missing"], missing)
    np.testing.assert_array_equal(out["occupation_missing"], [int(row["occupation"] in (None, "")) for row in rows])
    assert out["occupation_missing"][-2:].tolist() == [1, 0]  # ODD_ROWS: missing, then "unknown"

    filled = [row["occupation"] or preprocessor.feature_layers["occupation"][0].default for row in rows]
    pairs = [[row["workclass"] for row in rows], filled]
    crossed = tf.sparse.to_dense(tf.sparse.cross_hashed([tf.constant(v)[:, None] for v in pairs], 50)).numpy()[:, 0]
    np.testing.assert_array_equal(out["workclass_x_occupation"], crossed)


def test_new_layers_round_trip_their_config(native_run):
    preprocessor = keras_preprocessor(native_run.output_dir)
    rebuilt = NativePreprocessor.from_config(json.loads(json.dumps(preprocessor.get_config())))
    rows = example_rows(200) + ODD_ROWS
    graph = transform_raw_rows(native_run.output_dir, rows)
    spec = {name: value for name, value in TransformLayer(native_run.output_dir).raw_feature_spec.items()
            if name != "label"}
    outputs = rebuilt(raw_feature_batch(rows, spec))
    for name in OUTPUTS:
        value = np.asarray(outputs[name])
        if value.dtype == object:  # strings: compared as values, not as the pointers an object array holds
            assert value.tolist() == graph[name].tolist(), name
        else:
            assert value.tobytes() == graph[name].tobytes(), name
    for layer in (Log1p(), MissingIndicator("missing", ["NA"]), FillMissing(1.5, cast_to="float32")):
        config = layer.get_config()
        assert type(layer).from_config(config).get_config() == config


def test_the_portable_page_holds_the_registrys_table():
    page = (REPO / "docs" / "portable.md").read_text()
    assert portable_table() in page, "docs/portable.md's table differs from skewless.transforms.portable_table()"
    for name, transform in TRANSFORMS.items():
        row = portable_table().split(f"| `{name}` |")[1].split("\n")[0]
        assert row.startswith(" refused: ") == (transform.native_ops is None), name


def test_refusals_name_the_option_as_the_config_writes_it():
    assert unhandled_options(FeatureConfig(transform="z_score", list=True)) == ["list"]
    assert unhandled_options(FeatureConfig(transform="scale_by_min_max", range=[0, 2], key="workclass")) == ["key"]
    assert unhandled_options(FeatureConfig(transform="scale_by_min_max", range=[0, 2], clip=[0, 9])) == []
