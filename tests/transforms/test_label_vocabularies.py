"""`labels: true` and `weights: COLUMN` on a vocabulary (issue 31): the files and ids must equal what stock
tf.Transform writes with `tft.vocabulary(labels=..., use_adjusted_mutual_info=..., min_diff_from_avg=...,
weights=...)` on the same rows (an AnalyzeAndTransformDataset run in the test), the label being the ids the
job writes for it (here a string label with `transform: vocabulary`); serving and the native preprocessor
must equal the written rows.
"""

import json
import os

import numpy as np
import pytest

from example_job import assert_feature_refused
from rich_rows import served_rows, write_csv, written_rows
from skewless.errors import ConfigError

ROWS = 800
FEATURES = {  # column: its options besides transform: vocabulary
    "c_mi": {"labels": True},
    "c_ami": {"labels": True, "adjusted_mutual_info": True, "min_diff_from_avg": 2.0, "top_k": 6},
    "c_w": {"weights": "w", "top_k": 5},
    "c_mi_w": {"labels": True, "weights": "w", "num_oov_buckets": 0, "default_value": 99},
}


def _raw_rows():
    """Categories whose frequency and link to the label differ (so count, mutual information and weighted counts
    order them differently), weights exact in float32 (quarters), a string label of three classes."""
    rng = np.random.default_rng(31)
    label = rng.choice(["low", "mid", "high"], ROWS, p=[0.5, 0.3, 0.2])
    columns = {"id": list(range(ROWS)), "w": (rng.integers(1, 17, ROWS) / 4).tolist()}
    letters = list("abcdefghij")
    for name in FEATURES:
        common = rng.choice(letters, ROWS, p=np.linspace(2, 0.2, len(letters)) / np.linspace(2, 0.2, 10).sum())
        # some rare letters follow the label closely: informative beyond their count
        telling = {"low": "h", "mid": "i", "high": "j"}
        follow = rng.random(ROWS) < 0.15
        columns[name] = [telling[y] if f else c for y, f, c in zip(label, follow, common)]
    columns["label"] = label.tolist()
    return columns


@pytest.fixture(scope="module")
def vocab_run(tmp_path_factory):
    from skewless.pipelines import run

    folder = tmp_path_factory.mktemp("label_vocabularies")
    raw = _raw_rows()
    write_csv(folder / "rows.csv", raw)
    features = {"id": {"transform": "passthrough"}, "w": {"transform": "z_score"},
                **{name: {"transform": "vocabulary", **options} for name, options in FEATURES.items()}}
    config = {"name": "label_vocabularies", "input": {"format": "csv", "paths": [str(folder / "rows.csv")],
                                                       "header": True},
              "features": features, "label": {"column": "label", "transform": "vocabulary"},
              "output": {"dir": str(folder / "out"), "shards": 1}}
    return run(config), raw


def _stock(raw, temp_dir):
    """The vocabularies written by hand with tft.vocabulary on the same rows: (files by name, ids by name)."""
    import tensorflow as tf
    import tensorflow_transform as tft
    import tensorflow_transform.beam as tft_beam

    spec = {"id": tf.io.FixedLenFeature([], tf.int64), "w": tf.io.FixedLenFeature([], tf.float32),
            "label": tf.io.FixedLenFeature([], tf.string),
            **{name: tf.io.FixedLenFeature([], tf.string) for name in FEATURES}}

    def preprocessing_fn(inputs):
        label = tft.compute_and_apply_vocabulary(inputs["label"], num_oov_buckets=0)
        outputs = {"id": inputs["id"]}
        for name, options in FEATURES.items():
            path = tft.vocabulary(
                inputs[name], top_k=options.get("top_k"), vocab_filename=f"stock_{name}",
                labels=label if options.get("labels") else None,
                weights=inputs["w"] if options.get("weights") else None,
                use_adjusted_mutual_info=options.get("adjusted_mutual_info", False),
                min_diff_from_avg=options.get("min_diff_from_avg"))
            outputs[name] = tft.apply_vocabulary(inputs[name], path, num_oov_buckets=options.get("num_oov_buckets", 1),
                                                 default_value=options.get("default_value", -1))
        return outputs

    rows = [{"id": raw["id"][i], "w": np.float32(raw["w"][i]), "label": raw["label"][i].encode(),
             **{name: raw[name][i].encode() for name in FEATURES}} for i in range(ROWS)]
    with tft_beam.Context(temp_dir=str(temp_dir / "tmp"), desired_batch_size=ROWS):
        (transformed, _), transform_fn = (rows, tft.DatasetMetadata.from_feature_spec(spec)) | (
            tft_beam.AnalyzeAndTransformDataset(preprocessing_fn))
        _ = transform_fn | tft_beam.WriteTransformFn(str(temp_dir / "graph"))
    graph = tft.TFTransformOutput(str(temp_dir / "graph"))
    files = {}
    for name in FEATURES:
        with open(graph.vocabulary_file_by_name(f"stock_{name}"), "rb") as handle:
            files[name] = handle.read()
    by_id = sorted(transformed, key=lambda row: row["id"])
    return files, {name: [int(np.asarray(row[name]).item()) for row in by_id] for name in FEATURES}


def test_files_and_ids_equal_stock_tf_transform(vocab_run, tmp_path):
    result, raw = vocab_run
    stock_files, stock_ids = _stock(raw, tmp_path)
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        report = json.load(handle)["features"]
    written = written_rows(result.output_dir)
    for name in FEATURES:
        path = os.path.join(result.graph_dir, "transform_fn", "assets", report[name]["vocabulary_file"])
        with open(path, "rb") as handle:
            assert handle.read() == stock_files[name], name
        assert written[name] == stock_ids[name], name
    # the options matter: mutual information, its adjusted form and weights each order the letters otherwise
    plain = [letter for letter, _ in sorted(
        ((letter, raw["c_mi"].count(letter)) for letter in set(raw["c_mi"])), key=lambda item: (-item[1], item[0]))]
    orders = {name: stock_files[name].decode().split() for name in FEATURES}
    assert orders["c_mi"] != plain[:len(orders["c_mi"])]
    assert len(orders["c_ami"]) == 6 and len(orders["c_w"]) == 5


def test_weights_count_each_row_with_its_weight(vocab_run):
    """Independent of tf.Transform: the weighted vocabulary is the letters by their summed weight, NumPy's."""
    result, raw = vocab_run
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        file = json.load(handle)["features"]["c_w"]["vocabulary_file"]
    with open(os.path.join(result.graph_dir, "transform_fn", "assets", file)) as handle:
        ours = handle.read().split()
    sums = {}
    for letter, weight in zip(raw["c_w"], raw["w"]):
        sums[letter] = sums.get(letter, 0.0) + weight
    # most weight first, ties by the token's bytes, larger first (tf.Transform's order)
    expected = sorted(sums, key=lambda letter: (-sums[letter], [-b for b in letter.encode()]))[:5]
    assert ours == expected


def test_serving_and_the_native_preprocessor_equal_the_written_rows(vocab_run):
    from skewless.layers import TransformLayer, check_preprocessor

    result, raw = vocab_run
    layer = TransformLayer(result.output_dir)
    rows = [{name: raw[name][i] for name in raw if name != "label"} for i in range(ROWS)]
    served, written = served_rows(layer, rows), written_rows(result.output_dir)
    for name in FEATURES:
        assert served[name] == written[name], name
    check = check_preprocessor(result.output_dir, rows=rows[::4], sample=200)
    statuses = {f.name: (f.status, f.reason, f.differences) for f in check.features}
    for name in FEATURES:
        assert statuses[name] == ("exact", None, 0), name


@pytest.mark.parametrize("feature, message", [
    ({"transform": "vocabulary", "adjusted_mutual_info": True}, "adjusted_mutual_info and min_diff_from_avg need "
                                                               "labels: true"),
    ({"transform": "vocabulary", "min_diff_from_avg": 1.0}, "need labels: true"),
    ({"transform": "vocabulary", "labels": True, "frequency_threshold": 2}, "frequency_threshold with labels: true"),
    ({"transform": "vocabulary", "weights": "w", "list": True}, "weights: one weight per row cannot weigh a list"),
    ({"transform": "hash", "hash_buckets": 4, "labels": True}, "labels only applies to transform vocabulary"),
    ({"transform": "vocabulary", "labels": True}, r"features\.x: labels: true needs a label \(label.column\)"),
])
def test_config_refuses_bad_combinations_in_one_line(tmp_path, feature, message):
    assert_feature_refused(tmp_path, feature, message)


def test_a_regression_label_cannot_order_a_vocabulary(tmp_path):
    from skewless.config import load_config

    config = {"name": "t", "input": {"format": "synthetic", "rows": 10}, "output": {"dir": str(tmp_path)},
              "features": {"workclass": {"transform": "vocabulary", "labels": True}},
              "label": {"column": "age", "transform": "z_score"}}
    with pytest.raises(ConfigError, match="features.workclass: labels: true needs a class label; label.transform "
                                          "z_score makes 'age' a regression label") as error:
        load_config(config)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("label, kind", [("price", "floats"), ("town", "strings")])
def test_a_label_that_is_not_classes_is_refused_naming_the_feature(tmp_path, label, kind):
    from skewless.pipelines import run

    write_csv(tmp_path / "rows.csv", {"c": ["a", "b", "a"], "w": ["x", "y", "z"], "price": [1.5, 2.25, 3.0],
                                      "town": ["p", "q", "p"]})
    config = {"name": "t", "input": {"format": "csv", "paths": [str(tmp_path / "rows.csv")], "header": True},
              "features": {"c": {"transform": "vocabulary", "labels": True}}, "label": {"column": label},
              "output": {"dir": str(tmp_path / "out")}}
    with pytest.raises(ConfigError, match=f"features.c.labels: the label column '{label}' holds {kind}; mutual "
                                          "information needs classes"):
        run(config)
    config["features"] = {"c": {"transform": "vocabulary", "weights": "w"}}
    config["label"] = None
    with pytest.raises(ConfigError, match="features.c.weights: w holds strings; weights are numbers"):
        run(config)
