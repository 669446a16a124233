"""A killed run leaves nothing that looks complete, a rerun succeeds, and runs are byte-for-byte repeatable.

`skewless run` is SIGKILLed in a subprocess at three points, found by watching its files: early (the
output's staging directory is claimed), mid-pipeline (shards are being written) and late (work
units have finished, the run is being assembled). All runs write the same output path, since
tf.Transform bakes the temp paths under it into the graph.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import yaml

from example_job import example_config
from run_output import files_of

ROWS = 3000
POLL_SECONDS = 0.005


def config(folder) -> dict:
    return example_config(folder / "out", input={"format": "synthetic", "rows": ROWS, "seed": 5})


def start(folder) -> subprocess.Popen:
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump(config(folder), sort_keys=False))  # key order is meaningful (splits)
    return subprocess.Popen(
        [sys.executable, "-m", "skewless", "run", str(path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )


def finish(process: subprocess.Popen) -> None:
    _, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr.decode(errors="replace")[-2000:]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("atomic")


@pytest.fixture(scope="module")
def reference(folder):
    """The files of one complete run in a fresh process; the output is then removed for the next runs."""
    finish(start(folder))
    files = files_of(folder / "out")
    shutil.rmtree(folder / "out")
    return files


def staging_left(folder) -> list[str]:
    return sorted(name for name in os.listdir(folder) if ".staging" in name)


POINTS = {
    "early": lambda run: os.path.exists(os.path.join(run, "..", "owner")),
    "mid": lambda run: os.path.isdir(os.path.join(run, "data")) and os.listdir(os.path.join(run, "data")),
    "late": lambda run: os.path.isdir(os.path.join(run, "_parts")) and os.listdir(os.path.join(run, "_parts")),
}


@pytest.mark.parametrize("point", POINTS)
def test_killed_run_leaves_no_output_and_rerun_succeeds(folder, reference, point):
    from skewless.pipelines import run

    run_dir = str(folder / "out.staging" / "run")
    process = start(folder)
    deadline = time.time() + 600
    while not POINTS[point](run_dir):
        assert process.poll() is None, f"the run ended before the {point} point"
        assert time.time() < deadline
        time.sleep(POLL_SECONDS)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not os.path.exists(folder / "out")
    assert staging_left(folder) == ["out.staging"]  # what the killed run was writing, under its staging name

    result = run(config(folder))  # removes what the killed run left, then runs as usual
    assert staging_left(folder) == []
    assert result.rows["read"] == ROWS
    rerun = files_of(folder / "out")
    assert sorted(rerun) == sorted(reference)
    # byte-identical, saved_model.pb too, though this rerun traced the graph inside the test process (which
    # has traced other graphs) and the reference in a fresh one: TensorFlow's counters do not show
    assert [name for name in rerun if rerun[name] != reference[name]] == []
    shutil.rmtree(folder / "out")


def test_two_runs_write_byte_identical_shards_and_graph(folder, reference):
    """Shards, the SavedModel, vocabularies, variables, metadata and statistics are byte-identical between runs.

    (tf.Transform writes a function's nodes in an order that varies between runs; the job rewrites
    saved_model.pb canonically, see pipelines/analyze/canonical_graph.py, so this holds for the graph too.)
    """
    finish(start(folder))
    again = files_of(folder / "out")
    shutil.rmtree(folder / "out")
    assert sorted(again) == sorted(reference)
    assert [name for name in again if again[name] != reference[name]] == []
    assert "transform_graph/transform_fn/saved_model.pb" in again
    assert "statistics/Split-eval/FeatureStats.pb" in again  # merged in unit order: the same bytes too
    data = [name for name in again if name.startswith("data/")]
    assert len(data) == 4
