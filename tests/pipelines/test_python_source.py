"""`input.format: python`: a user generator feeds the Beam job lazily, one call per work unit (per pass without keep_parsed)."""

import json
import os

import numpy as np
import pytest

from run_output import quarantine_rows, read_split


def config(tmp_path, generator="generated_rows:people", **args):
    return {
        "name": "generated",
        "input": {"format": "python", "generator": generator, "args": args},
        "features": {
            "id": {"transform": "passthrough"},
            "height": {"transform": "z_score", "default": 160.0},
            "city": {"transform": "vocabulary"},
        },
        "label": {"column": "label", "map": {"short": 0, "tall": 1}},
        "output": {"dir": str(tmp_path / "out"), "splits": {"train": 1.0}, "shards": 3},
    }


def test_generator_rows_run_through_the_job(tmp_path):
    from skewless.pipelines import run

    log_dir = tmp_path / "calls"
    log_dir.mkdir()
    result = run(config(tmp_path, rows=900, log_dir=str(log_dir)))
    assert result.rows == {"read": 900, "written": {"train": 900}, "quarantined": 0}
    # type inference called shard 0 of 1 once; each of the 3 work units was called once, by the analysis:
    # the transform pass reuses the rows it parsed (input.keep_parsed)
    calls = {name: open(log_dir / name).read().count("called") for name in os.listdir(log_dir)}
    assert calls == {"shard-0-of-1.calls": 1, **{f"shard-{i}-of-3.calls": 1 for i in range(3)}}
    rows = read_split(result, "train")
    order = np.argsort(rows["id"])
    assert rows["id"][order].tolist() == list(range(900))
    heights = np.array([160.0 if i % 10 == 0 else 150.0 + (i * 37 % 50) for i in range(900)])
    np.testing.assert_allclose(rows["height"][order], (heights - heights.mean()) / heights.std(), atol=1e-4)
    labels = np.array([1 if 150.0 + (i * 37 % 50) > 175 else 0 for i in range(900)])
    np.testing.assert_array_equal(rows["label"][order], labels)


def test_values_of_the_wrong_type_are_quarantined(tmp_path):
    from skewless.pipelines import run

    cfg = config(tmp_path, generator="generated_rows:with_bad_rows")
    cfg["output"]["max_bad_fraction"] = 0.1
    result = run(cfg)
    bad = quarantine_rows(result.output_dir)
    assert result.rows["quarantined"] == len(bad) == 2  # ids 1407 and 1907
    assert result.rows["read"] == 2000 and result.rows["written"]["train"] == 1998
    assert all("height" in row["reason"] and "very tall" in row["reason"] for row in bad)
    assert sorted(str(json.loads(row["raw"])["id"]) for row in bad) == ["1407", "1907"]


def test_a_missing_generator_is_a_config_error(tmp_path):
    from skewless.errors import ConfigError
    from skewless.pipelines import run

    with pytest.raises(ConfigError, match="input.generator 'no_such_module:rows': cannot import no_such_module"):
        run(config(tmp_path, generator="no_such_module:rows"))
