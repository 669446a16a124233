"""Any column name works, end to end: nothing it holds makes the job write outside its run directory,
and names Keras and TensorFlow refuse (spaces, dots, slashes, unicode, markup) train and serve the same values."""

import csv
import json
import os
import random

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft
from hypothesis import given
from hypothesis import strategies as st

from skewless.layers import (
    TransformLayer,
    export_serving_model,
    parse_raw_examples,
    raw_inputs,
    read_spec_file,
    serialize_raw_examples,
    transform_raw_rows,
)
from skewless.pipelines import run
from skewless.safe_names import keras_layer_name, safe_file_name, signature_argument_name
from run_output import read_split

ESCAPING = "x/../../somewhere/NAME"
ODD = ["a b", "x.y", "p/q", "ünï名", "<b>", ESCAPING, "num v", "id"]
ROWS = 120


def write_odd_csv(folder) -> list[dict]:
    """Headerless rows of ODD's columns, the last two numeric; "ünï名" is empty in every 7th row."""
    random.seed(4)
    rows = []
    for i in range(ROWS):
        rows.append({"a b": random.choice(["u", "v", "w"]), "x.y": random.choice(["k", "l"]),
                     "p/q": random.choice(["r", "s", "t"]),
                     "ünï名": "" if i % 7 == 0 else random.choice(["é", "ß"]),
                     "<b>": random.choice([1, 2]), ESCAPING: random.choice(["m", "n", "o"]),
                     "num v": i * 0.5, "id": i})
    with open(folder / "data.csv", "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([[row[name] for name in ODD] for row in rows])
    return rows


def odd_config(output_dir) -> dict:
    return {
        "name": "odd",
        "input": {"format": "csv", "paths": ["data.csv"], "columns": ODD},
        "features": {
            **{name: {"transform": "vocabulary"} for name in ("a b", "x.y", "p/q", ESCAPING)},
            "ünï名": {"transform": "vocabulary", "fill": "most_frequent"},
            "<b>": {"transform": "hash", "hash_buckets": 8},
            "num v": {"transform": "z_score"},
            "id": {"transform": "passthrough"},
        },
        "output": {"dir": str(output_dir), "splits": {"train": 1.0}, "shards": 1},
    }


def files_in(folder) -> set[str]:
    return {os.path.join(parent, name) for parent, _, names in os.walk(folder) for name in names}


@pytest.fixture(scope="module")
def odd_run(tmp_path_factory):
    """A run of ODD's columns from a config three folders deep, and every file under the tmp root it added
    outside its run directory."""
    root = tmp_path_factory.mktemp("odd")
    folder = root / "a" / "b" / "c"
    folder.mkdir(parents=True)
    rows = write_odd_csv(folder)
    with open(folder / "job.yaml", "w", encoding="utf-8") as handle:
        json.dump(odd_config(folder / "out"), handle)  # JSON is YAML
    before = files_in(root)
    result = run(str(folder / "job.yaml"))
    outside = {path for path in files_in(root) - before if not path.startswith(str(folder / "out") + os.sep)}
    return result, rows, outside


def test_a_column_name_writes_no_file_outside_the_run_directory(odd_run):
    result, _, outside = odd_run
    assert outside == set()
    assert result.rows == {"read": ROWS, "written": {"train": ROWS}, "quarantined": 0}


def test_run_json_names_each_vocabulary_and_most_frequent_file(odd_run):
    result, rows, _ = odd_run
    report = json.load(open(os.path.join(result.output_dir, "run.json"), encoding="utf-8"))["features"]
    graph = tft.TFTransformOutput(result.graph_dir)
    assets = os.path.join(result.graph_dir, "transform_fn", "assets")
    for name in ("a b", "x.y", "p/q", "ünï名", ESCAPING):
        file = report[name]["vocabulary_file"]
        assert "/" not in file and os.path.isfile(os.path.join(assets, file))
        expected = sorted({row[name] for row in rows if row[name]})
        assert sorted(graph.vocabulary_by_name(file)) == [token.encode() for token in expected]
    most_frequent = open(os.path.join(assets, report["ünï名"]["most_frequent_file"]), encoding="utf-8").read()
    present = [row["ünï名"] for row in rows if row["ünï名"]]
    assert most_frequent.splitlines()[0] == max(set(present), key=lambda v: (present.count(v), v.encode()))
    assert report["x.y"]["vocabulary_file"] == "vocab_x.y"  # a plain name keeps its file name


def odd_model(run_dir):
    """Raw features in, through the run's TransformLayer, to one number per row."""
    inputs = raw_inputs(run_dir)
    features = TransformLayer(run_dir)(inputs)
    columns = [keras.ops.cast(keras.ops.reshape(features[name], (-1, 1)), "float32") for name in sorted(features)]
    keras.utils.set_random_seed(2)
    return keras.Model(inputs, keras.layers.Dense(1)(keras.layers.Concatenate()(columns)))


def test_odd_names_export_and_serve_the_batch_values(odd_run, tmp_path):
    result, rows, _ = odd_run
    model = odd_model(result.output_dir)
    assert all("/" not in tensor.name for tensor in model.inputs)
    export_serving_model(result.output_dir, model, tmp_path / "export")
    served = tf.saved_model.load(str(tmp_path / "export"))
    spec = read_spec_file(tmp_path / "export")
    raw = [{**row, "ünï名": row["ünï名"] or None} for row in rows]

    # transformed features: the batch job's shards, the export's transform_features, TransformLayer
    written = read_split(result, "train")
    order = np.argsort(written["id"])
    examples = tf.constant(serialize_raw_examples(raw, spec["raw"]))
    by_export = served.signatures["transform_features"](examples=examples)
    by_layer = transform_raw_rows(result.output_dir, raw)
    assert sorted(by_export) == sorted(written) == sorted(ODD)
    for name in ODD:
        np.testing.assert_array_equal(by_export[name].numpy(), written[name][order], err_msg=name)
        np.testing.assert_array_equal(by_layer[name], written[name][order], err_msg=name)

    # predictions: serving_default (Examples) and predict_raw (one argument per feature) equal the Keras model
    # on the same raw rows; predict_raw takes a value in every row
    filled = [{**row, "ünï名": row["ünï名"] or "?"} for row in raw]
    filled_examples = tf.constant(serialize_raw_examples(filled, spec["raw"]))
    by_examples = served.signatures["serving_default"](examples=examples)["output_0"].numpy()
    np.testing.assert_allclose(by_examples, model(parse_raw_examples(examples, spec["raw"])).numpy(), rtol=1e-6)
    arguments = {spec["predict_raw_arguments"][name]: tf.constant([row[name] for row in filled],
                                                                  spec["raw"][name].dtype) for name in ODD}
    by_arguments = served.signatures["predict_raw"](**arguments)["output_0"].numpy()
    expected = model(parse_raw_examples(filled_examples, spec["raw"])).numpy()
    np.testing.assert_allclose(by_arguments, expected, rtol=1e-6)
    assert not np.allclose(by_arguments, by_examples)  # the filled rows do change the predictions


names = st.text(min_size=1, max_size=80)


@given(names)
def test_any_name_maps_to_a_file_name_inside_its_folder(name):
    file = safe_file_name(name)
    assert file not in (".", "..") and "/" not in file and "\0" not in file and 0 < len(file) <= 64
    assert os.path.normpath(os.path.join("run", file)).startswith("run" + os.sep)
    assert safe_file_name(file) == file  # stable: a derived name maps to itself


@given(names, names)
def test_different_names_map_to_different_derived_names(first, second):
    for derive in (safe_file_name, keras_layer_name, signature_argument_name):
        if first != second and derive(first) == derive(second):
            # only plain names that TensorFlow's argument rule folds together ('.' and '-' become '_')
            assert derive is signature_argument_name and first.replace(".", "_").replace("-", "_") == \
                second.replace(".", "_").replace("-", "_")


@given(names)
def test_any_name_is_a_valid_keras_input_and_signature_argument(name):
    assert "/" not in keras_layer_name(name)
    keras.Input(shape=(), name=keras_layer_name(name))
    assert signature_argument_name(name).isidentifier() and signature_argument_name(name).isascii()
