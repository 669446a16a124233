"""`label: {column: price, transform: log | z_score | scale_0_1}`: a regression label written transformed, served
back in its own units (issue 31).

The shards' label must be NumPy's transform of the raw label (statistics over every row), the export's
`serving_default` and `predict_raw` must add an output `price` equal to NumPy's inverse of the model's output,
and `skewless predict` must write that output as served.
"""

import csv
import json
import os

import numpy as np
import pytest

from rich_rows import write_csv, written_rows
from skewless.config import load_config
from skewless.errors import ConfigError, SchemaError

ROWS = 400
TRANSFORMS = ("z_score", "log", "scale_0_1")


def _raw_rows():
    """An id, a feature `x` and a heavy-tailed price (cents: the CSV's text is the value NumPy sees)."""
    rng = np.random.default_rng(31)
    x = rng.normal(0, 1, ROWS).round(3)
    price = np.exp(3 + 0.8 * x + rng.normal(0, 0.3, ROWS)).round(2)
    return {"id": list(range(ROWS)), "x": x.tolist(), "price": price.tolist()}


def _config(folder, transform):
    return {"name": "labels", "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
            "features": {"id": {"transform": "passthrough"}, "x": {"transform": "z_score"}},
            "label": {"column": "price", "transform": transform},
            "output": {"dir": str(folder / "out"), "shards": 1}}


def _numpy_scale(price: np.ndarray, transform: str) -> tuple[np.ndarray, dict]:
    """NumPy's transform of the raw label (float64) and its statistics, as tf.Transform defines them."""
    values = np.log1p(price) if transform == "log" else price
    if transform == "scale_0_1":
        stats = {"min": values.min(), "max": values.max()}
        return (values - stats["min"]) / (stats["max"] - stats["min"]), stats
    stats = {"mean": values.mean(), "std": values.std()}  # tf.Transform's variance is the population one
    return (values - stats["mean"]) / stats["std"], stats


def _numpy_inverse(prediction: np.ndarray, transform: str, stats: dict) -> np.ndarray:
    prediction = prediction.astype(np.float64)
    if transform == "scale_0_1":
        return prediction * (stats["max"] - stats["min"]) + stats["min"]
    original = prediction * stats["std"] + stats["mean"]
    return np.expm1(original) if transform == "log" else original


@pytest.fixture(scope="module")
def label_runs(tmp_path_factory):
    """transform -> (transform, its run's result, the raw columns, the run's folder), each run once."""
    from skewless.pipelines import run

    runs = {}

    def run_of(transform):
        if transform not in runs:
            folder = tmp_path_factory.mktemp(f"label_{transform}")
            raw = _raw_rows()
            write_csv(folder / "rows.csv", raw)
            runs[transform] = transform, run(_config(folder, transform)), raw, folder
        return runs[transform]

    return run_of


@pytest.fixture(params=TRANSFORMS)
def label_run(request, label_runs):
    return label_runs(request.param)


def _model():
    """A small regression model on the transformed feature `x`: one output, in the label's transformed units."""
    import keras

    keras.utils.set_random_seed(31)
    inputs = {"x": keras.Input((1,), name="x")}
    hidden = keras.layers.Dense(4, activation="tanh")(inputs["x"])
    return keras.Model(inputs, keras.layers.Dense(1)(hidden))


def _served(export_dir, rows) -> dict:
    import tensorflow as tf

    from skewless.layers import read_spec_file, serialize_raw_examples

    examples = serialize_raw_examples(rows, read_spec_file(export_dir)["raw"])
    signature = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    return {name: value.numpy() for name, value in signature(examples=tf.constant(examples)).items()}


def test_the_shards_hold_numpy_s_transform_of_the_label(label_run):
    transform, result, raw, _ = label_run
    written = written_rows(result.output_dir)
    price = np.float32(raw["price"]).astype(np.float64)[written["id"]]
    expected, stats = _numpy_scale(price, transform)
    np.testing.assert_allclose(written["price"], expected, rtol=1e-5, atol=1e-6)
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        summary = json.load(handle)
    assert summary["label"]["transform"] == transform
    for name, value in stats.items():
        assert summary["label"]["statistics"][name] == pytest.approx(value, rel=1e-5)


def test_serving_returns_the_prediction_in_the_label_s_units(label_run, tmp_path):
    import tensorflow as tf

    from skewless.layers import export_serving_model, read_spec_file, transform_raw_rows

    transform, result, raw, _ = label_run
    export = export_serving_model(result.output_dir, _model(), tmp_path / "export")
    rows = [{"id": i, "x": raw["x"][i]} for i in range(0, ROWS, 7)]
    served = _served(export, rows)
    assert sorted(served) == ["output_0", "price"]
    price = np.float32(raw["price"]).astype(np.float64)
    _, stats = _numpy_scale(price, transform)
    # the model's own output is left as it is: the model on the transformed features, in transformed units (to
    # the last bits: Keras called eagerly takes other kernels than the SavedModel's graph)
    transformed_x = transform_raw_rows(result.output_dir, rows)["x"]
    np.testing.assert_allclose(served["output_0"], _model()({"x": transformed_x[:, None]}).numpy(), rtol=1e-5)
    np.testing.assert_allclose(served["price"], _numpy_inverse(served["output_0"], transform, stats), rtol=1e-5)
    assert served["price"].dtype == np.float32 and served["price"].shape == (len(rows), 1)
    loaded = tf.saved_model.load(str(export))
    dense = loaded.signatures["predict_raw"](id=tf.constant([row["id"] for row in rows], tf.int64),
                                               x=tf.constant([row["x"] for row in rows], tf.float32))
    np.testing.assert_array_equal(dense["price"].numpy(), served["price"])
    spec = read_spec_file(export)
    assert spec["label_output"] == "price" and spec["label_scale"]["transform"] == transform


def test_a_transform_layer_carries_the_label_s_scale_into_its_config(label_run):
    """A model holding its TransformLayer, saved and loaded, is exported without the run's run.json."""
    from skewless.layers import TransformLayer

    transform, result, _, _ = label_run
    layer = TransformLayer(result.output_dir)
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        label = json.load(handle)["label"]
    assert layer.label_scale == {"transform": transform, **label["statistics"]}
    assert TransformLayer.from_config(layer.get_config()).label_scale == layer.label_scale


# predict writes whatever serving_default returns: one transform shows it
@pytest.mark.parametrize("label_run", ["log"], indirect=True)
def test_predict_writes_the_label_in_its_units_as_served(label_run, tmp_path):
    from skewless.layers import export_serving_model
    from skewless.pipelines import predict

    _, result, raw, _ = label_run
    export = export_serving_model(result.output_dir, _model(), tmp_path / "export")
    rows = [{"id": i, "x": raw["x"][i]} for i in range(ROWS)]
    write_csv(tmp_path / "new.csv", {"id": [row["id"] for row in rows], "x": [row["x"] for row in rows]})
    predicted = predict(str(export), [str(tmp_path / "new.csv")], str(tmp_path / "out"), keys=["id"])
    assert predicted.rows["written"] == ROWS and "price" in predicted.outputs
    found = {}
    for name in sorted(os.listdir(tmp_path / "out")):
        if name.startswith("predictions-"):
            with open(tmp_path / "out" / name, newline="") as handle:
                found.update({int(line["id"]): np.float32(line["price"]) for line in csv.DictReader(handle)})
    served = _served(export, rows)["price"][:, 0]
    np.testing.assert_array_equal(np.float32([found[i] for i in range(ROWS)]), served)


@pytest.mark.parametrize("label_run", ["z_score"], indirect=True)
def test_a_model_of_two_outputs_cannot_serve_a_transformed_label(label_run, tmp_path):
    import keras

    from skewless.layers import export_serving_model

    _, result, _, _ = label_run
    inputs = {"x": keras.Input((1,), name="x")}
    model = keras.Model(inputs, {"a": keras.layers.Dense(1)(inputs["x"]), "b": keras.layers.Dense(1)(inputs["x"])})
    with pytest.raises(SchemaError, match="label 'price' was written .*-transformed: .* has 2"):
        export_serving_model(result.output_dir, model, tmp_path / "export")


def test_a_numeric_label_transform_on_a_string_label_is_refused(tmp_path):
    from skewless.pipelines import run

    write_csv(tmp_path / "rows.csv", {"x": [1.5, 2.5, 3.5], "price": ["cheap", "dear", "cheap"]})
    with pytest.raises(ConfigError, match="label.transform: z_score needs a numeric label, and the label column "
                                          "'price' holds strings") as error:
        run(_config(tmp_path, "z_score") | {"features": {"x": {"transform": "z_score"}}})
    assert "\n" not in str(error.value)


def test_a_label_takes_a_map_or_a_transform(tmp_path):
    config = _config(tmp_path, "log")
    config["label"]["map"] = {"a": 0}
    with pytest.raises(ConfigError, match="label: label takes either map or transform, not both"):
        load_config(config)
    config["label"] = {"column": "price", "transform": "sqrt"}
    with pytest.raises(ConfigError, match="label.transform: unknown value 'sqrt'"):
        load_config(config)
