"""`skewless verify` on a CSV run with missing values: real (or derived) rows only, every path compared, the
run's stored input paths absolute, predict_raw's NaN rule, and distinct exit codes (0 equal, 2 could not check)."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_transform as tft
import yaml
from rich.console import Console
from typer.testing import CliRunner

from rich_rows import write_csv
from skewless.cli import app
from skewless.layers import TransformLayer, export_serving_model, raw_inputs, serialize_raw_examples
from skewless.console.verify_tables import print_result
from skewless.pipelines.commands.verify import verify

ROWS = 150


def code_tail(inputs, outputs):
    """Fails on a string shorter than 3 (as a synthetic empty probe would be); every real code is longer."""
    return {"code_tail": tf.strings.substr(inputs["code"], 2, 1)}


def third_letter(inputs, outputs):
    """Fails on the optional column's default "": rows with it missing cannot be transformed."""
    dense = tft.sparse_tensor_to_dense_with_shape(inputs["s"], [None, 1], default_value="")[:, 0]
    return {"s_third": tf.strings.substr(dense, 2, 1)}


def columns(seed: int, gaps: bool) -> dict:
    rng = np.random.default_rng(seed)

    def gap(values, fraction):
        return [None if gaps and hole else v for v, hole in zip(values, rng.random(len(values)) < fraction)]

    return {
        "w": gap(rng.normal(5, 2, ROWS).round(3).tolist(), 0.2),
        "n": gap(rng.integers(0, 9, ROWS).tolist(), 0.1),
        "s": gap(rng.choice(["abc", "bcd", "cde"], ROWS).tolist(), 0.1),
        "code": [f"k-{i:03d}" for i in range(ROWS)],
        "label": rng.integers(0, 2, ROWS).tolist(),
    }


FEATURES = {
    "w": {"transform": "z_score", "fill": "mean", "missing_indicator": True},
    "n": {"transform": "passthrough", "default": -1},
    "s": {"transform": "vocabulary", "default": ""},
    "code": {"transform": "passthrough"},
}


def run_from_elsewhere(folder, raw: dict, preprocessing_fn: str) -> str:
    """A config with relative paths (data/, out/) beside it, run from another working directory."""
    from skewless.pipelines import run

    (folder / "project" / "data").mkdir(parents=True)
    write_csv(folder / "project" / "data" / "rows.csv", raw)
    config = {"name": "missing", "input": {"format": "csv", "paths": ["data/rows.csv"], "header": True},
              "features": FEATURES, "label": {"column": "label"}, "preprocessing_fn": preprocessing_fn,
              "output": {"dir": "out", "shards": 1}}
    (folder / "project" / "job.yaml").write_text(yaml.safe_dump(config))
    (folder / "cwd").mkdir()
    before = os.getcwd()
    os.chdir(folder / "cwd")
    try:
        return run("../project/job.yaml").output_dir
    finally:
        os.chdir(before)


@pytest.fixture(scope="module")
def missing_run(tmp_path_factory):
    raw = columns(1, gaps=True)
    return run_from_elsewhere(tmp_path_factory.mktemp("verify_missing"), raw, "test_verify_missing:code_tail"), raw


def test_run_config_holds_absolute_input_paths_so_verify_and_raw_dataset_work_from_any_cwd(
        missing_run, tmp_path, monkeypatch):
    from skewless.pipelines.tfdata.raw_dataset import make_raw_dataset

    run_dir, raw = missing_run
    stored = yaml.safe_load(open(os.path.join(run_dir, "config.yaml")))
    assert os.path.isabs(run_dir) and all(os.path.isabs(path) for path in stored["input"]["paths"])
    monkeypatch.chdir(tmp_path)
    rows = sum(int(tf.shape(features["code"])[0]) for features, _ in make_raw_dataset(
        os.path.join(run_dir, "config.yaml"), batch_size=64))
    assert rows == ROWS
    outcome = CliRunner().invoke(app, ["verify", run_dir, "--sample", "60"])
    assert outcome.exit_code == 0, outcome.output
    assert "could not check" not in outcome.output


def test_verify_probes_real_rows_and_compares_missing_values_on_every_path(missing_run):
    """code_tail fails on a synthetic empty probe string: verify takes only real rows and rows derived from them."""
    run_dir, _ = missing_run
    result = verify(run_dir, sample=60)
    assert result.unchecked == {} and result.exit_code == 0 and result.differences == 0
    assert {check.name for check in result.features} >= {"w", "w_missing", "n", "s", "code_tail", "label"}
    (examples, examples_checks), (dense, dense_checks) = result.groups.items()
    assert "tf.Examples" in examples and "predict_raw" in dense
    assert all(check.rows == 20 for check in examples_checks) and 0 < dense_checks[0].rows <= 20
    assert {check.name for check in dense_checks} == {check.name for check in examples_checks} - {"label"}
    assert result.native is not None and result.native.rows == 60 + result.unseen_rows + 20
    # the tables say what w_missing is, on every line that names it, and call nothing else an indicator
    assert result.indicators == {"w_missing": "w"}
    console = Console(record=True, width=240)
    print_result(result, console)
    lines = console.export_text().splitlines()
    named = [line for line in lines if "w_missing" in line or "missing indicator of" in line]
    assert len(named) == len(result.groups) + 1 + 1  # the skew tables and the native table
    assert all("w_missing (missing indicator of w)" in line for line in named)
    # the indicator has native layers of its own (MissingIndicator), equal to the graph's (issue 31)
    native = {feature.name: feature for feature in result.native.features}
    assert (native["w_missing"].status, native["w_missing"].transform, native["w_missing"].reason) == (
        "exact", "missing_indicator", None)


def test_predict_raw_takes_nan_as_a_missing_float(missing_run, tmp_path):
    run_dir, raw = missing_run
    inputs = raw_inputs(run_dir)
    features = TransformLayer(run_dir)(inputs)
    model = keras.Model(inputs, keras.layers.Concatenate()([
        keras.ops.expand_dims(features["w"], -1), keras.ops.cast(keras.ops.expand_dims(features["w_missing"], -1),
                                                                 "float32")]))
    export_dir = export_serving_model(run_dir, model, tmp_path / "export")
    loaded = tf.saved_model.load(export_dir)
    rows = [{"w": None, "n": 3, "s": "abc", "code": "k-900"}, {"w": 7.5, "n": 3, "s": "abc", "code": "k-901"}]
    spec = {name: s for name, s in TransformLayer(run_dir).raw_feature_spec.items() if name != "label"}
    served = loaded.signatures["serving_default"](examples=tf.constant(serialize_raw_examples(rows, spec)))
    dense = loaded.signatures["predict_raw"](w=tf.constant([np.nan, 7.5]), n=tf.constant([3, 3], tf.int64),
                                              s=tf.constant(["abc", "abc"]), code=tf.constant(["k-900", "k-901"]))
    np.testing.assert_array_equal(dense["output_0"].numpy(), served["output_0"].numpy())
    present = np.float32([value for value in raw["w"] if value is not None])
    mean = present.astype(np.float64).mean()
    # the batch path fills a missing w with the mean before the z-score's statistics: there, z-score 0, indicator 1
    std = np.concatenate([present, np.full(ROWS - len(present), np.float32(mean))]).astype(np.float64).std()
    np.testing.assert_allclose(dense["output_0"].numpy(), [[0.0, 1.0], [(7.5 - mean) / std, 0.0]], rtol=1e-5)


def test_verify_exits_2_and_prints_the_other_paths_when_a_check_cannot_run(tmp_path):
    raw = columns(2, gaps=False)  # s is never missing in the input: the job runs, rows derived with it missing fail
    run_dir = run_from_elsewhere(tmp_path, raw, "test_verify_missing:third_letter")
    result = verify(run_dir, sample=40)
    assert result.differences == 0 and result.exit_code == 2
    reasons = [reason for title, reason in result.unchecked.items() if "tf.Examples" in title]
    assert reasons and "out of range" in reasons[0], result.unchecked  # the op's own message
    outcome = CliRunner().invoke(app, ["verify", run_dir, "--sample", "40"])
    assert outcome.exit_code == 2, outcome.output
    assert "could not check" in outcome.output and "s_third" in outcome.output  # the sampled rows' table
    assert "Traceback" not in outcome.output
