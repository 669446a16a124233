"""TF Serving's Classify and Regress APIs on an export (layers/api_signatures.py), called as TF Serving calls them.

`tf_serving_call` does what TF Serving's classifier / regressor does with a request (tensorflow_serving/
servables/tensorflow/classifier.cc, regressor.cc): it loads the SavedModel in a TF1 session, finds the named
signature, checks its method name, its one string input ``inputs`` and its outputs, feeds the serialized
``tf.train.Example`` rows and checks the outputs' dtypes and shapes before reading them. Each API's answers are
compared with serving_default's on the same rows: a label map's and a label vocabulary's classes (the
vocabulary file's lines), a binary model's one column, a regression label written z_score-transformed (answered
in its own units).
"""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from example_job import EXAMPLE_CONFIG
from rich_rows import write_csv
from typer.testing import CliRunner

from skewless.cli import app
from skewless.layers import export_serving_model, model_inputs, read_spec_file, serialize_raw_examples
from skewless.layers.api_signatures import CLASSIFICATION, REGRESSION, api_signature
from skewless.pipelines.reading.synthetic_rows import synthetic_rows

METHODS = {CLASSIFICATION: b"tensorflow/serving/classify", REGRESSION: b"tensorflow/serving/regress"}
ROWS = 240
SPECIES = ["setosa", "versicolor", "virginica"]


def tf_serving_call(export_dir, signature: str, examples: list[bytes]) -> tuple[dict, dict]:
    """The signature's outputs for serialized tf.train.Examples as TF Serving's Classify / Regress get them, and
    serving_default's on the same rows in the same session (as TF Serving's Predict gets them)."""
    api = CLASSIFICATION if signature == CLASSIFICATION else REGRESSION
    with tf.compat.v1.Session(graph=tf.Graph()) as session:
        meta_graph = tf.compat.v1.saved_model.loader.load(session, ["serve"], str(export_dir))
        definition = meta_graph.signature_def[signature]
        assert definition.method_name.encode() == METHODS[api]
        assert list(definition.inputs) == ["inputs"] and definition.inputs["inputs"].dtype == tf.string.as_datatype_enum
        expected = {"classes", "scores"} if api == CLASSIFICATION else {"outputs"}
        assert set(definition.outputs) == expected
        fetched = session.run({name: info.name for name, info in definition.outputs.items()},
                              {definition.inputs["inputs"].name: examples})
        default = meta_graph.signature_def["serving_default"]
        by_default = session.run({name: info.name for name, info in default.outputs.items()},
                                 {default.inputs["examples"].name: examples})
    if api == CLASSIFICATION:
        assert fetched["classes"].ndim == 2 and fetched["classes"].dtype == object
        assert fetched["scores"].ndim == 2 and fetched["scores"].dtype == np.float32
        assert fetched["classes"].shape == fetched["scores"].shape and len(fetched["scores"]) == len(examples)
    else:
        value = fetched["outputs"]
        assert value.dtype == np.float32 and (value.ndim == 1 or (value.ndim == 2 and value.shape[1] == 1))
        assert len(value) == len(examples)
    return fetched, by_default


def dense_model(run_dir, units: int, activation: str):
    keras.utils.set_random_seed(3)
    inputs, encoded = model_inputs(run_dir)
    return keras.Model(inputs, keras.layers.Dense(units, activation=activation)(encoded))


@pytest.fixture(scope="module")
def example_examples():
    """Serialized raw rows of the example run (its label map: <=50K 0, >50K 1), without the label."""
    seed = EXAMPLE_CONFIG["input"]["seed"]
    rows = [row for _, table in synthetic_rows(seed, 0, 30) for row in table.to_pylist()]
    return rows


@pytest.fixture(scope="module")
def table_runs(tmp_path_factory):
    """Two runs of one table: its `species` label as a vocabulary (classes), its `price` label z_score (regression)."""
    from skewless.pipelines import run

    rng = np.random.default_rng(9)
    folder = tmp_path_factory.mktemp("api")
    raw = {"x": rng.normal(5, 2, ROWS).round(3).tolist(), "c": rng.choice(["a", "b", "c", "d"], ROWS).tolist(),
           "species": rng.choice(SPECIES, ROWS, p=[0.5, 0.3, 0.2]).tolist(),
           "price": rng.gamma(2.0, 50.0, ROWS).round(2).tolist()}
    write_csv(folder / "rows.csv", raw)
    runs = {}
    for label, transform, other in (("species", "vocabulary", "price"), ("price", "z_score", "species")):
        runs[label] = run({
            "name": label, "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
            "features": {"x": {"transform": "z_score"}, "c": {"transform": "vocabulary"},
                         other: {"transform": "vocabulary" if other == "species" else "z_score"}},
            "label": {"column": label, "transform": transform},
            "output": {"dir": str(folder / label), "shards": 1}})
    rows = [{name: raw[name][i] for name in raw} for i in range(40)]
    return runs, rows


def _examples(export_dir, rows) -> list[bytes]:
    return serialize_raw_examples(rows, read_spec_file(export_dir)["raw"])


@pytest.mark.parametrize("units, activation", [(2, "softmax"), (1, "sigmoid")])
def test_a_label_map_classifies_with_its_keys(example_run, example_examples, units, activation, tmp_path):
    out = export_serving_model(example_run.output_dir, dense_model(example_run.output_dir, units, activation),
                               tmp_path / "export")
    examples = _examples(out, example_examples)
    answer, by_default = tf_serving_call(out, CLASSIFICATION, examples)
    model_output = by_default["output_0"]
    expected = model_output if units == 2 else np.concatenate([1 - model_output, model_output], axis=1)
    np.testing.assert_array_equal(answer["scores"], expected.astype(np.float32))
    assert answer["classes"].tolist() == [[b"<=50K", b">50K"]] * len(examples)
    assert read_spec_file(out)["api_signature"] == {
        "name": CLASSIFICATION, "method": "tensorflow/serving/classify", "classes": ["<=50K", ">50K"]}


def test_a_label_vocabulary_classifies_with_its_entries(table_runs, tmp_path):
    import tensorflow_transform as tft

    runs, rows = table_runs
    run_dir = runs["species"].output_dir
    with open(os.path.join(runs["species"].graph_dir, "transform_fn", "assets", "vocab_species"), "rb") as handle:
        vocabulary = handle.read().splitlines()
    assert sorted(vocabulary) == sorted(name.encode() for name in SPECIES)
    # the label's embedding / output size, as docs/training.md sizes one (issue 45 item 2: its domain began at -1)
    assert tft.TFTransformOutput(runs["species"].graph_dir).num_buckets_for_transformed_feature("species") == 3

    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["export", run_dir, "--model", _saved(dense_model(run_dir, 3, "softmax"),
                                                                           tmp_path), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "serving_default, predict_raw, transform_features, classification" in result.output
    examples = _examples(out, rows)
    answer, by_default = tf_serving_call(out, CLASSIFICATION, examples)
    np.testing.assert_array_equal(answer["scores"], by_default["output_0"])
    assert answer["classes"].tolist() == [vocabulary] * len(rows)


def test_a_transformed_regression_label_regresses_in_its_own_units(table_runs, tmp_path):
    runs, rows = table_runs
    run_dir = runs["price"].output_dir
    out = export_serving_model(run_dir, dense_model(run_dir, 1, None), tmp_path / "export")
    examples = _examples(out, rows)
    answer, by_default = tf_serving_call(out, REGRESSION, examples)
    np.testing.assert_array_equal(answer["outputs"], by_default["price"].reshape(-1))
    # in the label's units, not the model's z-scores: the spread of prices, not of z-scores
    assert not np.allclose(by_default["price"], by_default["output_0"])
    assert sorted(tf.saved_model.load(str(out)).signatures) == [
        "predict_raw", "regression", "serving_default", "transform_features"]


def test_an_export_without_an_api_signature_says_why_and_succeeds(table_runs, tmp_path):
    """A model of two outputs has no Classify or Regress signature: the export is written, exits 0 and says so."""
    run_dir = table_runs[0]["species"].output_dir
    inputs, encoded = model_inputs(run_dir)
    model = keras.Model(inputs, {"p": keras.layers.Dense(3, activation="softmax")(encoded),
                                 "q": keras.layers.Dense(1)(encoded)})
    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["export", run_dir, "--model", _saved(model, tmp_path), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "(signatures: serving_default, predict_raw, transform_features); no Classify/Regress API signature: " \
        "the classification signature serves a model's one output; the model has 2" in " ".join(result.output.split())
    assert set(tf.saved_model.load(str(out)).signatures) == {"serving_default", "predict_raw", "transform_features"}


def _saved(model, folder) -> str:
    path = str(folder / "model.keras")
    model.save(path)
    return path


class _Graph:
    """What api_signature reads of a TransformLayer."""

    def __init__(self, dtype, classes=None, scale=None):
        self.label = "y"
        self.raw_feature_spec = {"y": tf.io.FixedLenFeature([], dtype), "x": tf.io.FixedLenFeature([], tf.float32)}
        self.label_classes, self.label_scale = classes, scale


def _model(*widths):
    inputs = keras.Input((3,))
    outputs = [keras.layers.Dense(width)(inputs) if width else keras.ops.squeeze(keras.layers.Dense(1)(inputs), 1)
               for width in widths]
    return keras.Model(inputs, outputs if len(outputs) > 1 else outputs[0])


# (label dtype, classes, scale), model output widths (0: shape (batch,)), the signature or why it is left out
DECISIONS = [
    ((tf.float32, None, None), (1,), {"name": REGRESSION, "classes": None}),
    ((tf.float32, None, None), (0,), {"name": REGRESSION, "classes": None}),
    ((tf.int64, None, None), (1,), {"name": CLASSIFICATION, "classes": ["0", "1"]}),
    ((tf.int64, None, None), (4,), {"name": CLASSIFICATION, "classes": ["0", "1", "2", "3"]}),
    ((tf.string, ["a", "b", "c"], None), (3,), {"name": CLASSIFICATION, "classes": ["a", "b", "c"]}),
    ((tf.float32, None, {"transform": "log"}), (1,), {"name": REGRESSION, "classes": None}),
    ((tf.string, ["a", "b", "c"], None), (1,), "the label has 3 classes; the model's output of shape (1,)"),
    ((tf.string, ["a", "b", "c"], None), (2,), "the label has 3 classes; the model's output of shape (2,)"),
    ((tf.float32, None, None), (2,), "regression serves one value per row; the model's output has shape (2,)"),
    ((tf.int64, None, None), (2, 1), "the classification signature serves a model's one output; the model has 2"),
]


@pytest.mark.parametrize("label, widths, expected", DECISIONS)
def test_the_label_and_the_model_output_decide_the_signature(label, widths, expected):
    api, outputs = api_signature(_Graph(*label), _model(*widths))
    if isinstance(expected, str):
        assert outputs is None and api["left_out"].startswith(expected)
    else:
        assert outputs is not None and {key: api[key] for key in expected} == expected
