"""--cache-dir: a rerun with new files analyzes only those and gives the statistics of a cold run."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml

from run_output import read_split

FILES = 10
ROWS_PER_FILE = 300


def write_file(folder, index):
    rng = np.random.default_rng(index)
    cities = np.array(["paris", "oslo", "rome", "lima", "bern", "nuuk", "kiev"])
    ids = np.arange(index * ROWS_PER_FILE, (index + 1) * ROWS_PER_FILE)
    # every file shifts the distribution, so statistics that missed a file would show
    x = rng.normal(10 + index, 3, ROWS_PER_FILE).round(3)
    city = rng.choice(cities[: 3 + index % 5], ROWS_PER_FILE)
    path = folder / f"part-{index:02d}.csv"
    path.write_text("\n".join(f"{i},{v},{c}" for i, v, c in zip(ids, x, city)) + "\n")


def config(folder, output, cache_dir=None):
    return {
        "name": "cached",
        "input": {"format": "csv", "paths": [str(folder / "part-*.csv")], "columns": ["id", "x", "city"]},
        "features": {
            "id": {"transform": "passthrough"},
            "x": {"transform": "z_score"},
            "city": {"transform": "vocabulary", "num_oov_buckets": 1},
        },
        "output": {"dir": str(output), "splits": {"train": 1.0}, "shards": 2},
        "cache_dir": str(cache_dir) if cache_dir else None,
    }


def train_rows(result):
    rows = read_split(result, "train")
    order = np.argsort(rows["id"])
    return {name: values[order] for name, values in rows.items()}


def report(result):
    with open(os.path.join(result.output_dir, "run.json")) as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def warm_and_cold(tmp_path_factory):
    """A cached run over nine files; then a tenth file (10% new data), a warm rerun and a cold run."""
    from skewless.pipelines import run

    folder, cache, out = (tmp_path_factory.mktemp(name) for name in ("inputs", "cache", "out"))
    for index in range(FILES - 1):
        write_file(folder, index)
    first = run(config(folder, out / "first", cache))
    write_file(folder, FILES - 1)
    warm = run(config(folder, out / "warm", cache))
    cold = run(config(folder, out / "cold"))
    again = run(config(folder, out / "again", cache))
    return first, warm, cold, again


def test_only_new_files_are_analyzed(warm_and_cold):
    first, warm, _, again = warm_and_cold
    assert report(first)["analysis"]["datasets"] == FILES - 1 and report(first)["analysis"]["analyzed"] == FILES - 1
    assert report(warm)["analysis"]["datasets"] == FILES and report(warm)["analysis"]["analyzed"] == 1
    assert report(again)["analysis"]["analyzed"] == 0


def test_warm_rerun_equals_a_cold_run(warm_and_cold):
    _, warm, cold, again = warm_and_cold
    assert report(cold)["analysis"] == {"datasets": 1, "analyzed": 1, "cache_dir": None}
    for cached in (warm, again):
        ours, theirs = report(cached)["features"], report(cold)["features"]
        assert report(cached)["rows"] == report(cold)["rows"]
        for name in ("x", "city"):
            assert (ours[name]["count"], ours[name]["missing"]) == (theirs[name]["count"], theirs[name]["missing"])
        for key in ("mean", "std", "min", "max"):
            assert ours["x"][key] == pytest.approx(theirs["x"][key], rel=1e-9)
        assert ours["city"]["vocabulary_size"] == theirs["city"]["vocabulary_size"]
        assert ours["city"]["top_values"] == theirs["city"]["top_values"]
        cached_rows, cold_rows = train_rows(cached), train_rows(cold)
        np.testing.assert_array_equal(cached_rows["id"], cold_rows["id"])
        np.testing.assert_allclose(cached_rows["x"], cold_rows["x"], rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(cached_rows["city"], cold_rows["city"])


def test_dated_partitions_are_one_dataset_each(tmp_path):
    """cache_key: directory — a day's folder of files is one dataset; a new day is the only one analyzed."""
    from skewless.pipelines import run

    days = [tmp_path / "inputs" / "2026-11-20", tmp_path / "inputs" / "2026-11-21"]
    days[0].mkdir(parents=True)
    for index in range(3):
        write_file(days[0], index)

    def partitioned(output):
        cfg = config(tmp_path / "inputs", output, tmp_path / "cache")
        cfg["input"]["paths"] = [str(tmp_path / "inputs" / "*" / "part-*.csv")]
        return {**cfg, "cache_key": "directory"}

    first = run(partitioned(tmp_path / "first"))
    days[1].mkdir()
    write_file(days[1], 3)
    warm = run(partitioned(tmp_path / "warm"))
    assert report(first)["analysis"]["datasets"] == 1 and report(first)["analysis"]["analyzed"] == 1
    assert report(warm)["analysis"]["datasets"] == 2 and report(warm)["analysis"]["analyzed"] == 1
    assert report(warm)["rows"]["read"] == 4 * ROWS_PER_FILE
    x = np.concatenate([np.random.default_rng(i).normal(10 + i, 3, ROWS_PER_FILE).round(3) for i in range(4)])
    assert report(warm)["features"]["x"]["mean"] == pytest.approx(x.mean(), rel=1e-9)
    np.testing.assert_allclose(train_rows(warm)["x"], ((x - x.mean()) / x.std()), rtol=1e-4, atol=1e-4)


def test_a_cached_run_prints_only_its_own_lines(tmp_path):
    """tf.Transform's "Tables initialized inside a tf.function" warning came once per vocabulary on every --cache-dir
    run, from the trace that finds the datasets the cache lacks (issue 32): stderr holds only the progress lines."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    for index in range(3):
        write_file(folder, index)
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(config(folder, tmp_path / "out")))
    # TensorFlow's own C++ start-up lines are the CLI's to silence too: the variable the tests set is left out
    environment = {name: value for name, value in os.environ.items() if name != "TF_CPP_MIN_LOG_LEVEL"}
    for attempt in ("cold", "warm"):
        done = subprocess.run([sys.executable, "-m", "skewless", "run", str(path), "--cache-dir",
                               str(tmp_path / "cache"), "--overwrite"], capture_output=True, text=True,
                              env=environment, timeout=600)
        assert done.returncode == 0, done.stderr
        assert [line for line in done.stderr.splitlines() if not line.startswith("skewless run cached")] == [], attempt
        assert [line.split(":")[0] for line in done.stdout.splitlines()] == [str(tmp_path / "out"), "report"], attempt
