"""`skewless validate` knows the sample size: a 600-row run's own splits (120 eval rows) pass although sampling
noise puts distances past the default thresholds, a real shift of 2,000 rows is CROSSED, and every measured
feature shows its distance, test, p-value and sample sizes (the split's rows, counted from run.json); a column in
the config's `drift.exclude` (an ID) is listed as left out, not measured. docs/statistics.md, "Sample sizes"."""

import json
from pathlib import Path

import numpy as np
import pytest
from rich_rows import write_csv
from typer.testing import CliRunner

from skewless.cli import app
from skewless.config import load_config
from skewless.errors import ConfigError
from skewless.report import render_report
from skewless.significance import SIGNIFICANCE

EXCLUDED = "left out (drift.exclude)"
FEATURES = {"id": {"transform": "passthrough"}, "x": {"transform": "z_score"}, "c": {"transform": "vocabulary"}}


def _table(rng, rows: int, shift: float = 0.0, c_share: float = 0.3) -> dict[str, list]:
    return {"id": list(range(rows)), "x": rng.normal(50 + 10 * shift, 10, rows).round(3).tolist(),
            "c": rng.choice(["a", "b", "c"], rows, p=[c_share, 0.4, 0.6 - c_share]).tolist(),
            "label": rng.choice(["yes", "no"], rows).tolist()}


def _run(folder, raw: dict, splits: dict):
    from skewless.pipelines import run

    write_csv(folder / "rows.csv", raw)
    return run({"name": folder.name, "input": {"format": "csv", "paths": [str(folder / "rows.csv")], "header": True},
                "features": FEATURES, "label": {"column": "label", "map": {"no": 0, "yes": 1}},
                "drift": {"exclude": ["id"]}, "output": {"dir": str(folder / "out"), "splits": splits}})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A 600-row run split 80/20, a 2,000-row run of the same distributions, and one with x shifted 0.25 sd and
    c's first value 10 points more frequent."""
    rng = np.random.default_rng(45)
    folders = {name: tmp_path_factory.mktemp(name) for name in ("small", "base", "shifted")}
    return {"small": _run(folders["small"], _table(rng, 600), {"train": 0.8, "eval": 0.2}),
            "base": _run(folders["base"], _table(rng, 2000), {"all": 1.0}),
            "shifted": _run(folders["shifted"], _table(rng, 2000, shift=0.25, c_share=0.4), {"all": 1.0})}


def _validate(*args) -> tuple[int, dict]:
    result = CliRunner().invoke(app, ["validate", *args, "--json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def test_a_small_runs_own_splits_pass_within_sampling_noise(runs):
    run = runs["small"]
    code, report = _validate(run.output_dir)
    (comparison,) = report["comparisons"]
    features = {f["feature"]: f for f in comparison["features"]}
    assert code == 0 and report["crossed"] == 0 and comparison["significance"] == SIGNIFICANCE
    assert features["id"]["verdict"] == EXCLUDED and features["id"]["distance"] is None
    measured = {name: f for name, f in features.items() if name != "id"}
    assert set(measured) == {"x", "c", "label"}
    written = run.rows["written"]
    for name, f in measured.items():
        assert f["unmeasured"] is None and f["verdict"] == "ok", name
        assert f["test"] and 0 <= f["p_value"] <= 1 and f["significant"] is (f["p_value"] < SIGNIFICANCE), name
        # each split's rows, every row holding one value of each column
        assert (f["base_count"], f["test_count"]) == (written["train"], written["eval"]), name
    # the distances alone would flag noise at 120 rows: some cross their thresholds, the tests find no drift
    assert any(f["distance"] > f["threshold"] for f in measured.values())


def test_a_shift_of_2000_rows_is_crossed_with_its_test(runs):
    code, report = _validate(runs["shifted"].output_dir, "--against", runs["base"].output_dir)
    (comparison,) = report["comparisons"]
    features = {f["feature"]: f for f in comparison["features"]}
    assert code == 1 and {name for name, f in features.items() if f["verdict"] == "CROSSED"} == {"x", "c"}
    assert all(features[name]["p_value"] < SIGNIFICANCE for name in ("x", "c"))
    assert features["id"]["verdict"] == EXCLUDED


def test_the_table_shows_the_test_and_the_sizes(runs):
    result = CliRunner().invoke(app, ["validate", runs["small"].output_dir], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    for column in ("distance", "threshold", "test", "values (baseline / tested)", "verdict"):
        assert column in result.output
    written = runs["small"].rows["written"]
    assert f"{written['train']:,} / {written['eval']:,}" in result.output
    assert EXCLUDED in result.output and "chi-square" in result.output


def test_the_run_report_leaves_the_excluded_column_out_and_shows_the_tests(runs):
    html = Path(render_report(runs["small"].output_dir)).read_text()
    assert EXCLUDED in html
    assert html.count('data-p-value="') >= 3  # x, c, label: each distance with its p-value


def test_drift_exclude_names_raw_columns():
    config = {"name": "x", "input": {"format": "synthetic", "rows": 10}, "features": {"age": {"transform": "z_score"}},
              "drift": {"exclude": ["nope"]}, "output": {"dir": "out"}}
    with pytest.raises(ConfigError, match="drift.exclude names 'nope', which is not a raw column of the config"):
        load_config(config)
