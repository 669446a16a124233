"""Issue 45 item 8: bucketize with fixed `boundaries`, a vocabulary's `reserved_tokens`, and several features of one
raw column (`column: RAW`).

The written rows must equal what stock tf.Transform writes for the same rows (`tft.apply_buckets`,
`tft.compute_and_apply_vocabulary(reserved_tokens=)`, an AnalyzeAndTransformDataset run in the test), serving
(TransformLayer on raw tf.Examples) must equal the written rows and take each raw column once, and bad options
are refused in one line naming the feature.
"""

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rich_rows import assert_bit_equal, served_rows, with_gaps, write_csv, written_rows
from skewless.cli import app
from skewless.config import load_config
from skewless.errors import ConfigError
from skewless.report import render_report
from skewless.report.run_files import vocabulary_file
from skewless.run_directory import RunDirectory

ROWS = 500
BOUNDARIES = [20.0, 35.5, 50.0]
RESERVED = ["<pad>", "b"]  # one the data never holds, one it does (a frequent one: it moves to the front)
SHARED_TOP_K = 3  # of the values of city and dest together: leaves one of dest's out
FEATURES = {
    "id": {"transform": "passthrough"},
    "age": {"transform": "z_score"},
    # two more features of raw column age, which is read once
    "age_fixed": {"column": "age", "transform": "bucketize", "boundaries": BOUNDARIES},
    "age_quartile": {"column": "age", "transform": "bucketize", "num_buckets": 4},
    "city": {"transform": "vocabulary", "top_k": 3, "reserved_tokens": RESERVED},
    # a feature of raw column city that may be missing: with a default, like its other feature
    "city_all": {"column": "city", "transform": "vocabulary", "reserved_tokens": ["zz"], "num_oov_buckets": 0,
                 "default": "q"},
    # encoded: top_k + the reserved tokens + the OOV bucket columns
    "city_hot": {"column": "city", "transform": "vocabulary", "top_k": 2, "reserved_tokens": ["zz"],
                 "output": "one_hot", "default": "q"},
    # one vocabulary of the values of two columns (city through a third feature of it), each one's ids from it
    "dest": {"transform": "vocabulary", "shared_vocabulary": "places", "top_k": SHARED_TOP_K},
    "city_place": {"column": "city", "transform": "vocabulary", "shared_vocabulary": "places", "top_k": SHARED_TOP_K,
                   "num_oov_buckets": 0, "default": "q"},
    # tf.Transform's coverage arm: the top 1 city, and the top 2 of vowels and of consonants seen 20 times or more
    "city_cover": {"column": "city", "transform": "vocabulary", "top_k": 1, "coverage_top_k": 2,
                   "coverage_frequency_threshold": 20, "default": "d",  # each feature fills city its own way
                   "coverage_key": "test_fixed_buckets_reserved_tokens_columns:vowel_or_not"},
}
RAW = ("id", "age", "city", "dest")  # the raw columns serving takes


def vowel_or_not(value: bytes) -> bytes:
    """The coverage key of a city: whether its name starts with a vowel."""
    return b"vowel" if value[:1] in (b"a", b"e", b"i", b"o", b"u") else b"consonant"


def _raw_rows():
    """Ages exact in float32 (eighths), some on a boundary; cities with gaps (missing: the features' defaults)."""
    rng = np.random.default_rng(45)
    ages = (rng.integers(80, 560, ROWS) / 8).tolist()
    ages[:len(BOUNDARIES)] = BOUNDARIES  # a value on a boundary goes to the bucket above it
    cities = rng.choice(["a", "b", "c", "d", "e"], ROWS, p=[0.35, 0.3, 0.2, 0.1, 0.05]).tolist()
    columns = {"id": list(range(ROWS)), "age": ages, "city": with_gaps(rng, cities, 0.05),
               "label": rng.integers(0, 2, ROWS).tolist()}
    # destinations: "f" only here, "e" far more often than in city, so the shared counts differ from either's
    columns["dest"] = rng.choice(["a", "e", "f", "c"], ROWS, p=[0.2, 0.4, 0.3, 0.1]).tolist()
    return columns


def _config(folder, features=FEATURES):
    return {"name": "item8", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
            "features": {name: dict(options) for name, options in features.items()}, "label": {"column": "label"},
            "output": {"dir": str(folder / "out"), "shards": 1}}


@pytest.fixture(scope="module")
def item8_run(tmp_path_factory):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("item8")
    raw = _raw_rows()
    write_csv(folder / "rows.csv", raw)
    # every feature of a raw column that may be missing needs a default: both city features have one
    features = {**FEATURES, "city": {**FEATURES["city"], "default": "q"}}
    return run(_config(folder, features)), raw


def _stock_rows(raw, temp_dir):
    """The same transforms written by hand with stock tf.Transform, on the same rows."""
    import tensorflow as tf
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam

    spec = {"id": tf.io.FixedLenFeature([], tf.int64), "age": tf.io.FixedLenFeature([], tf.float32),
            "city": tf.io.VarLenFeature(tf.string), "dest": tf.io.FixedLenFeature([], tf.string)}

    def preprocessing_fn(inputs):
        city = tf.squeeze(tft.sparse_tensor_to_dense_with_shape(inputs["city"], [None, 1], default_value="q"), axis=1)
        city_d = tf.squeeze(tft.sparse_tensor_to_dense_with_shape(inputs["city"], [None, 1], default_value="d"), axis=1)
        age = inputs["age"]
        places = tft.vocabulary(tf.concat([city, inputs["dest"]], 0), top_k=SHARED_TOP_K)
        return {
            "dest": tft.apply_vocabulary(inputs["dest"], places, num_oov_buckets=1),
            "city_place": tft.apply_vocabulary(city, places),
            "city_cover": tft.compute_and_apply_vocabulary(city_d, top_k=1, coverage_top_k=2,
                                                           coverage_frequency_threshold=20, key_fn=vowel_or_not,
                                                           num_oov_buckets=1),
            "id": inputs["id"],
            "age": tft.scale_to_z_score(age),
            "age_fixed": tft.apply_buckets(age, [BOUNDARIES]),
            "age_quartile": tft.bucketize(age, 4),
            "city": tft.compute_and_apply_vocabulary(city, top_k=3, reserved_tokens=RESERVED, num_oov_buckets=1),
            "city_all": tft.compute_and_apply_vocabulary(city, reserved_tokens=["zz"]),
            "city_hot": tf.one_hot(tft.compute_and_apply_vocabulary(city, top_k=2, reserved_tokens=["zz"],
                                                                    num_oov_buckets=1), 2 + 1 + 1),
        }

    rows = [{"id": raw["id"][i], "age": np.float32(raw["age"][i]), "dest": raw["dest"][i].encode(),
             "city": [] if raw["city"][i] is None else [raw["city"][i].encode()]} for i in range(ROWS)]
    with tft_beam.Context(temp_dir=str(temp_dir), desired_batch_size=ROWS):
        (transformed, _), _ = (rows, tft.DatasetMetadata.from_feature_spec(spec)) | (
            tft_beam.AnalyzeAndTransformDataset(preprocessing_fn))
    by_id = sorted(transformed, key=lambda row: row["id"])
    return {name: [np.asarray(row[name]).tolist() for row in by_id] for name in FEATURES}


def test_written_rows_equal_stock_tf_transform(item8_run, tmp_path):
    result, raw = item8_run
    assert result.rows["quarantined"] == 0
    written, stock = written_rows(result.output_dir), _stock_rows(raw, tmp_path)
    assert_bit_equal(written, stock, FEATURES)
    # fixed boundaries, by NumPy: bucket i holds b(i-1) <= x < b(i)
    np.testing.assert_array_equal(written["age_fixed"], np.searchsorted(BOUNDARIES, raw["age"], side="right"))
    # the reserved tokens take the first ids, in their order, seen in the data or not
    cities = ["q" if city is None else city for city in raw["city"]]
    assert {written["city"][i] for i, city in enumerate(cities) if city == "b"} == {1}
    assert {written["city_all"][i] for i, city in enumerate(cities) if city == "a"} == {1}  # after "zz"


def test_serving_takes_each_raw_column_once_and_equals_the_written_rows(item8_run):
    from skewless.layers import TransformLayer

    result, raw = item8_run
    layer = TransformLayer(result.output_dir)
    assert set(layer.raw_feature_spec) == {*RAW, "label"}
    rows = [{name: raw[name][i] for name in RAW} for i in range(ROWS)]
    served, written = served_rows(layer, rows), written_rows(result.output_dir)
    for name in FEATURES:
        assert served[name] == written[name], name
    unseen = served_rows(layer, [{"id": 0, "age": 99.0, "city": "<pad>", "dest": "a"},
                                 {"id": 1, "age": 1.0, "city": "new", "dest": "a"}])
    assert unseen["age_fixed"] == [3, 0]
    assert unseen["city"][0] == 0 and unseen["city_all"] == [-1, -1]  # "<pad>" is no entry of city_all's


def test_native_preprocessor_reproduces_them_exactly(item8_run):
    from skewless.layers import check_preprocessor, raw_inputs

    result, raw = item8_run
    assert set(raw_inputs(result.output_dir)) == set(RAW)  # keras.Input per raw column, once
    rows = [{name: raw[name][i] for name in RAW} for i in range(0, ROWS, 2)]
    check = check_preprocessor(result.output_dir, rows=rows, sample=200)
    assert {f.name: (f.status, f.differences) for f in check.features} == {
        name: ("exact", 0) for name in FEATURES}


def test_run_json_gives_each_feature_its_raw_columns_statistics(item8_run):
    result, raw = item8_run
    with open(f"{result.output_dir}/run.json") as handle:
        features = json.load(handle)["features"]
    assert features["age_fixed"]["column"] == "age" and "column" not in features["age"]
    for name in ("age_fixed", "age_quartile"):
        assert features[name]["count"] == features["age"]["count"] == ROWS, name
        assert features[name]["mean"] == features["age"]["mean"], name
    assert features["city_all"]["vocabulary_size"] == 7  # zz, then a b c d q e
    assert features["city"]["vocabulary_size"] == 4  # <pad> b, then the top 3 less b: a c
    # one file for both, by Counter over both columns' values
    counts = Counter(["q" if city is None else city for city in raw["city"]] + raw["dest"])
    top = _by_count(counts)[:SHARED_TOP_K]
    assert features["dest"]["vocabulary_file"] == features["city_place"]["vocabulary_file"]
    assert vocabulary_file(RunDirectory(result.output_dir), features["dest"]["vocabulary_file"]) == top
    # the top city, then per key the top 2 seen 20 times or more, by Counter: the vowels' e (18) falls short
    cities = Counter(["d" if city is None else city for city in raw["city"]])
    ranked = _by_count(cities)
    kept = {ranked[0]} | {city for key in (True, False) for city in [
        city for city in ranked if (city in "aeiou") == key and cities[city] >= 20][:2]}
    assert vocabulary_file(RunDirectory(result.output_dir), features["city_cover"]["vocabulary_file"]) == [
        city for city in ranked if city in kept]


def _article(html: str, feature: str) -> str:
    return re.search(rf'<article class="feature" id="feature-{feature}">(.*?)</article>', html, re.S).group(1)


def test_the_report_shows_a_features_raw_column_by_split(item8_run):
    result, _ = item8_run
    html = Path(render_report(result.output_dir)).read_text(encoding="utf-8")
    splits = re.compile(r'<div class="splits">.*?</div>', re.S)
    for name in ("age_fixed", "age_quartile"):
        assert splits.findall(_article(html, name)) == splits.findall(_article(html, "age")) != [], name
    # the model-input advice counts the fixed boundaries' buckets: len + 1, as many as age_quartile's 4
    advice = re.compile(r'<p class="advice" data-advice-ids="(\d+)"')
    assert advice.findall(_article(html, "age_fixed")) == advice.findall(_article(html, "age_quartile")) == [
        str(len(BOUNDARIES) + 1)]


def test_the_report_marks_values_outside_a_shared_vocabulary(item8_run):
    result, raw = item8_run
    html = Path(render_report(result.output_dir)).read_text(encoding="utf-8")
    section = _article(html, "dest")
    oov = re.findall(r'<g><title>([^<]*): [0-9,]+ rows</title><text[^>]*>[^<]*</text><rect class="bar-oov"', section)
    counts = Counter(["q" if city is None else city for city in raw["city"]] + raw["dest"])
    shared = set(_by_count(counts)[:SHARED_TOP_K])
    assert set(oov) == set(raw["dest"]) - shared and oov  # by the shared file, not the feature's own (none)


def test_drift_measures_each_raw_column_once(item8_run):
    result, _ = item8_run
    validated = CliRunner().invoke(app, ["validate", str(result.output_dir), "--json"])
    assert validated.exit_code in (0, 1), validated.output
    features = [f["feature"] for f in json.loads(validated.stdout)["comparisons"][0]["features"]]
    assert sorted(features) == sorted([*RAW, "label"])


def _by_count(counts: Counter) -> list[str]:
    """Values in tf.Transform's vocabulary order: most frequent first, ties by the larger value."""
    return [token for token, _ in sorted(counts.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def _refused(tmp_path, features, label="label"):
    config = {"name": "t", "input": {"format": "synthetic", "rows": 10}, "output": {"dir": str(tmp_path)},
              "features": features, "label": {"column": label}}
    with pytest.raises(ConfigError) as error:
        load_config(config)
    assert "\n" not in str(error.value)
    return str(error.value)


@pytest.mark.parametrize("options, message", [
    ({"boundaries": [1.0, 3.0], "num_buckets": 3}, "give either num_buckets (boundaries at quantiles) or boundaries"),
    ({}, "transform bucketize needs num_buckets (boundaries at quantiles) or boundaries (fixed ones)"),
    ({"boundaries": [3.0, 1.0]}, "boundaries [3.0, 1.0]: each boundary must be above the one before"),
    ({"boundaries": [1.0, 1.0]}, "each boundary must be above the one before"),
    ({"boundaries": [1.0, float("inf")]}, "every boundary must be a finite number"),
    ({"boundaries": [float("nan")]}, "every boundary must be a finite number"),
    ({"boundaries": []}, "boundaries: List should have at least 1 item"),
    ({"boundaries": [1.0], "key": "c"}, "boundaries are fixed; key applies to quantile boundaries"),
    ({"boundaries": [1.0], "epsilon": 0.01}, "boundaries are fixed; epsilon applies"),
])
def test_bad_boundaries_are_refused_in_one_line(tmp_path, options, message):
    text = _refused(tmp_path, {"x": {"transform": "bucketize", **options}, "c": {"transform": "vocabulary"}})
    assert "features.x" in text and message in text, text


@pytest.mark.parametrize("tokens, message", [
    (["a", "a"], "reserved_tokens: 'a' is given twice"),
    (["", "a"], "reserved_tokens: '' cannot be a vocabulary entry"),
    (["a\nb"], "cannot be a vocabulary entry"),
    ([], "reserved_tokens: List should have at least 1 item"),
])
def test_bad_reserved_tokens_are_refused_in_one_line(tmp_path, tokens, message):
    text = _refused(tmp_path, {"c": {"transform": "vocabulary", "reserved_tokens": tokens}})
    assert "features.c" in text and message in text, text


@pytest.mark.parametrize("features, message", [
    # a feature named after a raw column that another feature reads: its output and that column would share a name
    ({"a": {"transform": "z_score", "column": "b"}, "b": {"transform": "bucketize", "num_buckets": 2, "column": "a"}},
     "features.a transforms raw column 'b', but 'a' is a raw column too (read by features.b)"),
    ({"a": {"transform": "z_score", "column": "b"}, "k": {"transform": "z_score", "key": "a"}},
     "features.k: key 'a' is a feature of raw column 'b'; name the raw column"),
    ({"a": {"transform": "z_score", "column": "b"}, "k": {"transform": "z_score", "key": "b"}},
     "features.k: key 'b' is a raw column only features.a transforms (column: b)"),
    ({"x": {"transform": "z_score", "column": "label"}}, "features.x: column 'label' is the label"),
    ({"x": {"transform": "z_score"}, "x_l": {"transform": "z_score", "column": "x", "list": True}},
     "features.x_l and features.x both read raw column 'x', which is read once: they must agree on list"),
    ({"x": {"transform": "z_score", "default": 0}, "x_b": {"transform": "bucketize", "num_buckets": 2, "column": "x"}},
     "they must agree on default or fill"),
    ({"x": {"transform": "vocabulary", "fill": "most_frequent"},
      "x2": {"transform": "hash", "hash_buckets": 3, "column": "x", "fill": "most_frequent"}},
     "both fill raw column 'x' with its most frequent value"),
    ({"x_b": {"transform": "bucketize", "num_buckets": 2, "column": "x"}, "k": {"transform": "z_score", "key": "x_b"}},
     "features.k: key 'x_b' is a feature of raw column 'x'; name the raw column"),
    ({"e": {"transform": "cross", "columns": ["a", "b"], "hash_buckets": 4, "column": "a"}},
     "column only applies to transform"),
    ({"a": {"transform": "vocabulary", "shared_vocabulary": "v"}, "b": {"transform": "vocabulary"}},
     "features.a: shared_vocabulary 'v' is named by no other feature"),
    ({"a": {"transform": "vocabulary", "shared_vocabulary": "v", "top_k": 3},
      "b": {"transform": "vocabulary", "shared_vocabulary": "v"}},
     "features.b and features.a share vocabulary 'v': they must give the same top_k"),
    ({"a": {"transform": "vocabulary", "shared_vocabulary": "v", "reserved_tokens": ["x"]},
      "b": {"transform": "vocabulary", "shared_vocabulary": "v"}}, "they must give the same reserved_tokens"),
    ({"a": {"transform": "vocabulary", "shared_vocabulary": "v", "labels": True},
      "b": {"transform": "vocabulary", "shared_vocabulary": "v"}},
     "features.a: shared_vocabulary counts the values of several features; labels and weights"),
    ({"a": {"transform": "vocabulary", "coverage_top_k": 2}}, "coverage_top_k and coverage_frequency_threshold need "
     "coverage_key"),
    ({"a": {"transform": "vocabulary", "coverage_key": "m:f"}}, "coverage_key needs one of them"),
    ({"a": {"transform": "vocabulary", "coverage_key": "m.f", "coverage_top_k": 1}},
     "coverage_key must be 'module.path:function'"),
    ({"a": {"transform": "vocabulary", "coverage_key": "m:f", "coverage_top_k": 1, "shared_vocabulary": "v"},
      "b": {"transform": "vocabulary", "shared_vocabulary": "v"}}, "shared_vocabulary takes no coverage options"),
    ({"a": {"transform": "text_vocabulary", "shared_vocabulary": "v"}},
     "shared_vocabulary only applies to transform vocabulary, not text_vocabulary"),
])
def test_features_of_one_column_are_checked_in_one_line(tmp_path, features, message):
    text = _refused(tmp_path, features)
    assert message in text, text
