"""keras_preprocessor: a run's analysis as Keras layers that equal its transform graph bit for bit (TF backend).

The JAX backend is tested in test_keras_preprocessor_jax.py (a subprocess: the backend is fixed at import).
"""

import csv
import json
import os
import zipfile
from collections import Counter

import keras
import numpy as np
import pytest
import tensorflow as tf
from example_job import EXAMPLE_CONFIG, example_config
from example_job import CENSUS_COLUMNS, CENSUS_NUMERIC
from example_job import ODD_ROWS, example_rows

from skewless.errors import NotPortableError
from skewless.layers import (
    NativePreprocessor,
    Standardize,
    TransformLayer,
    check_preprocessor,
    export_keras_preprocessor,
    keras_preprocessor,
    raw_feature_batch,
    raw_inputs,
    serialize_raw_examples,
    transform_raw_rows,
)
from skewless.layers.graph_analyzers import Constant, GraphFeature
from skewless.layers.keras_preprocessor import plan_preprocessor
from skewless.layers.native_plan import plan_feature
from skewless.layers.probe_rows import probe_rows

# Transforms the example run lacks, and two that have no exact Keras equivalent.
EDGE_FEATURES = {
    "age": {"transform": "hash", "hash_buckets": 8},  # integers hash their decimal text
    "hours_per_week": {"transform": "vocabulary", "num_oov_buckets": 3},  # IntegerLookup, 3 hashed OOV buckets
    "fnlwgt": {"transform": "hash", "hash_buckets": 8},  # floats: refused
    "capital_gain": {"transform": "passthrough", "default": 1.5},
    "workclass": {"transform": "vocabulary", "num_oov_buckets": 0},  # unseen values -> -1
    "education": {"transform": "passthrough"},
    "occupation": {"transform": "hash", "hash_buckets": 5, "default": "none"},
    "native_country": {"transform": "vocabulary", "frequency_threshold": 3, "num_oov_buckets": 4},
}


def extra_features(inputs, outputs):
    """The edge run's preprocessing_fn: one output that is not a declarative transform."""
    return {"age_squared": tf.cast(inputs["age"] * inputs["age"], tf.float32)}


@pytest.fixture(scope="module")
def run_dir(example_run):
    return example_run.output_dir


@pytest.fixture(scope="module")
def edge_run_dir(tmp_path_factory):
    from skewless.pipelines import run

    config = example_config(tmp_path_factory.mktemp("edge") / "run", features=EDGE_FEATURES,
                            input={"format": "synthetic", "rows": 300, "seed": 5},
                            preprocessing_fn="test_keras_preprocessor:extra_features")
    return run(config).output_dir


def serving_spec(run_dir):
    layer = TransformLayer(run_dir)
    return {name: spec for name, spec in layer.raw_feature_spec.items() if name != layer.label}


def layer_of(preprocessor, feature, kind):
    return next(layer for layer in preprocessor.feature_layers[feature] if isinstance(layer, kind))


def layer_of_plan(plans, feature, kind):
    return next(layer for layer in plans[feature].layers if isinstance(layer, kind))


def float_bits(values):
    return np.asarray(values, dtype=np.float32).view(np.uint32)


def test_every_feature_matches_the_graph_bit_for_bit(run_dir):
    check = check_preprocessor(run_dir, rows=example_rows(1000) + ODD_ROWS, sample=1000)

    assert check.backend == "tensorflow"
    assert check.rows == 1000 + len(ODD_ROWS) + 1000
    assert sorted(f.name for f in check.features) == sorted(EXAMPLE_CONFIG["features"])
    assert check.not_exact() == {}
    assert check.exact
    for feature in check.features:
        assert (feature.status, feature.differences, feature.rows) == ("exact", 0, check.rows), feature
        if feature.transform in ("z_score", "scale_0_1"):
            assert feature.max_abs_difference == 0.0


def test_probe_rows_reach_every_edge(run_dir):
    plans = plan_preprocessor(run_dir)
    rows = probe_rows(serving_spec(run_dir), plans, 1000, seed=0)
    column = {name: [row[name] for row in rows] for name in rows[0]}

    vocabulary = layer_of_plan(plans, "workclass", keras.layers.StringLookup).get_vocabulary()[1:]
    assert {token.encode() for token in vocabulary} <= set(column["workclass"])
    assert any(value.startswith(b"skewless-probe-") for value in column["workclass"])
    assert None in column["occupation"] and None in column["capital_gain"]
    boundaries = layer_of_plan(plans, "hours_per_week", keras.layers.Discretization).bin_boundaries
    for boundary in boundaries:
        assert {int(boundary) - 1, int(boundary), int(boundary) + 1} <= set(column["hours_per_week"])
    fnlwgt = np.array(column["fnlwgt"], dtype=np.float32)
    scale = layer_of_plan(plans, "fnlwgt", Standardize)
    minimum, maximum = np.float32(scale.center), np.float32(scale.center) + np.float32(scale.scale)
    below, above = np.nextafter(minimum, np.float32(-np.inf)), np.nextafter(maximum, np.float32(np.inf))
    for value in (minimum, maximum, below, above):
        assert value in fnlwgt
    # a required float: NaN and ±inf fail the graph (docs/values.md), so they are no probe; an optional one
    # (capital_gain) gets NaN, which the graph fills, but not ±inf, which it refuses under nonfinite: quarantine
    assert np.isfinite(fnlwgt).all()
    gain = np.array([value for value in column["capital_gain"] if value is not None], dtype=np.float32)
    assert np.isnan(gain).any() and not np.isinf(gain).any()
    assert (float_bits(fnlwgt) == float_bits(-0.0)).any()


def test_layers_hold_the_runs_statistics(run_dir):
    rows = example_rows()
    preprocessor = keras_preprocessor(run_dir)

    ages = np.array([row["age"] for row in rows], dtype=np.float64)
    age = layer_of(preprocessor, "age", Standardize)
    np.testing.assert_allclose([age.center, age.scale], [ages.mean(), ages.std()], rtol=1e-5)

    fnlwgt = np.array([row["fnlwgt"] for row in rows], dtype=np.float32)
    scale = layer_of(preprocessor, "fnlwgt", Standardize)
    assert (np.float32(scale.center), np.float32(scale.scale)) == (fnlwgt.min(), fnlwgt.max() - fnlwgt.min())

    counts = Counter(row["workclass"].decode() for row in rows)
    workclass = layer_of(preprocessor, "workclass", keras.layers.StringLookup).get_vocabulary()[1:]
    assert set(workclass) == set(counts)
    assert [counts[token] for token in workclass] == sorted(counts.values(), reverse=True)
    education = Counter(row["education"].decode() for row in rows)
    top5 = layer_of(preprocessor, "education", keras.layers.StringLookup).get_vocabulary()[2:]
    assert sorted(education[token] for token in top5) == sorted(education.values())[-5:]

    hours = np.array([row["hours_per_week"] for row in rows])
    boundaries = layer_of(preprocessor, "hours_per_week", keras.layers.Discretization).bin_boundaries
    assert len(boundaries) == 3
    # quantile boundaries: each of the 4 buckets holds about a quarter of the rows
    shares = np.bincount(np.searchsorted(boundaries, hours, side="right"), minlength=4) / len(hours)
    np.testing.assert_allclose(shares, 0.25, atol=0.08)
    assert layer_of(preprocessor, "native_country", keras.layers.Hashing).num_bins == 16
    assert layer_of(preprocessor, "occupation", keras.layers.StringLookup).num_oov_indices == 1


def test_outputs_equal_numpy_and_tf_hashing(run_dir):
    rows = example_rows(800) + ODD_ROWS
    preprocessor = keras_preprocessor(run_dir)
    outputs = preprocessor(raw_feature_batch(rows, serving_spec(run_dir)))
    out = {name: np.asarray(value) for name, value in outputs.items()}

    age = layer_of(preprocessor, "age", Standardize)
    ages = np.array([row["age"] for row in rows], dtype=np.float32)
    expected_age = (ages - np.float32(age.center)) / np.float32(age.scale)
    np.testing.assert_array_equal(float_bits(out["age"]), float_bits(expected_age))

    discretization = layer_of(preprocessor, "hours_per_week", keras.layers.Discretization)
    boundaries = np.array(discretization.bin_boundaries, np.float32)
    hours = np.array([row["hours_per_week"] for row in rows], dtype=np.float32)
    np.testing.assert_array_equal(out["hours_per_week"], np.searchsorted(boundaries, hours, side="right"))
    assert out["hours_per_week"].dtype == np.int64

    # tf.Transform's numbering: the vocabulary first, then OOV bucket FarmHash64(value) % k
    for name, num_oov, default in (("education", 2, None), ("occupation", 1, b"unknown")):
        vocabulary = [t.encode() for t in layer_of(preprocessor, name, keras.layers.StringLookup).get_vocabulary()]
        vocabulary = vocabulary[num_oov:]
        values = [row[name] if row[name] is not None else default for row in rows]
        values = [value.encode() if isinstance(value, str) else value for value in values]
        buckets = tf.strings.to_hash_bucket_fast(values, num_oov).numpy()
        expected = [vocabulary.index(v) if v in vocabulary else len(vocabulary) + b for v, b in zip(values, buckets)]
        np.testing.assert_array_equal(out[name], expected, err_msg=name)
        if name == "education":
            assert out[name][-1] >= len(vocabulary) == 5  # "Kindergarten" is unseen; top_k is 5
    countries = [row["native_country"] for row in rows]
    np.testing.assert_array_equal(out["native_country"], tf.strings.to_hash_bucket_fast(countries, 16).numpy())


def test_check_catches_a_one_ulp_difference(run_dir):
    preprocessor = keras_preprocessor(run_dir)
    steps = preprocessor.feature_layers["age"]
    age = steps[0]
    steps[0] = Standardize(age.center, float(np.nextafter(np.float32(age.scale), np.float32(np.inf))))

    check = check_preprocessor(run_dir, sample=400, preprocessor=preprocessor)

    by_name = {feature.name: feature for feature in check.features}
    assert by_name["age"].status == "different"
    assert 0 < by_name["age"].differences < check.rows
    assert 0 < by_name["age"].max_abs_difference < 1e-5
    assert "age" in check.not_exact() and "differs from the graph" in check.not_exact()["age"]
    assert all(f.status == "exact" for f in check.features if f.name != "age")


def test_export_writes_a_small_self_contained_file(run_dir, tmp_path):
    path = tmp_path / "preprocessor.keras"
    check = export_keras_preprocessor(run_dir, path, sample=300)

    assert check.exact and check.path == str(path)
    names = zipfile.ZipFile(path).namelist()
    assert not [name for name in names if "saved_model" in name or "transform_graph" in name or "assets" in name]
    assert os.path.getsize(path) < 100_000
    config = zipfile.ZipFile(path).read("config.json").decode()
    assert run_dir not in config

    loaded = keras.models.load_model(path)
    assert isinstance(loaded, NativePreprocessor)
    rows = example_rows(300) + ODD_ROWS
    native = loaded(raw_feature_batch(rows, serving_spec(run_dir)))
    graph = transform_raw_rows(run_dir, rows)
    for name, value in native.items():
        assert np.asarray(value).dtype == graph[name].dtype, name
        assert np.asarray(value).tobytes() == graph[name].tobytes(), name


def test_edge_transforms_and_refusals(edge_run_dir, tmp_path):
    check = check_preprocessor(edge_run_dir, sample=1500)

    status = {feature.name: feature.status for feature in check.features}
    refused = {"fnlwgt": "unsupported", "age_squared": "unsupported"}
    assert status == {**{name: "exact" for name in EDGE_FEATURES}, **refused}
    assert "Keras Hashing truncates" in check.not_exact()["fnlwgt"]
    assert "preprocessing_fn" in check.not_exact()["age_squared"]

    with pytest.raises(NotPortableError, match=r"'age_squared'.*'fnlwgt'.*strict=False"):
        keras_preprocessor(edge_run_dir)
    preprocessor = keras_preprocessor(edge_run_dir, strict=False)
    assert sorted(preprocessor.unsupported) == ["age_squared", "fnlwgt"]
    assert "fnlwgt" not in preprocessor.feature_layers

    exported = export_keras_preprocessor(edge_run_dir, tmp_path / "edge.keras", sample=200)
    loaded = keras.models.load_model(exported.path)
    assert sorted(loaded.feature_layers) == sorted(set(EDGE_FEATURES) - {"fnlwgt"})
    assert sorted(loaded.unsupported) == ["age_squared", "fnlwgt"]


def test_float_hashing_really_differs():
    """Why float hash features are refused: Keras hashes int64(x), tf.Transform the text of x."""
    values = tf.constant([0.5, 1.25, 2.0, -3.75, 1e6], tf.float32)
    keras_bins = keras.layers.Hashing(num_bins=1000)(values).numpy()
    tft_bins = tf.strings.to_hash_bucket_fast(tf.strings.as_string(values), 1000).numpy()
    assert (keras_bins != tft_bins).any()


def test_refusals_name_the_reason():
    spec = tf.io.FixedLenFeature([], tf.float32)
    constant = GraphFeature("c", "float32", {"c"}, {"Sub", "Less", "Sigmoid", "RealDiv"},
                            [Constant("Sub", 1, np.float32(-3.0)), Constant("Less", 1, np.float32(3.0))])
    plan = plan_feature("c", "scale_0_1", constant, spec)
    assert plan.layers is None and "sigmoid" in plan.reason

    float_vocabulary = GraphFeature("v", "int64", {"v"}, {"LookupTableFindV2"}, tables=[([b"1.500000"], np.array([0]))])
    plan = plan_feature("v", "vocabulary", float_vocabulary, spec)
    assert plan.layers is None and "float" in plan.reason

    mixed = GraphFeature("m", "float32", {"m", "other"})
    assert "from ['m', 'other']" in plan_feature("m", "z_score", mixed, spec).reason


def test_constant_feature_z_score_leaves_x_minus_mean():
    spec = tf.io.FixedLenFeature([], tf.int64)
    constant = GraphFeature("c", "float32", {"c"}, {"Sub", "Sqrt", "RealDiv", "SelectV2"},
                            [Constant("Sub", 1, np.float32(7.0)), Constant("Sqrt", 0, np.float32(0.0))])
    plan = plan_feature("c", "z_score", constant, spec)
    out = plan.layers[0](np.array([7, 9, 4]))
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0, -3.0])


def test_standardize_positive_zero_matches_tft_tail():
    x = tf.constant([-0.0, 0.0, 1.0, np.nan, -np.inf], tf.float32)
    layer = Standardize(0.0, 3.0, positive_zero=True)
    expected = (x - 0.0) / 3.0 * 1.0 + 0.0
    assert np.asarray(layer(x)).tobytes() == expected.numpy().tobytes()
    assert float_bits(Standardize(0.0, 3.0)(x))[0] == float_bits(-0.0)


def test_layers_round_trip_their_config(run_dir):
    preprocessor = keras_preprocessor(run_dir)
    rebuilt = NativePreprocessor.from_config(json.loads(json.dumps(preprocessor.get_config())))
    rows = example_rows(200) + ODD_ROWS
    batch = raw_feature_batch(rows, serving_spec(run_dir))
    first, second = preprocessor(batch), rebuilt(batch)
    for name in first:
        assert np.asarray(first[name]).tobytes() == np.asarray(second[name]).tobytes(), name
    for steps in preprocessor.feature_layers.values():
        for layer in steps:
            config = layer.get_config()
            assert type(layer).from_config(config).get_config() == config


def test_works_in_functional_models_and_tf_data(run_dir):
    preprocessor = keras_preprocessor(run_dir)
    rows = example_rows(300) + ODD_ROWS
    spec = serving_spec(run_dir)
    graph = transform_raw_rows(run_dir, rows)

    inputs = raw_inputs(run_dir)
    functional = keras.Model(inputs, preprocessor(inputs))
    features = tf.io.parse_example(tf.constant(serialize_raw_examples(rows, spec)), spec)
    from_model = functional(features)
    from_dataset = next(iter(tf.data.Dataset.from_tensor_slices(features).batch(len(rows)).map(preprocessor)))
    for name in preprocessor.feature_layers:
        assert np.asarray(from_model[name]).tobytes() == graph[name].tobytes(), name
        assert from_dataset[name].numpy().tobytes() == graph[name].tobytes(), name



@pytest.mark.census
@pytest.mark.slow
def test_census_run_is_exact_on_tensorflow(census_run, census_path):
    """The issue's bar: every census transform on all 32,561 rows, bit for bit (JAX: test_keras_preprocessor_jax)."""
    with open(census_path) as handle:
        rows = [{name: (int(value) if name in CENSUS_NUMERIC else value) for name, value in zip(CENSUS_COLUMNS, fields)}
                for fields in csv.reader(handle, skipinitialspace=True) if fields]
    check = check_preprocessor(census_run.output_dir, rows=rows, sample=2000)

    assert check.rows == len(rows) + 2000 == 34_561
    assert len(check.features) == 14
    assert check.not_exact() == {}
