"""`skewless verify`: zero differences between the batch and serving paths, and differences when they skew."""

import keras
import pytest
from typer.testing import CliRunner

from example_job import example_config
from skewless.cli import app
from skewless.layers import TransformLayer, export_serving_model, raw_inputs
from skewless.pipelines.commands.verify import verify


def full_model(run_dir):
    """A model that carries the run's graph: raw features in, one number out."""
    inputs = raw_inputs(run_dir)
    transformed = TransformLayer(run_dir)(inputs)
    hidden = keras.layers.Concatenate()([keras.ops.expand_dims(transformed[n], -1) for n in ("age", "fnlwgt")])
    return keras.Model(inputs, keras.layers.Dense(1)(hidden))


def test_no_differences_through_the_layer_and_an_export(example_run, tmp_path):
    result = verify(example_run.output_dir, sample=300)
    assert result.rows == 300 and result.unseen_rows == 50
    assert result.differences == 0
    names = {check.name for check in result.features}
    assert names == {"age", "hours_per_week", "fnlwgt", "capital_gain", "workclass", "education", "occupation",
                     "native_country", "label"}
    export_dir = tmp_path / "export"
    export_serving_model(example_run.output_dir, full_model(example_run.output_dir), str(export_dir))
    exported = verify(example_run.output_dir, sample=100, export_dir=str(export_dir))
    assert exported.differences == 0 and exported.path == str(export_dir)
    assert {check.name for check in exported.features} == names - {"label"}  # served without the label


def test_a_stale_export_is_caught(example_run, tmp_path):
    """An export made from another run's graph (other data, so other statistics) must show differences."""
    from skewless.pipelines import run

    other = run(example_config(tmp_path / "other", input={"format": "synthetic", "rows": 500, "seed": 99},
                               output={"shards": 1}))
    export_dir = tmp_path / "stale"
    export_serving_model(other.output_dir, full_model(other.output_dir), str(export_dir))
    result = verify(example_run.output_dir, sample=200, export_dir=str(export_dir))
    by_name = {check.name: check for check in result.features}
    assert by_name["age"].differences > 0 and by_name["age"].max_abs_difference > 0
    assert by_name["native_country"].differences == 0  # hashing has no statistics: it cannot skew
    outcome = CliRunner().invoke(app, ["verify", example_run.output_dir, "--sample", "50", "--export", str(export_dir)])
    assert outcome.exit_code == 1, outcome.output
    assert "differences" in outcome.output


def test_cli_reports_no_differences(example_run):
    outcome = CliRunner().invoke(app, ["verify", example_run.output_dir, "--sample", "50"])
    assert outcome.exit_code == 0, outcome.output
    assert "no differences" in outcome.output


def test_not_a_run_dir_is_a_clear_error(tmp_path):
    outcome = CliRunner().invoke(app, ["verify", str(tmp_path)])
    assert outcome.exit_code == 2
    assert "not a run directory" in outcome.output


@pytest.mark.parametrize("sample", [1, 7])
def test_small_samples(example_run, sample):
    assert verify(example_run.output_dir, sample=sample).rows == sample
