"""Hashed feature crosses (`transform: cross`): ids equal to Keras' HashedCrossing on the raw values, the crossed
columns stay raw inputs (filled where the config says so), and the shards equal the serving path row for row."""

import keras
import numpy as np
import pytest

from rich_rows import served_rows, write_csv, written_rows
from skewless.config import load_config
from skewless.errors import ConfigError

ROWS = 300


@pytest.fixture(scope="module")
def cross_run(tmp_path_factory):
    from skewless.pipelines import run

    rng = np.random.default_rng(8)
    folder = tmp_path_factory.mktemp("cross")
    raw = {
        "id": list(range(ROWS)),
        "city": rng.choice(["oslo", "rome", "lima", "bern"], ROWS).tolist(),
        "floor": rng.integers(0, 6, ROWS).tolist(),
        "kind": [None if gap else value for value, gap in
                 zip(rng.choice(["flat", "house"], ROWS).tolist(), rng.random(ROWS) < 0.2)],
        "label": rng.integers(0, 2, ROWS).tolist(),
    }
    write_csv(folder / "rows.csv", raw)
    config = {
        "name": "cross",
        "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
        "features": {
            "id": {"transform": "passthrough"},
            "city": {"transform": "vocabulary"},
            "kind": {"transform": "vocabulary", "default": "unknown"},
            # floor is not a feature: crossing it makes it a (required) raw input
            "city_x_floor": {"transform": "cross", "columns": ["city", "floor"], "hash_buckets": 50},
            "city_x_kind": {"transform": "cross", "columns": ["city", "kind"], "hash_buckets": 7},
        },
        "label": {"column": "label"},
        "output": {"dir": str(folder / "out"), "shards": 2},
    }
    return run(config), raw


def test_crosses_equal_keras_hashed_crossing(cross_run):
    result, raw = cross_run
    written = written_rows(result.output_dir)
    city = np.array(raw["city"])
    by_keras = keras.layers.HashedCrossing(num_bins=50)((city, np.array(raw["floor"], dtype=np.int64)))
    assert written["city_x_floor"] == np.asarray(by_keras).tolist()
    # the missing kind is crossed as its default, as the kind feature itself sees it
    kind = np.array(["unknown" if value is None else value for value in raw["kind"]])
    assert written["city_x_kind"] == np.asarray(keras.layers.HashedCrossing(num_bins=7)((city, kind))).tolist()
    assert len(set(written["city_x_floor"])) > 15  # 24 combinations spread over 50 buckets
    assert "floor" not in written


def test_crossed_columns_are_raw_inputs_and_serving_matches(cross_run):
    from skewless.layers import TransformLayer

    result, raw = cross_run
    layer = TransformLayer(result.output_dir)
    assert {"city", "floor", "kind"} <= set(layer.raw_feature_spec)
    rows = [{name: raw[name][i] for name in raw} for i in range(ROWS)]
    served, written = served_rows(layer, rows), written_rows(result.output_dir)
    assert set(served) == set(written) - {"label"}
    for name in served:
        assert served[name] == written[name], name
    # unseen values cross like any other (hashing has no vocabulary), and an unseen city goes to the OOV bucket
    unseen = served_rows(layer, [{"id": 0, "city": "nuuk", "floor": 99, "kind": "boat"}])
    expected = keras.layers.HashedCrossing(num_bins=50)((np.array(["nuuk"]), np.array([99], dtype=np.int64)))
    assert unseen["city_x_floor"] == np.asarray(expected).tolist()
    assert unseen["city"] == [4]  # 4 cities in the vocabulary, then the one OOV bucket


def test_run_json_describes_the_cross(cross_run):
    result, _ = cross_run
    assert result.features["city_x_floor"] == {"transform": "cross", "type": "int", "kind": "categorical",
                                               "columns": ["city", "floor"], "hash_buckets": 50}


def test_cross_config_errors(tmp_path):
    from skewless.pipelines.plan.plan import plan

    base = {"name": "t", "input": {"format": "synthetic", "rows": 10}, "output": {"dir": str(tmp_path)},
            "label": {"column": "label", "map": {"<=50K": 0, ">50K": 1}}}

    def features(**entries):
        return {**base, "features": entries}

    with pytest.raises(ConfigError, match="transform cross needs columns"):
        load_config(features(x={"transform": "cross", "columns": ["age"], "hash_buckets": 5}))
    with pytest.raises(ConfigError, match="transform cross needs hash_buckets"):
        load_config(features(x={"transform": "cross", "columns": ["age", "education"]}))
    with pytest.raises(ConfigError, match="cross of the label column 'label'"):
        load_config(features(x={"transform": "cross", "columns": ["education", "label"], "hash_buckets": 5}))
    with pytest.raises(ConfigError, match="output 'age_missing' is also written by features.age"):
        load_config(features(age={"transform": "z_score", "default": 0, "missing_indicator": True},
                             age_missing={"transform": "cross", "columns": ["education", "workclass"],
                                          "hash_buckets": 5}))
    from skewless.pipelines.analyze.preprocessing import build_preprocessing_fn

    config = load_config(features(x={"transform": "cross", "columns": ["education", "fnlwgt"], "hash_buckets": 5}))
    with pytest.raises(ConfigError, match="features.x.columns: fnlwgt holds floats"):
        build_preprocessing_fn(config, plan(config).columns)
